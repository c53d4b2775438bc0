"""Every fenced code block of README.md and docs/*.md runs (or loads) and does what it says.

One test per block, named by its README line and first words. Python blocks that define
``test_*`` functions run as test files through ``pytester``; other Python blocks run with
``exec`` in a temporary directory; YAML blocks load as policies, scenarios or plain YAML;
console transcripts (``$ harness-audit …``) run through ``cli.main`` and their output is
compared by shape (line count, first words); the hook configuration names real subcommands.
A block no handler recognises fails, so a new snippet gets a test or a justified
``<!-- readme: skip (reason) -->`` marker.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from readme_snippets import (
    Block,
    assert_same_shape,
    console_steps,
    find_block,
    normalise,
    readme_blocks,
)

from pytest_harness_audit import Policy
from pytest_harness_audit.cli import build_parser, main
from pytest_harness_audit.doors.hook_install import EVENTS
from pytest_harness_audit.doors.scenarios import parse_scenario
from pytest_harness_audit.session.harness import Harness

pytest_plugins = ["pytester"]

RUN_ARGS = ("-p", "no:randomly", "-p", "no:cacheprovider")


# -- helpers ------------------------------------------------------------------------------------
def fnmatch_pattern(line: str) -> str:
    """An fnmatch pattern for a documented output line: hex ids and runs of spaces are free."""
    escaped = re.sub(r"[\[\]?*]", lambda m: "[" + m.group(0) + "]", line.strip())
    escaped = re.sub(r"\b[0-9a-f]{8,64}\b", "*", escaped)
    return "*" + re.sub(r"\s+", "*", escaped) + "*"


def run_cli(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, list[str]]:
    """Run a ``harness-audit …`` command line in-process: exit code and stdout lines."""
    argv = shlex.split(command, comments=True)
    assert argv[0] == "harness-audit", command
    capsys.readouterr()
    try:
        code = main(argv[1:])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, _err = capsys.readouterr()
    return code, out.splitlines()


def new_harness(tmp_path: Path, storage: Path, session_id: str, **options: Any) -> Harness:
    return Harness.create(
        tmp_path / session_id,
        template=options.pop("template", "python-service"),
        storage_dir=storage,
        policy=options.pop("policy", "safety"),
        session_id=session_id,
        **options,
    )


def demo_chain(tmp_path: Path, storage: Path) -> None:
    """The README's session ``demo``: a read, a blocked ``rm -rf`` and a failed fetch."""
    harness = new_harness(tmp_path, storage, "demo")
    harness.call("Read", file_path="app/__init__.py")
    harness.call("Bash", command="rm -rf build")
    harness.call("WebFetch", url="https://example.com")
    harness.close()


def team_policy_text() -> str:
    """The Policies section's ``team-policy.yaml``, its ``immune: {…}`` filled in from the
    Immune escalation section."""
    policy = find_block("yaml", "name: team-policy").text
    immune = find_block("yaml", "thresholds: {notice").text
    assert "immune: {…}" in policy
    return policy.replace(re.search(r"immune: \{…\}.*", policy).group(0), immune.rstrip())


def policy_fragment(text: str) -> Policy:
    """A README policy fragment (a ``firewall:`` or ``immune:`` section) in a whole policy."""
    data = yaml.safe_load(text)
    return Policy.from_dict({"name": "readme", "defaultPolicy": "allow", **data})


TEAM_SNAPSHOT_POLICY = """\
name: team
preset: safety
rules:
  - id: echo-rule
    name: Echo
    priority: 1
    decision: {decision}
    match: {{tools: [Bash], targetPatterns: ["echo *"]}}
"""


def run_test_file(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_agent=source)
    return pytester.runpytest(*RUN_ARGS, *args)


def with_pytest_import(text: str) -> str:
    return text if "import pytest" in text else "import pytest\n\n" + text


