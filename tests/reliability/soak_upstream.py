"""The upstream MCP server of the proxy soak: one ``work`` tool that misbehaves on request.

    python soak_upstream.py

``work(path)`` answers ``done <path>``, unless ``path`` contains ``fail`` (an ``isError``
result), ``raise`` (an unexpected exception inside the tool) or ``slow`` (it sleeps far longer
than the proxy's call timeout).
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("soak-upstream")


@server.tool()
async def work(path: str) -> str:
    """Do some pretend work on ``path``."""
    if "fail" in path:
        raise ToolError(f"cannot work on {path}")
    if "raise" in path:
        raise RuntimeError(f"unexpected trouble with {path}")
    if "slow" in path:
        await anyio.sleep(30)
    return f"done {path}"


if __name__ == "__main__":
    server.run()
