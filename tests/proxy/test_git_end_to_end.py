"""Official MCP client → recording proxy → real mcp-server-git on a temp repository."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import git
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from proxy_support import STUB_PROXY, git_argv, git_upstream, http_client, serving_http, text_of
from stub_gate import StubGate, read_records

from pytest_harness_audit.doors.proxy import BackgroundProxy, RecordingProxy, parse_ready_line

pytestmark = pytest.mark.anyio


async def _status_then_denied_commit(session: ClientSession, repo: git.Repo) -> None:
    """Shared scenario: stage a file, see it in git_status, then try to commit it."""
    path = str(repo.working_dir)
    names = {tool.name for tool in (await session.list_tools()).tools}
    assert {"git_status", "git_commit", "git_add"} <= names

    added = await session.call_tool("git_add", {"repo_path": path, "files": ["new.txt"]})
    assert not added.is_error, text_of(added)
    status = await session.call_tool("git_status", {"repo_path": path})
    assert not status.is_error
    assert "new.txt" in text_of(status)

    commit = await session.call_tool("git_commit", {"repo_path": path, "message": "sneaky"})
    assert commit.is_error
    assert text_of(commit) == (
        "[blocked] [web4-policy] rule deny-mcp__git__git_commit: "
        "mcp__git__git_commit is not allowed"
    )


def _assert_recorded(records: list[dict[str, object]], repo: git.Repo) -> None:
    assert [(r["tool"], r["status"]) for r in records] == [
        ("mcp__git__git_add", "success"),
        ("mcp__git__git_status", "success"),
        ("mcp__git__git_commit", "blocked"),
    ]
    status_record = records[1]
    assert isinstance(status_record["output"], dict)
    assert "new.txt" in str(status_record["output"]["content"])
    assert float(status_record["duration_ms"]) > 0  # type: ignore[arg-type]
    # The staged file is still uncommitted: the denied commit never reached the server.
    assert [c.message for c in repo.iter_commits()] == ["seed"]
    assert "new.txt" in [d.a_path for d in repo.index.diff("HEAD")]


@pytest.mark.slow
async def test_stdio_proxy_forwards_allowed_and_blocks_denied(
    git_repo: git.Repo, tmp_path: Path
) -> None:
    storage = tmp_path / "storage"
    proxy = StdioServerParameters(
        command=sys.executable,
        args=[STUB_PROXY, "--storage", str(storage), "proxy", "--", *git_argv(git_repo)],
        env={**os.environ, "STUB_GATE_DENY": "mcp__git__git_commit"},
    )
    async with stdio_client(proxy) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.server_info.name == "harness-audit-proxy"
        await _status_then_denied_commit(session, git_repo)
    _assert_recorded(read_records(storage), git_repo)


@pytest.mark.slow
async def test_http_proxy_forwards_allowed_and_blocks_denied(
    git_repo: git.Repo, gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    async with make_proxy([git_upstream(git_repo)]) as proxy:
        endpoints = []
        async with serving_http(proxy, endpoints.append) as stop:
            async with http_client(endpoints[0]) as session:
                await _status_then_denied_commit(session, git_repo)
            stop.set()
    _assert_recorded(gate.records(), git_repo)


@pytest.mark.slow
def test_http_request_without_the_token_is_refused(git_repo: git.Repo, gate: StubGate) -> None:
    with BackgroundProxy(gate, [git_upstream(git_repo)], report=lambda line: None) as proxy:
        assert proxy.url.startswith("http://127.0.0.1:")
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        accept = {"Accept": "application/json, text/event-stream"}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": proxy.token}):
            response = httpx2.post(proxy.url, json=ping, headers=accept | headers)
            assert response.status_code == 401
            assert response.headers["www-authenticate"].startswith("Bearer")
        allowed = httpx2.post(proxy.url, json=ping, headers=accept | proxy.endpoint.headers)
        assert allowed.status_code != 401
    assert gate.records() == []


@pytest.mark.slow
def test_cli_http_prints_the_token_once_and_refuses_strangers(
    git_repo: git.Repo, tmp_path: Path
) -> None:
    argv = [sys.executable, STUB_PROXY, "--storage", str(tmp_path / "s"), "proxy", "--session"]
    argv += ["s1", "--http", "127.0.0.1:0", "--", *git_argv(git_repo)]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        endpoint = parse_ready_line(line)
        assert endpoint is not None, line
        assert line.count(endpoint.token) == 1 and line.rstrip().endswith("session=s1")
        refused = httpx2.post(endpoint.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
    finally:
        process.terminate()
        _, rest = process.communicate(timeout=20)
    assert process.returncode == 0, rest
    assert endpoint.token not in rest
