"""The real command: ``harness-audit proxy`` with the real policy, gate and audit chain."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import git
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from proxy_support import git_argv, text_of

from pytest_harness_audit.doors.proxy import proxy_command

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

POLICY = """\
defaultPolicy: allow
enforce: true
rules:
  - id: no-commits
    name: No commits through the proxy
    priority: 1
    decision: deny
    reason: commits need a human
    match:
      tools: [mcp__git__git_commit]
"""


def _chain_lines(storage: Path, session: str) -> list[bytes]:
    return (storage / "audit" / f"{session}.jsonl").read_bytes().splitlines()


async def test_cli_records_into_a_verifiable_chain(git_repo: git.Repo, tmp_path: Path) -> None:
    storage, policy = tmp_path / "storage", tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    argv = proxy_command(
        storage=storage, session="proxy-e2e", policy=policy, upstream=git_argv(git_repo)
    )
    parameters = StdioServerParameters(command=argv[0], args=argv[1:])
    path = str(git_repo.working_dir)
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        status = await session.call_tool("git_status", {"repo_path": path})
        assert "new.txt" in text_of(status)
        commit = await session.call_tool("git_commit", {"repo_path": path, "message": "m"})
        assert commit.is_error
        assert text_of(commit) == "[blocked] [web4-policy] commits need a human"
    assert [c.message for c in git_repo.iter_commits()] == ["seed"]

    lines = _chain_lines(storage, "proxy-e2e")
    records = [json.loads(line) for line in lines]
    calls = [r for r in records if r.get("kind", "call") == "call"]
    # The gate judged the upstream's tools as mcp__git__<tool>, so the built-in categories apply.
    assert [(r["tool"], r["category"], r["result"]["status"]) for r in calls] == [
        ("mcp__git__git_status", "file_read", "success"),
        ("mcp__git__git_commit", "file_write", "blocked"),
    ]
    assert "rule:no-commits" in calls[1]["rules"]["constraints"]
    # The hash links of DESIGN §4: genesis, then SHA-256 of the previous line's bytes.
    previous = "genesis"
    for line, record in zip(lines, records, strict=True):
        assert record["provenance"]["prevRecordHash"] == previous
        previous = hashlib.sha256(line).hexdigest()
    from pytest_harness_audit.audit import verify_chain

    report = verify_chain(storage, "proxy-e2e")
    assert report.valid and report.record_count == len(lines)
    assert report.anchor_state == "current"


def test_proxy_command_runs_with_the_current_interpreter(tmp_path: Path) -> None:
    argv = proxy_command(storage=tmp_path, upstream=["x"])
    assert argv[:3] == [sys.executable, "-m", "pytest_harness_audit"]
