"""A real MCP server (the SDK's low-level Server) that writes to its stderr, as servers log.

Run as ``python noisy_upstream.py`` in the workspace. At start it writes ``starting`` and, as a
server logging its settings does, the ``API_KEY`` line of the workspace's ``.env`` (a plain
notice with ``NOISY_BENIGN=1``). Tool ``log`` writes ``text`` (its argument) to stderr, no
newline added, with ``{key}`` replaced by the key it read at start (the client never sends it);
tool ``fine`` answers ``ok``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server


def _settings_line() -> str:
    if os.environ.get("NOISY_BENIGN") == "1":
        return "settings loaded (3 entries)"
    env = (Path.cwd() / ".env").read_text(encoding="utf-8")
    return next(line for line in env.splitlines() if line.startswith("API_KEY="))


# read once at start, as a server loading its settings does
SETTINGS = _settings_line()
KEY = SETTINGS.removeprefix("API_KEY=")


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return types.ListToolsResult(
        tools=[types.Tool(name=name, input_schema=schema) for name in ("log", "fine")]
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "log":
        text = str((params.arguments or {}).get("text", ""))
        sys.stderr.write(text.replace("{key}", KEY))
        sys.stderr.flush()
    return types.CallToolResult(content=[types.TextContent(text="ok")])


server = Server("noisy-upstream", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    print("starting", file=sys.stderr, flush=True)
    print(f"config: {SETTINGS}", file=sys.stderr, flush=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
