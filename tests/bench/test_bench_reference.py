"""The benchmark table reads the reference's figures from a file and classes every difference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_harness_audit.bench import __main__ as bench_main
from pytest_harness_audit.bench import chain as chain_bench
from pytest_harness_audit.bench import floors, reference
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.policy import Policy

LONG = "echo " + "x" * 90 + " && rm -rf /"
# (tool, params, the reference's decision under safety, the class expected when we differ)
CALLS = [
    ("Read", {"file_path": "/srv/app/src/main.py"}, ("allow", None), None),
    ("Bash", {"command": LONG}, ("allow", None), "full-length matching"),
    ("Bash", {"command": "git push"}, ("allow", None), "shell reading"),
    ("Bash", {"command": "rm build/output.log"}, ("allow", None), "effects"),
    ("mcp__filesystem__read_file", {"path": "/srv/app/.env"}, ("allow", None), "MCP categories"),
    ("Read", {"file_path": "/srv/app/tools/prod.env"}, ("deny", "deny-secret-files"), None),
    ("Read", {"file_path": "/srv/app/.env"}, ("deny", "deny-secret-files"), None),
    ("Read", {"file_path": "/srv/app/README.md"}, ("warn", "made-up-rule"), "unclassified"),
]
POLICY_50 = {
    "defaultPolicy": "allow",
    "enforce": True,
    "rules": [
        {
            "id": "deny-env-write",
            "name": "env",
            "priority": 1,
            "decision": "deny",
            "match": {"categories": ["file_write"], "targetPatterns": ["**/.env"]},
        }
    ],
}
CALLS_50 = [
    ("Write", {"file_path": "/srv/app/prod.env", "content": "x"}, ("deny", "deny-env-write")),
    ("Write", {"file_path": "/srv/app/.env", "content": "x"}, ("deny", "deny-env-write")),
]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    lines = [{"tool": t, "params": p} for t, p, *_ in CALLS]
    lines += [{"tool": t, "params": p} for t, p, _ in CALLS_50]
    (tmp_path / "calls.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (tmp_path / "policy-50.json").write_text(json.dumps(POLICY_50))
    ref = tmp_path / "reference"
    ref.mkdir()
    safety = [{"i": i, "decision": d, "rule": r} for i, (_, _, (d, r), _) in enumerate(CALLS)] + [
        {"i": len(CALLS) + i, "decision": "allow", "rule": None} for i in range(len(CALLS_50))
    ]
    fifty = [{"i": i, "decision": "allow", "rule": None} for i in range(len(CALLS))] + [
        {"i": len(CALLS) + i, "decision": d, "rule": r} for i, (_, _, (d, r)) in enumerate(CALLS_50)
    ]
    (ref / "decisions-safety.jsonl").write_text("".join(json.dumps(x) + "\n" for x in safety))
    (ref / "decisions-50.jsonl").write_text("".join(json.dumps(x) + "\n" for x in fifty))
    timings = {
        "engine": "synthetic engine",
        "decisions_per_s": {"safety": 123456, "policy-50": 65432},
        "append_records_per_s": 1111,
        "verify_records_per_s": 2222,
    }
    (ref / "timings.json").write_text(json.dumps(timings))
    return tmp_path


def test_each_difference_gets_its_class(corpus):
    policy = Policy.preset("safety")
    for tool, params, expected, kind in CALLS:
        ours = policy.evaluate(tool, params)
        if (ours.decision, ours.rule_id) == expected:
            assert kind is None, (tool, params)
            continue
        assert reference.classify(policy, tool, params, ours, expected) == kind, (tool, params)


def test_a_difference_the_reference_rules_explain_is_a_preset_rule():
    policy = Policy.preset("safety")
    reference_rules = Policy.load(reference.REFERENCE_SAFETY)
    assert [r.id for r in reference_rules.rules] == [
        "deny-destructive-commands",
        "deny-secret-files",
        "deny-persona-write",
        "warn-network",
    ]
    # a credential file the reference's four globs miss: same reading, a wider rule
    ssh = ("Read", {"file_path": "/home/dev/.ssh/config"})
    ours = policy.evaluate(*ssh)
    assert ours.decision == "deny"
    assert reference.classify(policy, *ssh, ours, ("allow", None), reference_rules) == (
        "preset rules"
    )
    # a command read otherwise is still a reading difference, whatever the rules
    push = ("Bash", {"command": "git push"})
    ours = policy.evaluate(*push)
    kind = reference.classify(policy, *push, ours, ("allow", None), reference_rules)
    assert kind == "shell reading"


def test_segment_aware_globs_class_the_slash_swallowing_difference(corpus):
    policy = Policy.load(corpus / "policy-50.json")
    calls = [(t, p) for t, p, _ in CALLS_50]
    decisions = {i: d for i, (_, _, d) in enumerate(CALLS_50)}
    result = reference.compare("policy-50", policy, calls, decisions)
    # prod.env: `**/.env` swallows its slash in the reference; here `**/` is whole directories.
    assert result.counts == {"segment-aware **/": 1}
    assert "prod.env" in result.examples["segment-aware **/"][0]


def test_globs_of_the_reference_and_of_this_project():
    assert reference.reference_glob("**/.env").fullmatch("/p/prod.env")
    assert not reference.segment_glob("**/.env").fullmatch("/p/prod.env")
    for target in (".env", "/p/.env", "/a/b/.env"):
        assert reference.segment_glob("**/.env").fullmatch(target)
        assert reference.reference_glob("**/.env").fullmatch(target)
    assert not reference.reference_glob("*.py").fullmatch("/src/main.py")


def test_vs_reference_prints_figures_from_the_file_and_the_difference_table(corpus, capsys):
    ref = corpus / "reference"
    assert bench_main.main(["--vs-reference", str(ref), "--only", "policy", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "reference 123,456" in out and "reference 65,432" in out
    assert "synthetic engine" in out
    assert f"{len(CALLS) + len(CALLS_50)} of {len(CALLS) + len(CALLS_50)} calls compared" in out
    safety = out[out.index("reference, safety") : out.index("reference, policy-50")]
    # `rm build/output.log` and the two `.env` writes: the reference's own four rules, read by
    # this engine, allow them too, so what decides is a rule this project's safety adds
    assert f"  {'preset rules':<22} {3:>7,}" in safety
    for kind in ("full-length matching", "shell reading", "MCP categories"):
        assert f"  {kind:<22} {1:>7,}" in safety
    assert f"  {'effects':<22} {0:>7,}" in safety
    assert "unclassified: #7 Read" in safety  # examples of what no class explains
    assert f"  {'segment-aware **/':<22} {1:>7,}" in out[out.index("reference, policy-50") :]


def test_reference_figures_follow_the_directory_given(corpus, tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    (other / "timings.json").write_text(json.dumps({"decisions_per_s": {"safety": 777}}))
    args = ["--corpus", str(corpus), "--reference", str(other), "--only", "policy", "--quick"]
    assert bench_main.main(args) == 0
    out = capsys.readouterr().out
    assert "reference 777 " in out and "no reference figure" in out  # policy-50 has none


def test_bad_reference_files_give_one_clear_line(corpus, capsys):
    (corpus / "reference" / "timings.json").write_text('{"append_records_per_s": "fast"}')
    args = ["--vs-reference", str(corpus / "reference"), "--only", "policy", "--quick"]
    assert bench_main.main(args) == 2
    err = capsys.readouterr().err
    assert "timings.json: field 'append_records_per_s' must be a positive number" in err
    (corpus / "reference" / "decisions-50.jsonl").write_text('{"i": 0, "decision": "maybe"}\n')
    with pytest.raises(UsageError, match=r"decisions-50.jsonl:1: field 'decision' is 'maybe'"):
        reference.load_decisions(corpus / "reference" / "decisions-50.jsonl")


def test_no_reference_figures_in_the_code():
    source = (
        Path(bench_main.__file__).read_text()
        + Path(chain_bench.__file__).read_text()
        + Path(floors.__file__).read_text()
    )
    for figure in ("554", "109,000", "108,660", "94,000", "94_000", "140,921"):
        assert figure not in source


def test_syscall_floor_writes_the_same_bytes(tmp_path):
    lines = [b'{"a":1}\n', b'{"b":22}\n']
    for locked, hashed in ((False, False), (True, False), (True, True)):
        timing = floors.syscall_floor(lines, 10, tmp_path / "floor", locked=locked, hashed=hashed)
        assert 0 < timing.wall < float("inf")
    assert not any((tmp_path / "floor").iterdir())


def test_the_decision_floor_runs_every_call(corpus):
    calls = [(t, p) for t, p, *_ in CALLS] * 50
    assert 0 < floors.decision_floor(calls, rounds=2) < float("inf")
    assert floors.decision_floor([], rounds=1) == 0


def test_the_table_prints_the_floor_and_each_policy_against_it(corpus, capsys):
    assert bench_main.main(["--corpus", str(corpus), "--only", "policy", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "policy floor: one scan per call" in out
    assert out.count("x the floor") == 2  # safety and policy-50
