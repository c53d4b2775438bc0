"""The host hook door: recorded Claude Code payloads for each tool type."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.audit.verify import verify_chain
from pytest_harness_audit.cli import main as cli

PAYLOADS = Path(__file__).parent / "payloads"

# payload → (decision, permission answer; "host" = no decision, the host's own rules apply)
EXPECTED = {
    "bash-destructive": ("deny", "deny"),
    "bash-benign": ("allow", "host"),
    "read-secret": ("deny", "deny"),
    "read-source": ("allow", "host"),
    "write-memory": ("warn", "ask"),
    "edit-persona": ("deny", "deny"),
    "glob": ("allow", "host"),
    "grep": ("allow", "host"),
    "webfetch": ("warn", "ask"),
    "task": ("allow", "host"),
    "mcp-git-commit": ("allow", "host"),
}


def run_hook(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    storage: Path,
    event: str,
    payload: str,
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(payload))
    code = cli(["--storage", str(storage), "hook", event, "--preset", "safety"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_pre_then_post_for_each_tool(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    payload = json.loads((PAYLOADS / f"{name}.json").read_text())
    decision, permission = EXPECTED[name]
    code, out, _ = run_hook(monkeypatch, capsys, tmp_path, "pre", json.dumps(payload))
    assert code == 0
    answer = json.loads(out).get("hookSpecificOutput", {})
    assert answer.get("permissionDecision", "host") == permission
    if permission != "host":
        assert answer["hookEventName"] == "PreToolUse"
    if permission == "deny":
        assert answer["permissionDecisionReason"].startswith("[blocked] [web4-policy] ")
    elif permission == "ask":
        assert answer["permissionDecisionReason"].startswith("[web4-policy] ")
    if permission != "deny":
        post = {
            **payload,
            "hook_event_name": "PostToolUse",
            "tool_response": {"stdout": "done", "exit_code": 0},
        }
        code, out, _ = run_hook(monkeypatch, capsys, tmp_path, "post", json.dumps(post))
        assert code == 0 and json.loads(out) == {"suppressOutput": True}
    records = [CallRecord(r) for r in iter_records(tmp_path, "host-session-1")]
    calls = [r for r in records if r.kind == "call"]
    assert len(calls) == 1
    assert calls[0].tool == payload["tool_name"]
    assert calls[0].decision == decision
    assert calls[0].status == ("blocked" if permission == "deny" else "success")
    assert calls[0].door == "hook"
    assert verify_chain(tmp_path, "host-session-1").valid


def test_failed_tool_response_is_recorded_as_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    payload = json.loads((PAYLOADS / "bash-benign.json").read_text())
    run_hook(monkeypatch, capsys, tmp_path, "pre", json.dumps(payload))
    post = {
        **payload,
        "hook_event_name": "PostToolUse",
        "tool_response": {"stdout": "", "stderr": "1 failing", "exit_code": 1},
    }
    run_hook(monkeypatch, capsys, tmp_path, "post", json.dumps(post))
    record = [CallRecord(r) for r in iter_records(tmp_path, "host-session-1")][-1]
    assert record.status == "error" and record.error_message == "exit code 1"
    assert record.raw["result"]["durationMs"] >= 0


def test_a_session_accumulates_across_hook_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("read-secret", "bash-destructive", "edit-persona"):
        run_hook(monkeypatch, capsys, tmp_path, "pre", (PAYLOADS / f"{name}.json").read_text())
    records = [CallRecord(r) for r in iter_records(tmp_path, "host-session-1")]
    assert [r.position for r in records] == list(range(len(records)))
    assert any(r.kind == "escalation" for r in records)  # three denials climb the ladder
    assert verify_chain(tmp_path, "host-session-1").valid


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("{not json", "hook payload: invalid JSON"),
        ("[]", "hook payload: expected a JSON object, got list"),
        ('{"session_id": "s", "tool_name": ""}', "field 'tool_name' must be a non-empty string"),
        (
            '{"session_id": "s", "tool_name": "Bash", "tool_input": "ls"}',
            "field 'tool_input' must be an object",
        ),
        (
            '{"hook_event_name": "Stop", "session_id": "s", "tool_name": "Bash"}',
            "field 'hook_event_name' is 'Stop'",
        ),
    ],
)
def test_malformed_payload_is_one_clear_error(
    payload: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_hook(monkeypatch, capsys, tmp_path, "pre", payload)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_hook_runs_as_a_host_would_run_it(tmp_path: Path) -> None:
    payload = (PAYLOADS / "bash-destructive.json").read_text()
    done = subprocess.run(
        [sys.executable, "-m", "pytest_harness_audit", "--storage", str(tmp_path), "hook", "pre"],
        input=payload,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
