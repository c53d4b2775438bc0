"""`harness-audit proxy --social`: the send_message MCP tool over stdio with the official client."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.audit.verify import verify_chain


async def exchange(storage: Path) -> tuple[object, MCPError]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "pytest_harness_audit",
            "--storage",
            str(storage),
            "proxy",
            "--preset",
            "safety",
            "--session",
            "social",
            "--social",
            "alice,bob,carol",
        ],
        env=dict(os.environ),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert names == ["send_message"]
        sent = await session.call_tool(
            "send_message", {"input": {"to": "group:bob,carol", "text": "standup at 10"}}
        )
        with pytest.raises(MCPError) as refused:
            await session.call_tool("send_message", {"input": {"to": "agent:dave", "text": "hi"}})
    return sent, refused.value


@pytest.mark.slow
def test_send_message_through_the_proxy_command(tmp_path: Path) -> None:
    sent, refused = anyio.run(exchange, tmp_path)
    assert not sent.is_error and sent.structured_content == {}
    assert refused.error.data["reason"] == "unknown-agent"
    records = list(iter_records(tmp_path, "social"))
    assert [(r["tool"], r["category"], r["target"], r["result"]["status"]) for r in records] == [
        ("send_message", "message", "group:alice,bob,carol", "success"),
        ("send_message", "message", "agent:dave", "error"),
    ]
    assert verify_chain(tmp_path, "social").valid
