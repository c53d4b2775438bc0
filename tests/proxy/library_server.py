"""A small real MCP server (the SDK's MCPServer) with tools, resources, prompts and completions.

Run as ``python library_server.py`` (stdio; it starts in the session's workspace) or
``python library_server.py --http PORT`` (streamable HTTP on loopback). The cassette tests
record a whole session with it and replay it without it. Tools: ``lookup`` and ``ask_model``
(asks the client's model through ``sampling/createMessage``). Resources: ``library://catalog``,
``library://env`` (the workspace's ``.env``: a secret a cassette must not hold) and the
template ``library://books/{book}``. Prompt: ``review``. Completion: book ids. With
``LIBRARY_STARTED`` set it leaves that file behind when it starts.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

if os.environ.get("LIBRARY_STARTED"):
    Path(os.environ["LIBRARY_STARTED"]).write_text("started\n", encoding="utf-8")

BOOKS = {"dune": "Dune, by Frank Herbert", "emma": "Emma, by Jane Austen"}

server = MCPServer(
    "library-upstream", instructions="Read library://catalog first; book ids are lower case."
)


@server.tool()
def lookup(book: str) -> str:
    """The title and author of ``book``."""
    return BOOKS.get(book, f"no book {book!r}")


@server.tool()
async def ask_model(prompt: str, ctx: Context) -> str:
    """Ask the client's model to complete ``prompt``; answer with the model's text."""
    message = types.SamplingMessage(role="user", content=types.TextContent(text=prompt))
    result = await ctx.session.create_message(
        [message], max_tokens=20, related_request_id=ctx.request_id
    )
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else repr(content)
    return f"{result.model} said: {text}"


@server.resource("library://catalog")
def catalog() -> str:
    """Every book, one per line."""
    return "\n".join(f"{key}: {title}" for key, title in sorted(BOOKS.items()))


@server.resource("library://env")
def env() -> str:
    """The workspace's .env (it holds a secret)."""
    return Path(".env").read_text(encoding="utf-8")


@server.resource("library://books/{book}")
def book(book: str) -> str:
    """One book."""
    return BOOKS.get(book, f"no book {book!r}")


@server.prompt()
def review(book: str, tone: str = "kind") -> str:
    """Ask for a review of ``book``."""
    return f"Write a {tone} review of {BOOKS.get(book, book)}."


@server.completion()  # type: ignore[untyped-decorator,no-untyped-call]
async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion | None:
    """Book ids starting with what was typed."""
    if argument.name != "book":
        return None
    return types.Completion(values=[key for key in sorted(BOOKS) if key.startswith(argument.value)])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
