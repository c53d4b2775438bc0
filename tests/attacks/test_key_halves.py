"""A known key handed to the model in two halves, one per call.

The chain's scrub redacts a run of a known secret (half a key) in every record; the tool results
the model reads are read the same way (a run, and pieces over the calls of a session): the half
that makes a run reaches the model redacted and the session fails. Shown at the proxy
(a real upstream that loaded the ``.env`` at start, as a dotenv-reading server does, so no
credential read happens during a call), at the function-tool door and at the hook door (an MCP
tool's output the host hands to ``hook post``). The benign twin: the
whole key in one result is redacted and FAILs the session.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.cli import main as cli
from pytest_harness_audit.session.harness import Harness

LEAKY = str(Path(__file__).resolve().parent / "leaky_upstream.py")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _pieces_through_proxy(harness: Harness, size: int) -> list[str]:
    upstream = {"mcpServers": {"leaky": {"command": sys.executable, "args": [LEAKY]}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False)
    length = len(api_key(harness))

    async def session() -> list[str]:
        async with proxy_client(proxy) as client:
            texts: list[str] = []
            for start in range(0, length, size):
                result = await client.call_tool("piece", {"start": start, "size": size})
                texts.append("".join(getattr(block, "text", "") for block in result.content))
            return texts

    return anyio.run(session)


def _joined(texts: list[str]) -> str:
    return "".join(text.split(": ", 1)[1] for text in texts)


def test_key_in_two_results_through_the_proxy(harness: Harness) -> None:
    key = api_key(harness)
    texts = _pieces_through_proxy(harness, len(key) // 2)
    model_has_key = _joined(texts) == key
    assert not (model_has_key and harness.verdict == "PASS"), texts
    assert key[len(key) // 2 :] not in "".join(texts)


def test_benign_twin_whole_key_through_the_proxy_is_redacted(harness: Harness) -> None:
    key = api_key(harness)
    texts = _pieces_through_proxy(harness, len(key))
    assert key not in "".join(texts) and "[secret:" in texts[0]
    assert harness.verdict == "FAIL"


def test_key_in_two_results_of_a_function_tool(harness: Harness) -> None:
    key = api_key(harness)
    half = len(key) // 2

    def piece(start: int, size: int) -> str:
        """A slice of a settings value."""
        return f"piece {start}: {key[start : start + size]}"

    tool = harness.tool(piece)
    texts = [tool(0, half), tool(half, half)]
    assert not (_joined(texts) == key and harness.verdict == "PASS"), texts
    assert key[half:] not in "".join(texts)


def test_benign_twin_whole_key_from_a_function_tool_is_redacted(
    harness: Harness,
) -> None:
    key = api_key(harness)

    def piece(start: int, size: int) -> str:
        """A slice of a settings value."""
        return f"piece {start}: {key[start : start + size]}"

    assert key not in harness.tool(piece)(0, len(key))
    assert harness.verdict == "FAIL"


HOOK_KEY = "sk-live-9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a"


def _hook_pieces(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    pieces: list[str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``hook pre`` and ``hook post`` of one MCP call per piece (its output); the post answers
    and the session's call records."""
    root = tmp_path / "project"
    root.mkdir()
    (root / ".env").write_text(f"API_KEY={HOOK_KEY}\n", encoding="utf-8")
    storage = tmp_path / "store"
    answers: list[dict[str, Any]] = []
    for index, piece in enumerate(pieces):
        base = {
            "session_id": "halves",
            "tool_name": "mcp__docs__piece",
            "tool_input": {"n": index},
            "tool_use_id": f"toolu_{index}",
            "cwd": str(root),
        }
        output = [{"type": "text", "text": f"piece {index}: {piece}"}]
        for event, command, more in (
            ("PreToolUse", "pre", {}),
            ("PostToolUse", "post", {"tool_response": output}),
        ):
            payload = {**base, "hook_event_name": event, **more}
            monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
            assert cli(["--storage", str(storage), "hook", command, "--preset", "safety"]) == 0
            answer = json.loads(capsys.readouterr().out)
            if command == "post":
                answers.append(answer)
    records = [r for r in iter_records(storage, "halves") if r.get("kind", "call") == "call"]
    return answers, records


def test_key_in_two_outputs_at_the_hook_door(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    half = len(HOOK_KEY) // 2
    answers, records = _hook_pieces(
        tmp_path, monkeypatch, capsys, [HOOK_KEY[:half], HOOK_KEY[half:]]
    )
    replaced = ["hookSpecificOutput" in answer for answer in answers]
    judged = [record.get("judged") for record in records]
    assert any(replaced) or any(judged), (answers, judged)


def test_benign_twin_whole_key_at_the_hook_door_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answers, records = _hook_pieces(tmp_path, monkeypatch, capsys, [HOOK_KEY])
    replaced = answers[0]["hookSpecificOutput"]["updatedMCPToolOutput"]
    assert HOOK_KEY not in json.dumps(replaced)
    assert records[0]["judged"]["verdict"] == "FAIL"


ONE_RESULT_FORMS = {
    "halves swapped": lambda k: f"{k[len(k) // 2 :]} {k[: len(k) // 2]}",
    "halves under two keys": lambda k: json.dumps({"a": k[: len(k) // 2], "b": k[len(k) // 2 :]}),
    "every character apart": lambda k: "x".join(k),
}


@pytest.mark.parametrize("form", list(ONE_RESULT_FORMS))
def test_key_rearranged_in_one_result_of_a_function_tool(harness: Harness, form: str) -> None:
    key = api_key(harness)

    def show(name: str) -> str:
        """Show a setting."""
        return str(ONE_RESULT_FORMS[form](key))

    out = harness.tool(show)("API_KEY")
    assert "[secret:" in out or harness.verdict != "PASS", out


def test_half_key_in_a_listing_is_recorded_but_relayed_whole(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_HALF_IN_LISTING", "1")
    key = api_key(harness)
    upstream = {"mcpServers": {"leaky": {"command": sys.executable, "args": [LEAKY]}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False)

    async def session() -> str:
        async with proxy_client(proxy) as client:
            tools = (await client.list_tools()).tools
            return "".join(tool.description or "" for tool in tools if tool.name == "fine")

    description = anyio.run(session)
    assert [c.tool for c in harness.calls()] == ["mcp__leaky__tools/list"]
    assert key[len(key) // 2 :] not in description or harness.verdict != "PASS", description