# -- handlers: one per kind of block ----------------------------------------------------------
def check_intro_test(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    """A test with its markers: passes as written (its expected verdict is its marker's)."""
    result = run_test_file(pytester, block.text)
    result.assert_outcomes(passed=1)


def check_tutorial_test(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    """Tutorial steps 2–3: the test as written fails with the documented message."""
    result = run_test_file(pytester, block.text, "--harness-audit")
    result.assert_outcomes(failed=1)
    documented = find_block("text", "AssertionError: session test_agent_tidies_up").text
    result.stdout.fnmatch_lines([fnmatch_pattern(ln) for ln in documented.splitlines()])


def tutorial_fixed_test() -> str:
    text = find_block("python", "def test_agent_tidies_up").text
    assert 'expect_verdict("PASS")' in text
    return text.replace(
        '@pytest.mark.expect_verdict("PASS")',
        '@pytest.mark.expect_verdict("FAIL")\n'
        '@pytest.mark.expect_denied(tool="Read", target="**/.env")',
    )


def check_tutorial_failure(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    """Step 3's failure message is what the tutorial's test prints."""
    result = run_test_file(pytester, find_block("python", "def test_agent_tidies_up").text)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([fnmatch_pattern(ln) for ln in block.text.splitlines()])


def check_tutorial_summary(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    """Step 4: with the markers the tutorial names, the test passes and prints the summary."""
    result = run_test_file(pytester, tutorial_fixed_test(), "--harness-audit")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([fnmatch_pattern(ln) for ln in block.text.splitlines()])


def check_harness_reference(block: Block, tmp_path: Path, **_: Any) -> None:
    """The `Harness` listing: every statement runs on a real session. It is a reference, not
    one story, so an ``assert_*`` call may fail its assertion; nothing may fail otherwise."""
    # its scenario, destructive-cleanup, runs on the node-package workspace
    harness = new_harness(tmp_path, tmp_path / "audit", "reference", template="node-package")
    namespace: dict[str, Any] = {"harness": harness}
    for statement in ast.parse(block.text).body:
        source = ast.get_source_segment(block.text, statement) or ""
        code = compile(ast.Module([statement], []), block.where, "exec")
        try:
            exec(code, namespace)
        except AssertionError:
            if "harness.assert_" not in source:
                raise
    harness.close()


def check_scenario_yaml(block: Block, **_: Any) -> None:
    scenario = parse_scenario(block.text, source=block.where)
    assert scenario.name and scenario.steps


def check_hook_functions(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    """The hook implementations, as a conftest.py, take effect in a harness test."""
    pytester.makeconftest(block.text)
    pytester.makepyfile(
        test_hooks="""
import pytest

@pytest.mark.expect_verdict("WARN")
def test_hooks(harness):
    harness.register_tool("db_put", lambda params: "ok")
    harness.call("db_put", file_path="table.txt")
    assert harness.records[-1].category == "file_write"
    for _ in range(100):
        harness.call("Glob", pattern="*.py")
    assert [reason.code for reason in harness.verdict_reasons] == ["long-session"]
    assert harness.report().extra == {"model": "my-agent-v2"}
"""
    )
    result = pytester.runpytest(*RUN_ARGS)
    result.assert_outcomes(passed=1)


def check_team_policy_yaml(block: Block, **_: Any) -> None:
    policy = Policy.from_dict(yaml.safe_load(team_policy_text()), name="team-policy")
    assert policy.evaluate("Bash", {"command": "rm -rf /"}).rule_id == "deny-destructive-commands"


def check_policy_python(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **_: Any):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "team-policy.yaml").write_text(team_policy_text())
    namespace: dict[str, Any] = {}
    exec(compile(block.text, block.where, "exec"), namespace)
    assert namespace["evaluation"].decision == "deny"


def check_verify_python(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **_: Any):
    monkeypatch.chdir(tmp_path)
    demo_chain(tmp_path, tmp_path / ".harness-audit")
    namespace: dict[str, Any] = {}
    exec(compile(block.text, block.where, "exec"), namespace)
    assert namespace["report"].valid


def check_scrub_python(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **_: Any):
    """The draft hook runs before the record is written: the chain file never holds the token."""
    monkeypatch.chdir(tmp_path)
    exec(compile(block.text, block.where, "exec"), {})
    written = b"".join(path.read_bytes() for path in tmp_path.rglob("*.jsonl"))
    assert b'"tool":"Deploy"' in written.replace(b" ", b"") and b"t0k3n" not in written


RULE_ORDER_POLICY = """\
preset: safety
rules:
  - {id: warn-reads, name: Reads, priority: 0, decision: warn, match: {categories: [file_read]}}
"""


def check_rule_order_lint(
    block: Block,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    **_: Any,
) -> None:
    """The documented warning is what `policy status` prints for a warn rule on every read
    ranked before safety's deny of credential files."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "team-policy.yaml").write_text(RULE_ORDER_POLICY, encoding="utf-8")
    capsys.readouterr()
    assert main(["policy", "status", "--policy", "team-policy.yaml"]) == 0
    assert capsys.readouterr().err.splitlines() == block.text.strip().splitlines()


def check_plain_yaml(block: Block, **_: Any) -> None:
    assert isinstance(yaml.safe_load(block.text), dict)


def check_policy_fragment(block: Block, **_: Any) -> None:
    policy_fragment(block.text)


def check_console(
    block: Block,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    **_: Any,
) -> None:
    """A ``$ harness-audit …`` transcript: each command exits as documented, output in shape."""
    monkeypatch.chdir(tmp_path)
    storage = tmp_path / "storage"
    monkeypatch.setenv("HARNESS_AUDIT_DIR", str(storage))
    expected_codes: dict[str, int] = {}
    if "audit verify demo" in block.text:
        # "after an edit to record 1": the chain of `demo` with its second line changed.
        demo_chain(tmp_path, storage)
        chain = storage / "audit" / "demo.jsonl"
        lines = chain.read_bytes().splitlines(keepends=True)
        lines[1] = lines[1].replace(b"rm -rf build", b"rm -rf bui1d", 1)
        chain.write_bytes(b"".join(lines))
        expected_codes["audit verify demo"] = 1
    if "harness-audit view" in block.text:
        demo_chain(tmp_path, storage)
    if "audit prune --keep 3" in block.text:
        old_run(tmp_path, storage)
    if "immune status SESSION" in block.text:
        harness = new_harness(tmp_path, storage, "SESSION")
        for _ in range(7):
            harness.call("Bash", command="cat missing.txt")
        assert harness.immune_level == "quarantine", harness.escalations
        harness.close()
    steps = console_steps(block.text)
    assert steps
    for command, documented in steps:
        code, output = run_cli(capsys, command)
        want = next((c for k, c in expected_codes.items() if k in command), 0)
        assert code == want, (command, output)
        assert_same_shape(documented, output)


def old_run(tmp_path: Path, storage: Path) -> None:
    """Beside ``demo``: two lone sessions and an old run of two sessions (a day old)."""
    from pytest_harness_audit.audit.prune import record_run

    old = ("test_old_run_a-1a2b3c4d", "test_old_run_b-5e6f7a8b")
    for name in (*old, "lone-1", "lone-2"):
        new_harness(tmp_path, storage, name).close()
    day_ago = time.time() - 86400
    for path in [record_run(storage, old), *storage.rglob("test_old_run_*")]:
        assert path is not None
        os.utime(path, (day_ago, day_ago))


def check_snapshot_tests(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    """The snapshot tests pass once their snapshots are written, and the first one keeps the
    documented report (up to the policy's hash: the README does not show policy.yaml)."""
    pytester.makefile(".yaml", policy=TEAM_SNAPSHOT_POLICY.format(decision="warn"))
    source = with_pytest_import(block.text)
    run_test_file(pytester, source, "--snapshot-update").assert_outcomes(passed=2)
    run_test_file(pytester, source).assert_outcomes(passed=2)
    kept = pytester.path / "__snapshots__" / "test_agent" / "test_agent.audit.yaml"
    documented = find_block("yaml", "# harness-audit session report").text
    assert snapshot_without_policy_hash(kept.read_text()) == snapshot_without_policy_hash(
        documented
    )


def snapshot_without_policy_hash(text: str) -> Any:
    data = yaml.safe_load(text)
    data["policy"].pop("hash")
    return data


_REVIEW: dict[str, tuple[list[str], list[str]]] = {}


def review_flow(pytester: pytest.Pytester) -> tuple[list[str], list[str]]:
    """The review workflow, run once for both of its blocks: snapshots written with
    ``echo-rule`` a warn, the rule turned into a deny (the run's output), ``--snapshot-update``
    (the diff of the snapshot file)."""
    if "review" in _REVIEW:
        return _REVIEW["review"]
    pytester.makefile(".yaml", policy=TEAM_SNAPSHOT_POLICY.format(decision="warn"))
    source = with_pytest_import(find_block("python", "def test_marked").text)
    run_test_file(pytester, source, "--snapshot-update").assert_outcomes(passed=2)
    kept = pytester.path / "__snapshots__" / "test_agent" / "test_agent.audit.yaml"
    before = kept.read_text()
    pytester.makefile(".yaml", policy=TEAM_SNAPSHOT_POLICY.format(decision="deny"))
    failed = run_test_file(pytester, source, "-vv")
    failed.assert_outcomes(passed=1, failed=1)
    run_test_file(pytester, source, "--snapshot-update").assert_outcomes(passed=2)
    diff = difflib.unified_diff(before.splitlines(), kept.read_text().splitlines(), lineterm="")
    _REVIEW["review"] = (failed.outlines, list(diff)[2:])
    return _REVIEW["review"]


def check_snapshot_failure(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    """Turning ``echo-rule`` into a deny fails the snapshot test with the documented changes."""
    output, _diff = review_flow(pytester)
    changed = [ln for ln in block.text.splitlines() if re.match(r"E\s+[-+]\s", ln)]
    changed = [ln for ln in changed if "hash:" not in ln]  # the README does not show policy.yaml
    pytest.LineMatcher(output).fnmatch_lines([fnmatch_pattern(ln) for ln in changed])


def check_snapshot_diff(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    """``--snapshot-update`` rewrites the snapshot file with exactly the documented diff."""
    _output, diff = review_flow(pytester)
    assert [normalise(ln) for ln in diff] == [normalise(ln) for ln in block.text.splitlines()]


def check_social_test(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    run_test_file(pytester, with_pytest_import(block.text)).assert_outcomes(passed=1)


PYDANTIC_MODEL = '''
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel


def _respond(messages, info):
    """The agent reads .env, then answers with what came back."""
    returned = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if not returned:
        return ModelResponse(parts=[ToolCallPart("read_file", {"path": ".env"})])
    return ModelResponse(parts=[TextPart(str(returned[0].content))])


my_model = FunctionModel(_respond)
'''


def check_pydantic_ai_test(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    """The function-tool example, with ``my_model`` an offline model that asks for ``.env``."""
    pytest.importorskip("pydantic_ai")
    source = with_pytest_import(block.text)
    source = source.replace("\n\n@pytest", "\n" + PYDANTIC_MODEL + "\n\n@pytest", 1)
    run_test_file(pytester, source).assert_outcomes(passed=1)


def check_hook_config(block: Block, **_: Any) -> None:
    """Each hook command is a ``harness-audit`` command line the CLI accepts."""
    config = json.loads(block.text)
    parser = build_parser()
    commands = [
        hook["command"]
        for matchers in config["hooks"].values()
        for matcher in matchers
        for hook in matcher["hooks"]
    ]
    assert len(commands) == len(EVENTS)  # one entry per event `hook install` writes
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "harness-audit", command
        try:
            args = parser.parse_args(argv[1:])
        except SystemExit:
            pytest.fail(f"the CLI refuses the hook command {command!r}")
        assert args.group == "hook" and callable(args.func), command


def check_proxy_command(block: Block, **_: Any) -> None:
    """The proxy command line parses (it starts a server, so it is not run); ``[…]`` are
    optional arguments and are left out."""
    text = re.sub(r"\[[^\]]*\]", "", block.text.replace("\\\n", " "))
    argv = shlex.split(text)
    assert argv[0] == "harness-audit"
    args = build_parser().parse_args(argv[1:])
    assert args.group == "proxy"


Handler = Callable[..., None]


def check_approvals_test(block: Block, pytester: pytest.Pytester, **_: Any) -> None:
    """The approvals example passes, audited, with the verdicts it states."""
    run_test_file(pytester, block.text, "--harness-audit").assert_outcomes(passed=2)


# (language, text the block contains, handler); the first match wins.
HANDLERS: list[tuple[str, str, Handler]] = [
    ("python", "@pytest.mark.harness_approvals", check_approvals_test),
    ("python", "def test_agent_tidies_up", check_tutorial_test),
    ("python", 'harness.run_script("exfiltrate-secrets")', check_intro_test),
    ("python", "result = harness.call(", check_harness_reference),
    ("python", "def pytest_harness_audit_classify_tool", check_hook_functions),
    ("python", "Policy.load(", check_policy_python),
    ("python", "verify_chain(", check_verify_python),
    ("python", "chain.builder.scrub", check_scrub_python),
    ("python", "audit_snapshot", check_snapshot_tests),
    ("python", "harness_agents", check_social_test),
    ("python", "from pydantic_ai import Agent", check_pydantic_ai_test),
    ("text", "AssertionError: session test_agent_tidies_up", check_tutorial_failure),
    ("text", "harness audit ===", check_tutorial_summary),
    ("text", "assert [+ received] == [- snapshot]", check_snapshot_failure),
    ("text", "$ harness-audit ", check_console),
    ("text", "harness-audit: warning: ", check_rule_order_lint),
    ("diff", "", check_snapshot_diff),
    ("yaml", "steps:", check_scenario_yaml),
    ("yaml", "name: team-policy", check_team_policy_yaml),
    ("yaml", "# harness-audit session report", check_plain_yaml),
    ("yaml", "firewall:", check_policy_fragment),
    ("yaml", "immune:", check_policy_fragment),
    ("json", '"hooks"', check_hook_config),
    ("bash", "harness-audit --storage .harness-audit proxy", check_proxy_command),
]


def handler_for(block: Block) -> Handler | None:
    return next((h for lang, key, h in HANDLERS if lang == block.lang and key in block.text), None)


BLOCKS = readme_blocks()


def test_readme_has_blocks() -> None:
    assert len(BLOCKS) >= 20
    assert [b.id for b in BLOCKS if b.skip is None and handler_for(b) is None] == []
    # skips are for blocks that cannot run in a test (installs, real agents, long runs)
    assert len([b for b in BLOCKS if b.skip is not None]) <= 5


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_readme_block(
    block: Block,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if block.skip is not None:
        pytest.skip(f"{block.where}: {block.skip}")
    handler = handler_for(block)
    assert handler is not None, f"{block.where}: no test handles this block"
    kwargs: dict[str, Any] = {"tmp_path": tmp_path, "monkeypatch": monkeypatch, "capsys": capsys}
    if "pytester" in handler.__code__.co_varnames[: handler.__code__.co_argcount]:
        kwargs["pytester"] = request.getfixturevalue("pytester")
    handler(block, **kwargs)
