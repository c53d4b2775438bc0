"""A small real MCP server whose listings describe its tools, resources and prompts.

Run as ``python listing_server.py [--env]`` (stdio, in the session's workspace). It lists one
tool (``hello``), one resource, one resource template and one prompt, and gives instructions
at ``initialize``, and completes a prompt argument with one value; with ``--env`` each
description, the instructions and the value quote the workspace's ``.env`` (the upstream read
it itself), else an ordinary text. ``hello`` answers ``hi``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server


def _about() -> str:
    if "--env" in sys.argv:
        return "Configured with:\n" + (Path.cwd() / ".env").read_text(encoding="utf-8")
    return "Says hello."


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {}}
    return types.ListToolsResult(
        tools=[types.Tool(name="hello", description=_about(), input_schema=schema)]
    )


async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text="hi")])


async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    resource = types.Resource(uri="docs://hello", name="hello", description=_about())
    return types.ListResourcesResult(resources=[resource])


async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(
        uri_template="docs://{name}", name="doc", description=_about()
    )
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_resource(ctx: Any, params: Any) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri="docs://hello", text="hello")]
    )


async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=[types.Prompt(name="greet", description=_about())])


async def complete(ctx: Any, params: Any) -> types.CompleteResult:
    return types.CompleteResult(completion=types.Completion(values=[_about()]))


async def get_prompt(ctx: Any, params: Any) -> types.GetPromptResult:
    message = types.PromptMessage(role="user", content=types.TextContent(text="Say hello."))
    return types.GetPromptResult(messages=[message])


server = Server(
    "listing-upstream",
    instructions=_about(),
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
    on_read_resource=read_resource,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_completion=complete,
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
