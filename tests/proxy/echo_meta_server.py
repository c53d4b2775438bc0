"""An upstream MCP server that appends what it receives — a tool call's arguments and ``_meta``,
a completion's argument and context — as JSON lines to ``$RECEIVED``: what a remote server
would learn from the proxy."""

from __future__ import annotations

import json
import os

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("echo-meta")


def _note(entry: dict[str, object]) -> None:
    with open(os.environ["RECEIVED"], "a", encoding="utf-8") as out:
        out.write(json.dumps(entry, default=str, ensure_ascii=False) + "\n")


@server.tool()
def lookup(book: str, ctx: Context) -> str:
    """Look a book up."""
    meta = ctx.request_context.meta
    _note({"book": book, "meta": meta.model_dump() if hasattr(meta, "model_dump") else meta})
    return f"no book {book!r}"


@server.prompt()
def review(book: str) -> str:
    """Ask for a review of ``book``."""
    return f"Write a review of {book}."


@server.completion()  # type: ignore[untyped-decorator,no-untyped-call]
async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion | None:
    """Book ids starting with what was typed."""
    _note({"completion": argument.value, "context": context.model_dump() if context else None})
    return types.Completion(values=[b for b in ("dune", "emma") if b.startswith(argument.value)])


if __name__ == "__main__":
    server.run()
