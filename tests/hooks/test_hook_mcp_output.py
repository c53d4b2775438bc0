"""A tool's output that holds a known secret reaches the model redacted: ``hook post`` answers
``updatedToolOutput`` (and, for an MCP tool, ``updatedMCPToolOutput``, the field earlier hosts
know) with the output as the record redacts it; a failed call's error, which the host lets no
hook replace, gets a notice beside it; every other answer stays ``{"suppressOutput": true}``."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.cli import main as cli

KEY = "sk-live-4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b"
SESSION = "host-mcp-output"
TOOL = "mcp__notes__read_note"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".env").write_text(f"API_KEY={KEY}\n")
    return root


def run(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    storage: Path,
    event: str,
    payload: dict[str, Any],
) -> dict[str, Any]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
    assert cli(["--storage", str(storage), "hook", event, "--preset", "safety"]) == 0
    answer: dict[str, Any] = json.loads(capsys.readouterr().out)
    return answer


def post(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    project: Path,
    storage: Path,
    tool: str,
    response: Any,
    event: str = "PostToolUse",
) -> dict[str, Any]:
    """The answer to ``tool``'s pre, then to its post (``event``) with ``response``."""
    payload: dict[str, Any] = {
        "session_id": SESSION,
        "tool_name": tool,
        "tool_input": {"id": "n1"},
        "tool_use_id": "toolu_mcp_1",
        "cwd": str(project),
    }
    run(monkeypatch, capsys, storage, "pre", {**payload, "hook_event_name": "PreToolUse"})
    if event == "PostToolUseFailure":
        payload["error"] = response
    else:
        payload["tool_response"] = response
    return run(monkeypatch, capsys, storage, "post", {**payload, "hook_event_name": event})


def calls(storage: Path) -> list[dict[str, Any]]:
    return [r for r in iter_records(storage, SESSION) if r.get("kind", "call") == "call"]


def test_a_key_in_an_mcp_tool_s_output_is_replaced_by_the_redacted_output(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    storage = tmp_path / "store"
    response = [{"type": "text", "text": f"note: the key is {KEY} (keep it)"}]
    answer = post(monkeypatch, capsys, project, storage, TOOL, response)
    assert answer["suppressOutput"] is True
    replaced = answer["hookSpecificOutput"]
    assert replaced["hookEventName"] == "PostToolUse"
    output = replaced["updatedMCPToolOutput"]
    assert replaced["updatedToolOutput"] == output
    assert KEY not in json.dumps(output) and KEY[8:24] not in json.dumps(output)
    # the same shape, only the secret redacted
    assert isinstance(output, list) and output[0]["type"] == "text"
    assert output[0]["text"].startswith("note: the key is [secret:")
    assert output[0]["text"].endswith(" (keep it)")
    (record,) = calls(storage)
    assert record["judged"]["verdict"] == "FAIL" and "secret_exposure" in record["alerts"]


def test_a_key_in_a_structured_mcp_output_is_redacted_in_place(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    storage = tmp_path / "store"
    response = {"title": "deploy", "body": {"token": KEY, "count": 3}}
    answer = post(monkeypatch, capsys, project, storage, TOOL, response)
    output = answer["hookSpecificOutput"]["updatedMCPToolOutput"]
    assert output["title"] == "deploy" and output["body"]["count"] == 3
    assert output["body"]["token"].startswith("[secret:")


def test_a_clean_mcp_output_is_left_as_the_host_has_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    storage = tmp_path / "store"
    # a look-alike sharing only the vendor prefix is not the project's key
    response = [{"type": "text", "text": "example key format: sk-live-xxxxxxxxxxxxxxxx"}]
    answer = post(monkeypatch, capsys, project, storage, TOOL, response)
    assert answer == {"suppressOutput": True}


def test_a_key_in_a_built_in_tool_s_output_is_replaced_in_the_tool_s_own_shape(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    storage = tmp_path / "store"
    response = {"stdout": f"API_KEY={KEY}\n", "stderr": "", "interrupted": False, "isImage": False}
    answer = post(monkeypatch, capsys, project, storage, "Bash", response)
    replaced = answer["hookSpecificOutput"]
    assert "updatedMCPToolOutput" not in replaced  # that field is an MCP tool's only
    output = replaced["updatedToolOutput"]
    assert set(output) == set(response) and output["interrupted"] is False
    assert output["stdout"].startswith("API_KEY=[secret:") and KEY not in json.dumps(output)
    (record,) = calls(storage)
    assert record["judged"]["verdict"] == "FAIL"


def test_a_clean_built_in_tool_output_is_left_as_the_host_has_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    storage = tmp_path / "store"
    response = {"stdout": "sk-live-xxxxxxxxxxxxxxxx is the key format\n", "stderr": ""}
    answer = post(monkeypatch, capsys, project, storage, "Bash", response)
    assert answer == {"suppressOutput": True}


def test_a_tool_named_like_mcp_but_not_prefixed_gets_no_mcp_field(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    storage = tmp_path / "store"
    response = [{"type": "text", "text": f"key {KEY}"}]
    answer = post(monkeypatch, capsys, project, storage, "notes_mcp__read", response)
    assert set(answer["hookSpecificOutput"]) == {"hookEventName", "updatedToolOutput"}


def test_a_failed_mcp_call_gets_no_replacement_but_a_notice(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    storage = tmp_path / "store"
    answer = post(
        monkeypatch, capsys, project, storage, TOOL, f"failed: {KEY}", event="PostToolUseFailure"
    )
    # the host replaces no failed call's error: only context beside it, and a user notice
    assert set(answer) == {"suppressOutput", "hookSpecificOutput", "systemMessage"}
    assert set(answer["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert answer["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    assert KEY not in json.dumps(answer) and KEY[8:24] not in json.dumps(answer)
    (record,) = calls(storage)
    assert record["judged"]["verdict"] == "FAIL" and "secret_exposure" in record["alerts"]
