"""``--workspace``: the harness's workspace tools served by the proxy, gated and recorded."""

from __future__ import annotations

from pathlib import Path

import git
import pytest
from proxy_support import memory_client, text_of
from stub_gate import StubGate

from pytest_harness_audit.doors.proxy import RecordingProxy
from pytest_harness_audit.doors.proxy.workspace_tools import WORKSPACE_TOOL_NAMES, workspace_tools

pytestmark = pytest.mark.anyio


async def test_workspace_tools_work_on_the_workspace_and_are_recorded(
    git_repo: git.Repo, tmp_path: Path, reports: list[str]
) -> None:
    root = Path(git_repo.working_dir)
    gate = StubGate(tmp_path / "ws-storage", deny=["Bash"])
    proxy = RecordingProxy(gate, [], local_tools=workspace_tools(root), report=reports.append)
    async with proxy, memory_client(proxy) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert list(tools) == list(WORKSPACE_TOOL_NAMES)
        assert tools["Grep"].input_schema["properties"]["-i"] == {"type": "boolean"}

        wrote = await session.call_tool("Write", {"file_path": "notes.md", "content": "alpha\n"})
        assert not wrote.is_error, text_of(wrote)
        edited = await session.call_tool(
            "Edit", {"file_path": "notes.md", "old_string": "alpha", "new_string": "beta"}
        )
        assert not edited.is_error, text_of(edited)
        read = await session.call_tool("Read", {"file_path": "notes.md"})
        assert "beta" in text_of(read)
        found = await session.call_tool("Glob", {"pattern": "*.md"})
        assert "notes.md" in text_of(found) and "README.md" in text_of(found)
        grep = await session.call_tool("Grep", {"pattern": "bet", "output_mode": "content"})
        assert "beta" in text_of(grep)
        escaped = await session.call_tool("Read", {"file_path": "../outside.txt"})
        assert escaped.is_error
        denied = await session.call_tool("Bash", {"command": "touch pwned"})
        assert denied.is_error and text_of(denied).startswith("[blocked] [web4-policy]")

    assert (root / "notes.md").read_text(encoding="utf-8") == "beta\n"
    assert not (root / "pwned").exists()
    assert [(r["tool"], r["status"]) for r in gate.records()] == [
        ("Write", "success"),
        ("Edit", "success"),
        ("Read", "success"),
        ("Glob", "success"),
        ("Grep", "success"),
        ("Read", "error"),
        ("Bash", "blocked"),
    ]
