"""A call the policy warns about runs, and its client's model is told the warning.

The hook door hands a ``warn`` decision's reason to the model as context; the proxy adds it to
the call's answer as one more text block, ``[web4-policy] <reason>``, after the tool's own
content. The record keeps the tool's own result, and the session is WARN. A call allowed
outright, or a dry-run deny, is answered with the tool's result alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp_memory import memory_client
from secret_support import service_harness

from pytest_harness_audit.audit.canonical import output_hash
from pytest_harness_audit.doors.proxy import RecordingProxy
from pytest_harness_audit.doors.proxy.workspace_tools import workspace_tools
from pytest_harness_audit.session.harness import Harness

MEMORY_WARNING = "[web4-policy] Memory file modification flagged - potential memory poisoning"
DELETE_WARNING = "[web4-policy] File deletion flagged - use with caution"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _answers(harness: Harness, *calls: tuple[str, dict[str, Any]]) -> list[types.CallToolResult]:
    async def session() -> list[types.CallToolResult]:
        tools = workspace_tools(harness.root)
        proxy = RecordingProxy(harness.gate, [], local_tools=tools, report=lambda _: None)
        async with proxy, memory_client(proxy) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(session)


def _texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def test_a_warned_write_is_answered_with_its_result_and_the_warning(harness: Harness) -> None:
    [answer] = _answers(harness, ("Write", {"file_path": "MEMORY.md", "content": "remember"}))
    assert not answer.is_error
    *result, note = _texts(answer)
    assert note == MEMORY_WARNING
    assert result and MEMORY_WARNING not in result
    assert (harness.root / "MEMORY.md").read_text(encoding="utf-8") == "remember"
    [call] = harness.calls()
    assert (call.decision, call.status) == ("warn", "success")
    # the record is of what the tool returned, not of the door's note
    told = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    told["content"] = told["content"][:-1]
    assert call.output_hash == output_hash(told)
    assert harness.verdict == "WARN"


def test_a_warned_command_with_no_output_is_answered_with_the_warning(harness: Harness) -> None:
    (harness.root / "scratch.txt").write_text("x\n", encoding="utf-8")
    [answer] = _answers(harness, ("Bash", {"command": "rm scratch.txt"}))
    assert _texts(answer)[-1] == DELETE_WARNING
    assert not (harness.root / "scratch.txt").exists()
    assert harness.verdict == "WARN"


def test_an_allowed_write_is_answered_with_its_result_alone(harness: Harness) -> None:
    """The look-alike: a file named like a memory file in prose only (``notes.md``)."""
    [answer] = _answers(harness, ("Write", {"file_path": "notes.md", "content": "memory"}))
    assert not any(text.startswith("[web4-policy]") for text in _texts(answer))
    assert harness.verdict == "PASS"
