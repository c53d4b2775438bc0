"""A cassette stands in for the whole upstream session, not only its tool calls.

``cassettes/notes.yaml`` was recorded once from ``notes_server.py`` (``pytest
--harness-audit-record=new example_suites/replay``). Replayed, the proxy announces the
recorded capabilities and instructions and serves the recorded resource listings and reads,
prompts and tool calls, with no upstream process.
"""

import sys
from pathlib import Path

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

NOTES = {
    "mcpServers": {
        "notes": {
            "command": sys.executable,
            "args": [str(Path(__file__).with_name("notes_server.py"))],
        }
    }
}
CASSETTE = "cassettes/notes.yaml"


def session(proxy, work):
    """Run ``work(client)`` against ``proxy`` as an MCP client would; return its result."""

    async def run():
        async with (
            httpx2.AsyncClient(headers=proxy.headers, timeout=30) as http,
            streamable_http_client(proxy.url, http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as client,
        ):
            init = await client.initialize()
            return init, await work(client)

    return anyio.run(run)


async def browse(client):
    listed = await client.list_resources()
    index = await client.read_resource("notes://index")
    standup = await client.read_resource("notes://standup")
    prompt = await client.get_prompt("summarise", {"note": "standup"})
    count = await client.call_tool("count_notes", {})
    return listed, index, standup, prompt, count


def test_resources_prompts_and_tools_replay(harness, recording_proxy):
    proxy = recording_proxy(NOTES, workspace_tools=False, cassette=CASSETTE)
    init, (listed, index, standup, prompt, count) = session(proxy, browse)
    assert init.instructions.startswith("Read notes://index first")
    assert init.capabilities.resources is not None and init.capabilities.prompts is not None
    assert [r.uri for r in listed.resources] == ["notes://index"]
    assert index.contents[0].text == "retro\nstandup"
    assert standup.contents[0].text == "Ship the release notes."
    assert "Ship the release notes." in prompt.messages[0].content.text
    assert count.content[0].text == "2"
    # the reads, the prompt and the tool call are governed and recorded; the listing is not
    assert [(c.tool, c.status) for c in harness.calls()] == [
        ("mcp__notes__resources/read", "success"),
        ("mcp__notes__resources/read", "success"),
        ("mcp__notes__prompts/get", "success"),
        ("mcp__notes__count_notes", "success"),
    ]


def test_a_read_the_cassette_lacks_is_an_error_naming_it(harness, recording_proxy):
    proxy = recording_proxy(NOTES, workspace_tools=False, replay=CASSETTE)

    async def read_missing(client):
        try:
            await client.read_resource("notes://planning")
        except MCPError as error:
            return error.error.message
        return None

    _, message = session(proxy, read_missing)
    assert "no recorded call matches resources/read 'notes://planning'" in message
