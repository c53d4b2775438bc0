"""Stdio upstreams start in the session's workspace: README's `--repository .` serves the
throw-away workspace, never the repository the caller (pytest, a user) happens to stand in."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import git
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from pytest_harness_audit.doors.proxy import (
    ProxyError,
    StdioUpstream,
    in_workspace,
    parse_ready_line,
)
from pytest_harness_audit.session.harness import Harness
from tests.proxy.fork_upstream import launched

GIT_DOT = [sys.executable, "-m", "mcp_server_git", "--repository", "."]


@pytest.fixture
def caller_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> git.Repo:
    """A repository of the caller's own, the current directory while the test runs."""
    repo = git.Repo.init(tmp_path / "caller")
    with repo.config_writer() as config:
        config.set_value("user", "name", "Caller")
        config.set_value("user", "email", "caller@example.invalid")
    (tmp_path / "caller" / "mine.txt").write_text("private\n")
    repo.index.add(["mine.txt"])
    repo.index.commit("caller-private-commit")
    (tmp_path / "caller" / "dirty.txt").write_text("uncommitted\n")
    monkeypatch.chdir(tmp_path / "caller")
    return repo


async def _git_texts(url: str, headers: dict[str, str]) -> tuple[str, str]:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        texts = []
        for tool in ("git_log", "git_status"):
            result = await session.call_tool(tool, {"repo_path": "."})
            assert not result.is_error, result
            texts.append("".join(getattr(part, "text", "") for part in result.content))
        return texts[0], texts[1]


def _assert_workspace_not_caller(log: str, status: str, workspace: git.Repo) -> None:
    assert workspace.head.commit.hexsha in log
    assert "caller-private-commit" not in log
    assert "dirty.txt" not in status


def test_harness_proxy_serves_the_workspace_repository(
    tmp_path: Path, caller_repo: git.Repo
) -> None:
    harness = Harness.create(tmp_path / "s", template="python-service", policy="safety")
    try:
        proxy = harness.start_proxy(launched(GIT_DOT), workspace_tools=False)
        log, status = anyio.run(_git_texts, proxy.url, proxy.headers)
        _assert_workspace_not_caller(log, status, harness.repo)
        assert [call.tool for call in harness.calls()] == [
            "mcp__git__git_log",
            "mcp__git__git_status",
        ]
    finally:
        harness.close()


@pytest.mark.slow
def test_cli_proxy_with_workspace_serves_the_workspace_repository(
    tmp_path: Path, caller_repo: git.Repo
) -> None:
    workspace = Harness.create(tmp_path / "s", template="python-service")
    workspace.close()
    argv = [sys.executable, "-m", "pytest_harness_audit", "--storage", str(tmp_path / "store")]
    argv += ["proxy", "--workspace", str(workspace.root), "--http", "127.0.0.1:0", "--", *GIT_DOT]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        endpoint = None
        deadline = time.monotonic() + 60
        while endpoint is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            assert line, "the proxy exited before serving"
            endpoint = parse_ready_line(line)
        assert endpoint is not None
        log, status = anyio.run(_git_texts, endpoint.url, dict(endpoint.headers))
        _assert_workspace_not_caller(log, status, workspace.repo)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_workspace_placeholder_and_relative_cwd(tmp_path: Path) -> None:
    spec = StdioUpstream(
        name="s", command="py", args=("--root", "{workspace}/sub"), env={"W": "{workspace}"}
    )
    other = StdioUpstream(name="t", command="py", cwd="tools")
    placed = in_workspace([spec, other], tmp_path)
    root = str(tmp_path.resolve())
    assert placed[0] == StdioUpstream(
        name="s", command="py", args=("--root", f"{root}/sub"), env={"W": root}, cwd=root
    )
    assert placed[1].cwd == f"{root}/tools"
    assert in_workspace([other], None) == [other]  # no workspace: as given


def test_workspace_placeholder_without_a_workspace_is_one_clear_error() -> None:
    spec = StdioUpstream(name="git", command="py", args=("--repository", "{workspace}"))
    with pytest.raises(ProxyError) as caught:
        in_workspace([spec], None)
    assert str(caught.value) == (
        "upstream 'git': {workspace} is used, but there is no workspace (give --workspace DIR)"
    )


@pytest.mark.slow
def test_cli_placeholder_without_workspace_exits_2_with_one_line(tmp_path: Path) -> None:
    argv: list[Any] = [sys.executable, "-m", "pytest_harness_audit", "--storage", str(tmp_path)]
    argv += ["proxy", "--", *GIT_DOT[:-1], "{workspace}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "harness-audit: error: upstream 'git': {workspace} is used, but there is no workspace "
        "(give --workspace DIR)"
    ]


def test_the_stdio_command_carries_the_workspace_path_for_a_placeholder(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path / "s", template="python-service")
    try:
        argv = [*GIT_DOT[:-1], "{workspace}"]
        proxy = harness.start_proxy(argv, workspace_tools=False)
        command = proxy.stdio_command
        assert "{workspace}" not in " ".join(command)
        assert command[-1] == str(harness.root)
    finally:
        harness.close()
