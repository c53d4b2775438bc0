"""A rollback of an in-repository audit store by checking out a crafted tree.

Git overwrites ignored files on checkout without a word. A branch whose tree holds
``.harness-audit/…`` as it was a few records ago (built by names only the run knows, so no text
names the store — here the test builds it, as such an agent would) and a ``git_checkout`` through
the real mcp-server-git behind the real recording proxy put the old chain and its matching anchor
back. The files on disk then verify on their own; the writer's witness is what finds the loss.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from pytest_harness_audit.audit import verify_chain
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.workspace import create_workspace

STORE = ".harness-audit"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "dev",
    "GIT_AUTHOR_EMAIL": "dev@example.invalid",
    "GIT_COMMITTER_NAME": "dev",
    "GIT_COMMITTER_EMAIL": "dev@example.invalid",
}


def craft_branch(root: Path, snapshot: Path, branch: str = "evil") -> None:
    """A branch off HEAD whose tree also holds ``snapshot`` as ``.harness-audit/``."""

    def git(*args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True, env=env
        )
        return done.stdout.strip()

    base = git("rev-parse", "HEAD")
    env = {"PATH": "/usr/bin:/bin", "GIT_INDEX_FILE": str(snapshot.parent / "crafted-index")}
    git("read-tree", base, env=env)
    for file in sorted(p for p in snapshot.rglob("*") if p.is_file()):
        blob = git("hash-object", "-w", str(file))
        name = f"{STORE}/{file.relative_to(snapshot).as_posix()}"
        git("update-index", "--add", "--cacheinfo", f"100644,{blob},{name}", env=env)
    tree = git("write-tree", env=env)
    git(
        "branch",
        branch,
        git("commit-tree", tree, "-p", base, "-m", "wip", env={**env, **_IDENTITY}),
    )


async def _over_http(proxy: Any, root: Path, snapshot: Path, store: Path) -> None:
    async with (
        httpx2.AsyncClient(headers=proxy.headers, timeout=60) as http,
        streamable_http_client(proxy.url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        assert not (await session.call_tool("Bash", {"command": "echo one"})).is_error
        shutil.copytree(store, snapshot)  # the store as it was at this point
        for index in range(3):
            await session.call_tool("Bash", {"command": f"echo step{index}"})
        craft_branch(root, snapshot)
        checkout = await session.call_tool(
            "git_checkout", {"repo_path": str(root), "branch_name": "evil"}
        )
        assert not checkout.is_error
        await session.call_tool("Bash", {"command": "echo after"})


@pytest.mark.slow
def test_the_harness_finds_the_rollback_by_its_witness(tmp_path: Path) -> None:
    made = Harness.create(
        tmp_path,
        template="python-service",
        policy="permissive",
        storage_dir=tmp_path / "workspace" / STORE,
    )
    try:
        git = [sys.executable, "-m", "mcp_server_git", "--repository", str(made.root)]
        proxy = made.start_proxy(git, workspace_tools=True)
        anyio.run(_over_http, proxy, made.root, tmp_path / "snapshot", made.storage_dir)
        on_disk = verify_chain(made.storage_dir, made.session_id)
        assert on_disk.valid and on_disk.record_count == 1  # the rolled-back files agree...
        verdict, reasons = made.judge()
        assert verdict == "FAIL"  # ...but not with the head the writers kept
        assert any("witness_mismatch" in reason.text for reason in reasons)
    finally:
        made.close()


async def _over_stdio(storage: Path, root: Path, snapshot: Path) -> None:
    args = [
        "-m",
        "pytest_harness_audit",
        "--storage",
        str(storage),
        "proxy",
        "--workspace",
        str(root),
        "--session",
        "cli",
        "--preset",
        "permissive",
        "--",
        sys.executable,
        "-m",
        "mcp_server_git",
        "--repository",
        str(root),
    ]
    server = StdioServerParameters(command=sys.executable, args=args)
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("Bash", {"command": "echo one"})
        shutil.copytree(storage, snapshot)
        for index in range(3):
            await session.call_tool("Bash", {"command": f"echo step{index}"})
        craft_branch(root, snapshot)
        await session.call_tool("git_checkout", {"repo_path": str(root), "branch_name": "evil"})
        await session.call_tool("Bash", {"command": "echo after"})


@pytest.mark.slow
def test_the_standalone_proxy_leaves_evidence_of_the_rollback(tmp_path: Path) -> None:
    root = Path(create_workspace(tmp_path / "ws", "python-service").working_dir)
    storage = root / STORE
    anyio.run(_over_stdio, storage, root, tmp_path / "snapshot")
    report = verify_chain(storage, "cli")
    assert not report.valid or report.record_count == 6
