"""A small real MCP server that speaks to the client beside its results, as a proxy upstream.

Run as ``python notifying_server.py`` (stdio, in the session's workspace). Tools: ``progress``
reports the progress of its work with a message, ``log`` sends a log notification and then
answers; with ``env`` set, the message is the workspace's ``.env`` (the upstream read it itself),
else an ordinary text. Both answer ``done``.
"""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("notifying-upstream")


def _text(env: bool) -> str:
    return (Path.cwd() / ".env").read_text(encoding="utf-8") if env else "reading the settings"


@server.tool()
async def progress(env: bool, ctx: Context) -> str:
    """Report two steps of progress, the first with a message, then answer."""
    await ctx.report_progress(1, 2, _text(env))
    await ctx.report_progress(2, 2, "finished")
    return "done"


@server.tool()
async def log(env: bool, ctx: Context) -> str:
    """Send a log notification, then answer."""
    await ctx.info(_text(env))
    return "done"


if __name__ == "__main__":
    server.run()
