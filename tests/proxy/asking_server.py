"""A real MCP server (the SDK's MCPServer) whose tools ask the client back during a call.

Run as ``python asking_server.py``. Tools: ``ask_model`` (``sampling/createMessage``),
``ask_user`` (``elicitation/create``, form mode), ``roots`` (``roots/list``), and
``roots_changes`` (how many ``notifications/roots/list_changed`` arrived). Each answers with
what the client said, so a test can see the client's answer come back through the proxy.
"""

from __future__ import annotations

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

server = MCPServer("asking-upstream")
roots_changed = 0


async def _on_roots_changed(ctx: object, params: types.NotificationParams) -> None:
    global roots_changed
    roots_changed += 1


# MCPServer has no public hook for client notifications; its low-level server has.
server._lowlevel_server.add_notification_handler(
    "notifications/roots/list_changed", types.NotificationParams, _on_roots_changed
)


class Colour(BaseModel):
    """The form the ``ask_user`` tool asks the user to fill in."""

    colour: str


@server.tool()
async def ask_model(prompt: str, ctx: Context) -> str:
    """Ask the client's model to complete ``prompt``; answer with the model's text.

    A refusal becomes an ``isError`` result; the other tools let the error propagate (the SDK
    then answers the call with a JSON-RPC error), so both shapes are exercised.
    """
    message = types.SamplingMessage(role="user", content=types.TextContent(text=prompt))
    try:
        result = await ctx.session.create_message(
            [message], max_tokens=20, related_request_id=ctx.request_id
        )
    except MCPError as exc:
        raise ToolError(f"the client could not sample: {exc.error.message}") from None
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else repr(content)
    return f"{result.model} said: {text}"


@server.tool()
async def ask_user(question: str, ctx: Context) -> str:
    """Ask the user ``question`` through a form; answer with their action and colour."""
    answer = await ctx.elicit(question, Colour)
    colour = answer.data.colour if answer.action == "accept" and answer.data else "-"
    return f"{answer.action}: {colour}"


@server.tool()
async def roots(ctx: Context) -> str:
    """List the client's roots; answer with their URIs, one per line."""
    listed = await ctx.session.list_roots()
    return "\n".join(str(root.uri) for root in listed.roots) or "(no roots)"


@server.tool()
def roots_changes() -> int:
    """How many times the client said its roots changed."""
    return roots_changed


if __name__ == "__main__":
    server.run()
