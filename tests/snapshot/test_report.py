"""The session report: content, determinism, path scrubbing, YAML form, report files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from pytest_harness_audit.audit.witness import Head
from pytest_harness_audit.readers.report import (
    HEAD_MARK,
    PathScrubber,
    SessionReport,
    load_report_head,
    load_report_text,
    merge_report_fields,
    report_path,
    split_report_file,
    workspace_label,
    write_report,
)
from pytest_harness_audit.readers.verdict import Verdict, VerdictReason
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social.errors import SendError


def play(harness: Harness) -> None:
    """A session touching every section: allowed, denied, warned, escalated, lifted."""
    harness.call("Read", file_path="README.md")
    harness.call("Read", file_path=".env")
    harness.call("Bash", command=f"ls {harness.root}/app")
    harness.call("WebFetch", url="https://collector.example.invalid/?k=1")
    harness.call("Read", file_path="README.md")
    harness.lift("reviewed by a human")
    harness.call("Bash", command=f"true {harness.root}/" + "x" * 120)


def make(base: Path, **options: object) -> Harness:
    return Harness.create(base, template="python-service", **options)  # type: ignore[arg-type]


def test_report_sections_and_lines(tmp_path: Path) -> None:
    harness = make(tmp_path)
    play(harness)
    data = harness.report().to_dict()
    assert data["policy"] == {"name": "safety", "hash": harness.policy.content_hash[:12]}
    assert data["workspace"] == "python-service"
    calls = data["calls"]
    assert [c["tool"] for c in calls] == ["Read", "Read", "Bash", "WebFetch", "Read", "Bash"]
    assert calls[1] == {
        "position": 1,
        "tool": "Read",
        "category": "file_read",
        "target": ".env",
        "decision": "deny",
        "rule": "deny-secret-files",
        "status": "blocked",
        "verdict": "FAIL",
    }
    assert calls[2]["target"] == "ls app"
    assert calls[2]["output"] == harness.records[3].output_hash[:12]  # type: ignore[index]
    assert calls[3]["verdict"] == "WARN"
    assert calls[4]["quarantine"] is True and calls[4]["status"] == "blocked"
    escalations = data["escalations"]
    assert [e["level"] for e in escalations] == ["notice", "quarantine"]
    assert escalations[0]["evidence"] == [1]
    assert escalations[1]["evidence"] == [1, 4]
    assert escalations[1]["verdict"] == "FAIL"
    assert data["lifts"] == [
        {
            "position": 7,
            "from": "quarantine",
            "scopes": ["session"],
            "reason": "reviewed by a human",
        }
    ]
    assert data["alerts"] == [{"position": 1, "tool": "Read", "alert": "credential_access"}]
    assert data["chain"] == {"valid": True, "records": 9}
    assert data["verdict"] == "FAIL"
    assert data["other_reasons"] == []


def test_rendered_yaml_is_the_data_one_line_per_record(tmp_path: Path) -> None:
    harness = make(tmp_path)
    play(harness)
    report = harness.report()
    text = report.render()
    assert yaml.safe_load(text) == report.to_dict()
    lines = text.splitlines()
    assert lines[0] == "# harness-audit session report"
    data = report.to_dict()
    record_lines = [line for line in lines if line.startswith("  - {position:")]
    sections = ("calls", "escalations", "lifts", "alerts")
    assert len(record_lines) == sum(len(data[key]) for key in sections) == 9 + 1
    assert str(report) == text


def test_two_sessions_in_different_directories_give_identical_reports(tmp_path: Path) -> None:
    short = make(tmp_path / "a")
    long = make(tmp_path / ("b" * 60) / "deeper")
    for harness in (short, long):
        play(harness)
    assert short.report().render() == long.report().render()
    assert short.report() == long.report()
    assert hash(short.report()) == hash(long.report())


def test_nothing_machine_specific_in_the_text(tmp_path: Path) -> None:
    harness = make(tmp_path)
    play(harness)
    text = harness.report().render()
    for needle in (str(tmp_path), harness.session_id, "audit:", "timestamp", "durationMs"):
        assert needle not in text
    for record in harness.records:
        assert record.record_id not in text


def test_long_targets_are_cut_after_scrubbing(tmp_path: Path) -> None:
    harness = make(tmp_path / ("d" * 40))
    harness.call("Bash", command=f"true {harness.root}/" + "x" * 120)
    target = harness.report().calls[0].target
    assert target == "true " + "x" * 75 + "…"


def test_changed_decision_changes_one_call_line(tmp_path: Path) -> None:
    def session(base: Path, decision: str) -> list[str]:
        policy = base / "policy.yaml"
        policy.parent.mkdir(parents=True)
        policy.write_text(
            "name: team\npreset: safety\nrules:\n"
            f"  - {{id: echo, name: Echo, priority: 0, decision: {decision}, "
            "match: {tools: [Bash], targetPatterns: ['echo **']}}\n"
        )
        harness = make(base, policy=str(policy))
        harness.call("Read", file_path=".env")
        harness.call("Bash", command="echo hello")
        return harness.report().render().splitlines()

    before = session(tmp_path / "one", "warn")
    after = session(tmp_path / "two", "deny")
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert len(before) == len(after)
    assert [a.split(":")[0] for a, _ in changed] == ["policy", "  - {position"]
    assert "decision: warn" in changed[1][0] and "decision: deny" in changed[1][1]


def test_equality_with_text_and_other_types(tmp_path: Path) -> None:
    harness = make(tmp_path)
    harness.call("Glob", pattern="*")
    report = harness.report()
    assert report == report.render()
    assert report != report.render() + "x"
    assert report.__eq__(42) is NotImplemented
    assert isinstance(report, SessionReport)


def test_output_hashes_can_be_left_out(tmp_path: Path) -> None:
    harness = make(tmp_path)
    harness.call("Bash", command="pwd")
    assert harness.report().calls[0].output is not None
    assert harness.report(output_hashes=False).calls[0].output is None
    assert "output:" not in harness.report(output_hashes=False).render()


def test_extra_fields_and_extra_verdict_rules(tmp_path: Path) -> None:
    def rules(harness: Harness, records: object) -> list[VerdictReason]:
        first = harness.records[0]
        return [
            VerdictReason(Verdict.WARN, "slow", f"took long in {harness.root}/app"),
            VerdictReason(Verdict.WARN, "first", "the first call", first.record_id),
        ]

    def fields(harness: Harness) -> dict[str, object]:
        return {"zeta": {"b": 1, "a": [str(harness.root / "x")]}, "model": "agent-v2"}

    harness = make(tmp_path, verdict_rules=rules, report_fields=fields)
    harness.call("Glob", pattern="*")
    data = harness.report().to_dict()
    assert data["verdict"] == "WARN"
    assert data["other_reasons"] == ["WARN: took long in app", "WARN: the first call (#0)"]
    assert data["extra"] == {"model": "agent-v2", "zeta": {"a": ["x"], "b": 1}}
    assert list(data["extra"]) == ["model", "zeta"]
    assert "extra:\n  model: agent-v2\n  zeta: {a: [x], b: 1}\n" in harness.report().render()


def test_invalid_chain_is_reported(tmp_path: Path) -> None:
    harness = make(tmp_path)
    harness.call("Glob", pattern="*")
    harness.call("Glob", pattern="*.md")
    lines = harness.chain.path.read_text().splitlines(keepends=True)
    harness.chain.path.write_text(lines[0].replace("Glob", "Grep") + lines[1])
    data = harness.report().to_dict()
    assert data["chain"]["valid"] is False
    assert data["chain"]["problem"].startswith("link_mismatch at record")
    assert data["verdict"] == "FAIL"
    assert data["other_reasons"][0].startswith("FAIL: audit chain invalid")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{root}", "."),
        ("ls {root}/app", "ls app"),
        ("cd {root} && ls", "cd . && ls"),
        ("cat {root}2/x", "cat <tmp>"),
        ("cp {storage}/audit/s.jsonl .", "cp <audit> ."),
        ("{tmp}/pytest-of-x/pytest-3/y z", "<tmp> z"),
        ("/tmpfoo/bar", "/tmpfoo/bar"),
        ("https://example.com/a", "https://example.com/a"),
    ],
)
def test_path_scrubber(tmp_path: Path, text: str, expected: str) -> None:
    import tempfile

    root = tmp_path / "workspace"
    storage = tmp_path / "audit"
    scrub = PathScrubber(root, storage=storage)
    filled = text.format(root=root, storage=storage, tmp=tempfile.gettempdir())
    assert scrub(filled) == expected


def test_workspace_label() -> None:
    assert workspace_label(None) == "empty"
    assert workspace_label("python-service") == "python-service"
    assert workspace_label("/some/where/my-template") == "my-template"


def test_report_files_round_trip(tmp_path: Path) -> None:
    harness = make(tmp_path)
    harness.call("Glob", pattern="*")
    storage = tmp_path / "kept"
    path = write_report(storage, harness.session_id, harness.report())
    assert path == storage / "reports" / f"{harness.session_id}.yaml"
    text = load_report_text(storage, harness.session_id)
    assert text is not None and split_report_file(text)[0] == harness.report().render()
    assert load_report_text(storage, "no-such-session") is None
    assert report_path(storage, "../escape").parent == storage / "reports"
    assert not list((storage / "reports").glob(".*.tmp"))


def test_report_file_carries_the_published_head_outside_the_document(tmp_path: Path) -> None:
    harness = make(tmp_path)
    harness.call("Glob", pattern="*")
    harness.call("Bash", command="rm -rf app")
    storage = tmp_path / "kept"
    head = harness.published_head()
    chain = harness.verify()
    assert head == Head(chain.record_count, chain.head) and head.count == 2
    assert harness.report().head == head  # the report knows it, its document does not show it
    write_report(storage, harness.session_id, harness.report())
    text = load_report_text(storage, harness.session_id)
    assert text is not None and text.startswith(harness.report().render())
    assert split_report_file(text) == (harness.report().render(), head)
    assert load_report_head(storage, harness.session_id) == head
    assert yaml.safe_load(text)["head"] == {"records": 2, "hash": chain.head}
    assert f"--head 2:{chain.head}" in text  # how to re-check it, on the mark line
    assert harness.report() != text  # the file is not the document
    # a head given to the writer wins; a report without one is the document alone
    other = Head(1, "a" * 64)
    write_report(storage, harness.session_id, harness.report(), head=other)
    assert load_report_head(storage, harness.session_id) == other
    write_report(storage, harness.session_id, replace(harness.report(), head=None))
    assert load_report_text(storage, harness.session_id) == harness.report().render()
    assert load_report_head(storage, harness.session_id) is None
    assert load_report_head(storage, "no-such-session") is None


@pytest.mark.parametrize(
    "tail",
    ["", "head: 3\n", "head: {records: true, hash: abc}\n", "head: {records: 1}\n", "- x\n"],
)
def test_a_report_file_without_a_readable_head_gives_none(tail: str) -> None:
    document = "# harness-audit session report\nverdict: PASS\nother_reasons: []\n"
    text = document + (f"{HEAD_MARK}\n{tail}" if tail else "")
    assert split_report_file(text) == (document, None)


def test_a_genesis_head_round_trips(tmp_path: Path) -> None:
    harness = make(tmp_path)
    write_report(tmp_path / "kept", harness.session_id, harness.report(), head=Head(0, "genesis"))
    assert load_report_head(tmp_path / "kept", harness.session_id) == Head(0, "genesis")


def test_a_stored_session_publishes_its_verified_head_only(tmp_path: Path) -> None:
    """A hook session read back from its store has no witness: its report carries the verified
    chain's head, and none once the chain fails."""
    from typing import cast

    from pytest_harness_audit.doors.hook_session import StoredSession
    from pytest_harness_audit.readers.report import build_report
    from pytest_harness_audit.readers.session_view import AuditedSession

    harness = make(tmp_path, session_id="stored")
    harness.call("Glob", pattern="*")
    harness.close()
    stored = StoredSession(harness.storage_dir, "stored", harness.policy, str(tmp_path))
    chain = harness.verify()
    report = build_report(cast("AuditedSession", stored))
    assert report.head == Head(1, chain.head)
    harness.chain.path.write_text(harness.chain.path.read_text().replace("Glob", "Grep"))
    assert build_report(cast("AuditedSession", stored)).head is None


def test_merge_report_fields_skips_empty_answers() -> None:
    assert merge_report_fields([None, {"a": 1}, {}, {"b": 2}]) == {"a": 1, "b": 2}


def test_message_sends_show_outcome_not_random_result_hashes(tmp_path: Path) -> None:
    texts = []
    for name in ("one", "two"):
        harness = Harness.create(
            tmp_path / name,
            template="python-service",
            agents=("alice", "bob", "carol"),
            policy="audit-only",
        )
        harness.send("group:bob,carol", "build is green")
        with pytest.raises(SendError, match="not a known agent"):
            harness.send("agent:nobody", "hi")
        texts.append(harness.report().render())
    assert texts[0] == texts[1]
    calls = yaml.safe_load(texts[0])["calls"]
    assert calls[0]["outcome"] == "sent" and calls[0]["firewall"] == "admit"
    assert "output" not in calls[0]
    assert calls[1]["target"] == "agent:nobody"
    assert (calls[1]["outcome"], calls[1]["refusal"]) == ("refused", "unknown-agent")
