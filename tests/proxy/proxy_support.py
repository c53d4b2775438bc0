"""Helpers shared by the proxy tests: upstream specs, official clients, an HTTP server."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import git
import httpx2
import mcp_types as types
from fork_upstream import launched as launched
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_memory import memory_client as memory_client

from pytest_harness_audit.doors.proxy import HttpEndpoint, RecordingProxy, StdioUpstream

HERE = Path(__file__).resolve().parent
TEST_SERVER = str(HERE / "upstream_server.py")
ASKING_SERVER = str(HERE / "asking_server.py")
STUB_PROXY = str(HERE / "run_stub_proxy.py")


def git_argv(repo: git.Repo) -> list[str]:
    return launched([sys.executable, "-m", "mcp_server_git", "--repository", str(repo.working_dir)])


def git_upstream(repo: git.Repo, name: str = "git") -> StdioUpstream:
    argv = git_argv(repo)
    return StdioUpstream(name=name, command=argv[0], args=tuple(argv[1:]))


def test_upstream(name: str = "test", *extra: str) -> StdioUpstream:
    argv = launched([sys.executable, TEST_SERVER, *extra])
    return StdioUpstream(name=name, command=argv[0], args=tuple(argv[1:]))


def asking_upstream(name: str = "ask") -> StdioUpstream:
    """The upstream whose tools ask the client back (sampling, elicitation, roots)."""
    argv = launched([sys.executable, ASKING_SERVER])
    return StdioUpstream(name=name, command=argv[0], args=tuple(argv[1:]))


# Not a test, despite the name pytest would otherwise collect.
test_upstream.__test__ = False  # type: ignore[attr-defined]


@asynccontextmanager
async def http_client(endpoint: HttpEndpoint, **options: Any) -> AsyncIterator[ClientSession]:
    """An official client connected to the proxy over streamable HTTP with the token."""
    async with (
        httpx2.AsyncClient(headers=endpoint.headers) as http,
        streamable_http_client(endpoint.url, http_client=http) as (read, write),
        ClientSession(read, write, **options) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


@asynccontextmanager
async def serving_http(
    proxy: RecordingProxy, on_ready: Callable[[HttpEndpoint], None]
) -> AsyncIterator[anyio.Event]:
    """Serve ``proxy`` over HTTP in the background; yields the event that stops it."""
    stop = anyio.Event()
    ready = anyio.Event()

    def announce(endpoint: HttpEndpoint) -> None:
        on_ready(endpoint)
        ready.set()

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: proxy.serve_http(on_ready=announce, stop=stop))
        await ready.wait()
        yield stop
        stop.set()
