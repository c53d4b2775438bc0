"""A small real MCP server serving workspace files as ``file://`` resources, and prompts.

Run as ``python files_server.py`` (stdio); it starts in the session's workspace and serves, as a
filesystem server would, any ``file://`` URI of a file under it (listed: the workspace's top level
files). Further resources: ``docs://env-docs`` (named ``env-docs``: how to set up a .env, no
secret), ``blob://env`` (the workspace's ``.env`` as a base64 blob) and ``docs://settings`` (the
``.env`` as text under a harmless name); ``docs://broken`` fails with an MCP error quoting the
``.env``'s secret line, ``docs://broken-data`` with one carrying the ``.env`` as its data. Prompts:
``deploy`` (its text carries the ``.env``) and ``greet``.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

ROOT = Path.cwd().resolve()
ENV_DOCS = "Copy .env.example to .env and fill in API_KEY; never commit .env."


def _env_text() -> str:
    return (ROOT / ".env").read_text(encoding="utf-8")


async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    files = sorted(p for p in ROOT.iterdir() if p.is_file())
    listed = [types.Resource(uri=p.as_uri(), name=p.name) for p in files]
    listed += [
        types.Resource(uri="docs://env-docs", name="env-docs"),
        types.Resource(uri="blob://env", name="env-blob", mime_type="application/octet-stream"),
        types.Resource(uri="docs://settings", name="settings"),
    ]
    return types.ListResourcesResult(resources=listed)


async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(uri_template="file://{path}", name="workspace-file")
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> Any:
    uri = params.uri
    if uri == "docs://env-docs":
        return _text(uri, ENV_DOCS)
    if uri == "docs://settings":
        return _text(uri, _env_text())
    if uri == "docs://broken":
        first = _env_text().splitlines()[1]
        raise MCPError(code=types.INVALID_PARAMS, message=f"cannot parse line {first!r}")
    if uri == "docs://broken-data":
        raise MCPError(code=types.INVALID_PARAMS, message="cannot parse", data=_env_text())
    if uri == "blob://env":
        blob = base64.b64encode(_env_text().encode()).decode()
        contents = types.BlobResourceContents(uri=uri, blob=blob)
        return types.ReadResourceResult(contents=[contents])
    parts = urlsplit(uri)
    path = Path(unquote(parts.path)).resolve()
    if parts.scheme != "file" or not path.is_relative_to(ROOT) or not path.is_file():
        raise MCPError(code=types.INVALID_PARAMS, message=f"no resource {uri}")
    return _text(uri, path.read_text(encoding="utf-8"))


def _text(uri: str, text: str) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text=text)])


async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    return types.ListPromptsResult(
        prompts=[types.Prompt(name="deploy"), types.Prompt(name="greet")]
    )


async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    if params.name == "deploy":
        text = f"Deploy with these settings:\n{_env_text()}"
    elif params.name == "greet":
        text = f"Say hello to {(params.arguments or {}).get('who', 'everyone')}."
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"no prompt {params.name}")
    message = types.PromptMessage(role="user", content=types.TextContent(text=text))
    return types.GetPromptResult(messages=[message])


server = Server(
    "files-upstream",
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
    on_read_resource=read_resource,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
