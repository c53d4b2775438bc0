"""A real MCP server whose tools dispatch to inner actions, as tool hubs and gateways do.

Run as ``python dispatch_server.py`` (stdio) in the workspace. ``call_tool(name, arguments)``
takes the inner action's arguments as a JSON text (the function-calling convention of many
model APIs); ``invoke(tool, arguments)`` takes them as an object. Inner actions: ``shell``
(``{"command": …}`` or ``{"command_line": …}``: run in a shell, its output returned), ``read``
(``{"path": …}``) and ``write`` (``{"path": …, "content": …}``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("dispatch-upstream")


def _dispatch(name: str, arguments: dict[str, Any]) -> str:
    if name == "shell":
        command = arguments.get("command", arguments.get("command_line"))
        done = subprocess.run(str(command), shell=True, capture_output=True, text=True, timeout=30)
        return done.stdout + done.stderr
    if name == "read":
        return Path(str(arguments["path"])).read_text(encoding="utf-8")
    if name == "write":
        Path(str(arguments["path"])).write_text(str(arguments["content"]), encoding="utf-8")
        return "written"
    raise ValueError(f"no action {name!r}")


@server.tool(description="Call an action; its arguments are a JSON text.")
def call_tool(name: str, arguments: str) -> str:
    return _dispatch(name, json.loads(arguments))


@server.tool(description="Call an action with its arguments.")
def invoke(tool: str, arguments: dict[str, Any]) -> str:
    return _dispatch(tool, arguments)


if __name__ == "__main__":
    server.run()
