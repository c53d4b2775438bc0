"""`hook session-start` / `hook session-end`: the session opened, verified, closed and reported,
through `harness-audit hook …` processes fed the host's recorded payloads."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hook_processes import answer_of, harness_audit

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.audit.verify import verify_chain
from pytest_harness_audit.doors.hook_session import clean_pending, parse_session_payload
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.readers.report import load_report_text, report_path

PAYLOADS = Path(__file__).with_name("payloads")
SESSION = "abc123-session-events"


def hook(storage: Path, event: str, payload: str | dict[str, Any]) -> tuple[int, str, str]:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return harness_audit(["--storage", str(storage), "hook", event], text, env=dict(os.environ))


def recorded(name: str, cwd: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PAYLOADS / name).read_text())
    data["cwd"] = str(cwd)
    return data


def tool_payload(event: str, cwd: Path, tool_use_id: str, path: str) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "cwd": str(cwd),
        "hook_event_name": event,
        "tool_name": "Read",
        "tool_input": {"file_path": path},
        "tool_use_id": tool_use_id,
        **({"tool_response": {"content": "x"}} if event == "PostToolUse" else {}),
    }


@pytest.mark.slow
def test_a_whole_session_is_opened_recorded_verified_and_reported(tmp_path: Path) -> None:
    storage, cwd = tmp_path / "store", tmp_path
    assert hook(storage, "session-start", recorded("session-start.json", cwd)) == (0, "", "")
    code, out, _ = hook(storage, "pre", tool_payload("PreToolUse", cwd, "t1", "a.txt"))
    assert (code, answer_of(out)) == (0, {})
    code, out, _ = hook(storage, "post", tool_payload("PostToolUse", cwd, "t1", "a.txt"))
    assert (code, json.loads(out)) == (0, {"suppressOutput": True})
    code, out, _ = hook(storage, "pre", tool_payload("PreToolUse", cwd, "t2", ".env"))
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    # a pre whose post never comes: its pending file is stale by the end
    hook(storage, "pre", tool_payload("PreToolUse", cwd, "t3", "b.txt"))
    assert (storage / "pending" / SESSION / "t3.json").is_file()

    code, out, err = hook(storage, "session-end", recorded("session-end.json", cwd))
    assert (code, out) == (0, "")  # nothing on stdout: the host ignores it, and nothing to misread
    report = report_path(storage, SESSION)
    assert err.splitlines() == [
        f"harness-audit: session {SESSION}: verdict FAIL, chain valid, report {report}"
    ]
    assert not (storage / "pending" / SESSION).exists()

    records = list(iter_records(storage, SESSION))
    assert [(r.get("kind", "call"), r["tool"]) for r in records if r["tool"] != "immune"] == [
        ("session", "SessionStart"),
        ("call", "Read"),
        ("call", "Read"),
        ("session", "SessionEnd"),
    ]
    start, end = records[0], records[-1]
    assert start["session"]["source"] == "startup"
    assert start["session"]["policy"] == "safety"
    assert end["session"]["reason"] == "prompt_input_exit"
    assert end["session"]["chainValid"] is True
    assert end["session"]["chainRecords"] == len(records) - 1
    assert end["session"]["stalePending"] == 1
    assert verify_chain(storage, SESSION).valid

    text = load_report_text(storage, SESSION)
    assert text is not None and text.startswith("# harness-audit session report")
    assert "verdict: FAIL" in text
    assert "kind: session, tool: SessionEnd}" in text
    code, out, _ = harness_audit(
        ["--storage", str(storage), "audit", "report", SESSION], env=dict(os.environ)
    )
    assert code == 0 and out.startswith(text.rstrip("\n"))


def test_session_start_cleans_pending_files_left_by_an_earlier_run(tmp_path: Path) -> None:
    storage = tmp_path / "store"
    hook(storage, "pre", tool_payload("PreToolUse", tmp_path, "old", "a.txt"))
    assert hook(storage, "session-start", recorded("session-start.json", tmp_path))[0] == 0
    assert not (storage / "pending" / SESSION).exists()
    (start,) = [r for r in iter_records(storage, SESSION) if r["tool"] == "SessionStart"]
    assert start["session"]["stalePending"] == 1


@pytest.mark.slow
def test_a_tampered_chain_is_reported_invalid_at_the_end(tmp_path: Path) -> None:
    storage = tmp_path / "store"
    hook(storage, "session-start", recorded("session-start.json", tmp_path))
    hook(storage, "pre", tool_payload("PreToolUse", tmp_path, "t1", ".env"))
    chain = next((storage / "audit").rglob("*.jsonl"))
    chain.write_text(chain.read_text().replace(".env", ".enw"))
    code, out, err = hook(storage, "session-end", recorded("session-end.json", tmp_path))
    assert out == ""
    assert len(err.splitlines()) == 1
    if code == 0:  # the end could be recorded: the report says the chain is not valid
        text = load_report_text(storage, SESSION)
        assert text is not None and "valid: false" in text
    else:  # the store refused to go on: one line saying why
        assert code == 1 and err.startswith("harness-audit: error: ")


@pytest.mark.parametrize(
    ("event", "payload", "message"),
    [
        ("session-start", "{", "invalid JSON"),
        ("session-start", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("session-end", "{}", "field 'session_id' must be a non-empty string"),
        (
            "session-end",
            json.dumps({"hook_event_name": "SessionStart", "session_id": "s"}),
            "field 'hook_event_name' is 'SessionStart', expected 'SessionEnd'",
        ),
    ],
)
def test_bad_payloads_give_one_line_and_exit_1(
    tmp_path: Path, event: str, payload: str, message: str
) -> None:
    code, out, err = hook(tmp_path, event, payload)
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == 1 and message in err
    assert err.startswith("harness-audit: error: hook payload: ")


def test_parse_and_clean_pending_units(tmp_path: Path) -> None:
    parsed = parse_session_payload((PAYLOADS / "session-start.json").read_text(), "SessionStart")
    assert (parsed.session_id, parsed.cwd, parsed.why) == (SESSION, "/home/user/demo", "startup")
    with pytest.raises(UsageError, match="expected a JSON object, got list"):
        parse_session_payload("[]", "SessionEnd")
    folder = tmp_path / "pending" / "s"
    folder.mkdir(parents=True)
    (folder / "a.json").write_text("{}")
    (folder / "b.json").write_text("{}")
    assert clean_pending(tmp_path, "s") == 2
    assert clean_pending(tmp_path, "s") == 0
