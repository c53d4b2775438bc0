"""Replay a recorded MCP session: the suite runs without the upstream server installed.

``cassettes/git_review.yaml`` was recorded once from a real ``mcp-server-git`` with
``pytest --harness-audit-record=new example_suites/replay`` (``all`` records it again). By
default (``none``) the proxy serves the cassette: no upstream process starts, and the calls are
gated, recorded and judged exactly as they were against the real server.
"""

import sys

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

GIT = [sys.executable, "-m", "mcp_server_git", "--repository", "{workspace}"]
CASSETTE = "cassettes/git_review.yaml"


def call(proxy, *calls):
    """Run ``calls`` ((tool, arguments) pairs) through ``proxy`` as an MCP client would."""

    async def run():
        async with (
            httpx2.AsyncClient(headers=proxy.headers, timeout=30) as http,
            streamable_http_client(proxy.url, http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            return [await session.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)


def test_review_session_replays(harness, recording_proxy):
    proxy = recording_proxy(GIT, workspace_tools=False, cassette=CASSETTE)
    repo = str(harness.root)
    status, log = call(
        proxy,
        ("git_status", {"repo_path": repo}),
        ("git_log", {"repo_path": repo, "max_count": 1}),
    )
    assert "nothing to commit" in status.content[0].text
    assert "Initial commit" in log.content[0].text
    assert [(c.tool, c.status) for c in harness.calls()] == [
        ("mcp__git__git_status", "success"),
        ("mcp__git__git_log", "success"),
    ]


def test_a_call_the_cassette_lacks_is_an_error_naming_it(harness, recording_proxy):
    proxy = recording_proxy(GIT, workspace_tools=False, replay=CASSETTE)
    (diff,) = call(proxy, ("git_diff", {"repo_path": str(harness.root), "target": "HEAD~3"}))
    assert diff.is_error
    assert "no recorded call matches tools/call 'git_diff'" in diff.content[0].text
    assert [(c.tool, c.status) for c in harness.calls()] == [("mcp__git__git_diff", "error")]
