"""web4-governance spec sentences of ``auditLevel`` and ``showR6Status``, one test each.

Reference: "`auditLevel` minimal|standard|verbose (default standard; only verbose changes
behaviour = extra logs)" — verbose "logs every R6 to the console"; dry-run denials log
"`[web4] Policy DENY (dry-run): ...`"; `showR6Status` — "Show R6 chain status in session
output".
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.console import RecordConsole, consoles, record_line, status_line
from pytest_harness_audit.policy import Policy

STATUS = re.compile(r"^R6 chain: (\d+) records?, valid, head [0-9a-f]{8}$")


def config(tmp_path: Path, **section: Any) -> Path:
    path = tmp_path / "web4.json"
    path.write_text(json.dumps({"plugins": {"web4-governance": section}}), encoding="utf-8")
    return path


def record(decision: str, *, enforced: bool = True, status: str = "success") -> dict[str, Any]:
    constraints = [f"policy:{decision}", "rule:r1"]
    if not enforced:
        constraints.append("enforced:false")
    return {
        "recordId": "audit:0badc0de",
        "reason": "flagged\nby rule",
        "request": {"toolName": "Bash", "target": "curl http://x"},
        "rules": {"auditLevel": "standard", "constraints": constraints},
        "result": {"status": status},
    }


# -- one line per record ------------------------------------------------------------------------


def test_verbose_prints_each_r6_record_as_one_line() -> None:
    line = record_line(record("allow"), verbose=True)
    assert line == "[web4] R6 audit:0badc0de Bash curl http://x: allow, success"
    blocked = record_line(record("deny", status="blocked"), verbose=True)
    assert blocked == "[web4] R6 audit:0badc0de Bash curl http://x: deny, blocked"


@pytest.mark.parametrize("verbose", [False, True])
def test_warns_and_dry_run_denies_print_one_line_at_every_level(verbose: bool) -> None:
    assert record_line(record("warn"), verbose=verbose) == (
        "[web4] Policy WARN: Bash curl http://x: flagged\\nby rule (audit:0badc0de)"
    )
    assert record_line(record("deny", enforced=False), verbose=verbose) == (
        "[web4] Policy DENY (dry-run): Bash curl http://x: flagged\\nby rule (audit:0badc0de)"
    )


def test_below_verbose_an_allowed_or_enforced_record_prints_nothing() -> None:
    assert record_line(record("allow"), verbose=False) is None
    assert record_line(record("deny", status="blocked"), verbose=False) is None


@pytest.mark.parametrize(
    ("level", "lines"),
    [("minimal", 2), ("standard", 2), ("verbose", 3)],
)
def test_a_door_gate_prints_by_the_policy_audit_level(
    tmp_path: Path, level: str, lines: int
) -> None:
    policy = Policy.from_dict({"preset": "audit-only", "auditLevel": level})
    stream = io.StringIO()
    gate = Gate.open(
        storage_dir=tmp_path / "store",
        session_id="s1",
        policy=policy,
        root=str(tmp_path),
    )
    gate.observers.extend(consoles(stream, policy.audit_level))  # as the doors do
    from pytest_harness_audit.gate import Outcome

    for params in (
        {"command": "ls"},  # allow
        {"command": "curl http://example.com"},  # warn
        {"command": "rm -rf build"},  # deny, not enforced
    ):
        gate.run("Bash", params, lambda _d: Outcome("success", "ok", None))
    gate.chain.close()
    printed = stream.getvalue().splitlines()
    assert len(printed) == lines
    # a minimal record keeps no target: its line names the tool only
    assert sum(line.startswith("[web4] Policy WARN: Bash") for line in printed) == 1
    assert sum(line.startswith("[web4] Policy DENY (dry-run): Bash") for line in printed) == 1
    assert all(line.startswith("[web4] ") for line in printed)


def test_no_stream_no_console() -> None:
    assert consoles(None, "verbose") == []


def test_a_broken_stderr_never_fails_the_call() -> None:
    stream = io.StringIO()
    stream.close()
    RecordConsole(stream, "verbose")(record("allow"))


def test_a_sessions_record_lines_cover_its_recording_proxy(tmp_path: Path) -> None:
    from pytest_harness_audit.session.harness import Harness

    harness = Harness.create(tmp_path / "h")
    try:
        console = RecordConsole(io.StringIO(), "verbose")
        harness.gate.observers.append(console)
        proxy = harness.start_proxy()
        assert console in proxy.gate.observers
    finally:
        harness.close()


# -- the chain status line ----------------------------------------------------------------------


def test_the_status_line_names_records_validity_and_head(tmp_path: Path) -> None:
    gate = Gate.open(
        storage_dir=tmp_path / "store", session_id="s1", policy=Policy.preset("safety")
    )
    from pytest_harness_audit.gate import Outcome

    gate.run("Read", {"file_path": "a.txt"}, lambda _d: Outcome("success", "x", None))
    gate.chain.close()
    line = status_line(tmp_path / "store", "s1")
    assert STATUS.match(line), line
    assert line.startswith("R6 chain: 1 record, valid, head ")
    chain = next((tmp_path / "store").rglob("s1.jsonl"))
    chain.write_text(chain.read_text().replace("a.txt", "b.txt"))
    assert "INVALID" in status_line(tmp_path / "store", "s1")


# -- the doors ----------------------------------------------------------------------------------


def _hook(tmp_path: Path, event: str, payload: dict[str, Any], policy: Path) -> tuple[int, str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_harness_audit",
            "--storage",
            str(tmp_path / "store"),
            "hook",
            event,
            "--policy",
            str(policy),
        ],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stderr


def _bash(tmp_path: Path, command: str) -> dict[str, Any]:
    return {
        "session_id": "w4-console",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "t1",
        "cwd": str(tmp_path),
    }


@pytest.mark.slow
def test_the_hook_door_prints_r6_lines_at_verbose(tmp_path: Path) -> None:
    policy = config(tmp_path, auditLevel="verbose", policy={"preset": "safety"})
    code, err = _hook(tmp_path, "pre", _bash(tmp_path, "rm -rf /"), policy)
    assert code == 0
    lines = [line for line in err.splitlines() if line.startswith("[web4]")]
    assert len(lines) == 1 and re.match(
        r"\[web4\] R6 audit:\w+ Bash rm -rf /: deny, blocked", lines[0]
    )


@pytest.mark.slow
def test_the_hook_door_prints_a_dry_run_deny_at_standard(tmp_path: Path) -> None:
    """The host ran the call (a dry run does not block it): its record, written at post, is
    the one line."""
    policy = config(tmp_path, policy={"preset": "audit-only"})
    pre = _bash(tmp_path, "rm -rf build")
    code, err = _hook(tmp_path, "pre", pre, policy)
    assert (code, err) == (0, "")
    post = {**pre, "hook_event_name": "PostToolUse", "tool_response": {"stdout": ""}}
    code, err = _hook(tmp_path, "post", post, policy)
    assert code == 0
    lines = [line for line in err.splitlines() if line.startswith("[web4]")]
    assert len(lines) == 1, err
    assert lines[0].startswith("[web4] Policy DENY (dry-run): Bash rm -rf build: ")


@pytest.mark.slow
def test_the_hook_door_session_end_shows_the_chain_status(tmp_path: Path) -> None:
    policy = config(tmp_path, showR6Status=True, policy={"preset": "safety"})
    start = {"session_id": "w4-console", "hook_event_name": "SessionStart", "cwd": str(tmp_path)}
    end = {**start, "hook_event_name": "SessionEnd", "reason": "exit"}
    assert _hook(tmp_path, "session-start", {**start, "source": "startup"}, policy)[0] == 0
    code, err = _hook(tmp_path, "session-end", end, policy)
    assert code == 0, err
    status = [line for line in err.splitlines() if line.startswith("R6 chain:")]
    assert len(status) == 1 and STATUS.match(status[0]), err
    (tmp_path / "quiet").mkdir()
    quiet = config(tmp_path / "quiet", policy={})
    code, err = _hook(tmp_path, "session-end", {**end, "session_id": "w4-quiet"}, quiet)
    assert "R6 chain:" not in err


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_proxy_door_prints_r6_lines_and_ends_with_the_chain_status(
    tmp_path: Path,
) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    policy = config(tmp_path, auditLevel="verbose", showR6Status=True, policy={"preset": "safety"})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hello", encoding="utf-8")
    argv = [
        sys.executable,
        "-m",
        "pytest_harness_audit",
        "--storage",
        str(tmp_path / "store"),
        "proxy",
        "--policy",
        str(policy),
        "--session",
        "w4-proxy",
        "--workspace",
        str(workspace),
    ]
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w", encoding="utf-8") as sink:
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        async with stdio_client(params, errlog=sink) as streams, ClientSession(*streams) as client:
            await client.initialize()
            await client.call_tool("Read", {"file_path": "a.txt"})
            await client.call_tool("Bash", {"command": "rm -rf /"})
    text = errlog.read_text(encoding="utf-8")
    r6 = [line for line in text.splitlines() if line.startswith("[web4] R6 ")]
    assert len(r6) == 2, text
    assert r6[0].endswith(": allow, success") and r6[1].endswith(": deny, blocked")
    status = [line for line in text.splitlines() if line.startswith("R6 chain:")]
    assert len(status) == 1 and STATUS.match(status[0]), text
    assert status[0].startswith("R6 chain: 2 records")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
