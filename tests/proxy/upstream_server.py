"""A small real MCP server (the SDK's MCPServer) used as an upstream in the proxy tests.

Run as ``python upstream_server.py [--crash-on-start]``. Tools: ``echo``, ``fail`` (an isError
result), ``sleep`` (slow), ``crash`` (the process dies mid-call), ``progress`` (reports
progress), ``note`` (sends a log message), ``write_later`` (writes a file after a pause, or
notes its cancellation); plus one resource and one prompt so relayed traffic can be checked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("test-upstream")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def fail(reason: str) -> str:
    """Fail with the given reason (an isError result)."""
    raise ToolError(reason)


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleep, then answer."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
async def write_later(path: str, seconds: float) -> str:
    """Write ``path`` after ``seconds``; when cancelled first, write ``<path>.cancelled``."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        Path(f"{path}.cancelled").write_text("cancelled\n", encoding="utf-8")
        raise
    Path(path).write_text("written\n", encoding="utf-8")
    return "written"


@server.tool()
def crash(code: int = 3) -> str:
    """Kill the server process while the call is in flight."""
    sys.stderr.flush()
    os._exit(code)


@server.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Report ``steps`` progress notifications, then answer."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"done {steps}"


@server.tool()
async def note(message: str, ctx: Context) -> str:
    """Send ``message`` as a log notification, then answer."""
    await ctx.info(message)
    return "noted"


@server.resource("memo://greeting")
def greeting() -> str:
    """A fixed text resource."""
    return "hello from upstream"


@server.prompt()
def review(topic: str) -> str:
    """A prompt that asks for a review of ``topic``."""
    return f"Please review {topic}."


if __name__ == "__main__":
    if "--crash-on-start" in sys.argv:
        raise SystemExit(5)
    server.run()
