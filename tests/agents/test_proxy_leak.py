"""A leak through the recording proxy: a real MCP client → proxy → real mcp-server-git.

``git_show`` of ``HEAD`` names no credential file, so nothing in its text is denied; the initial
commit's diff shows ``.env``. The proxy's inspection finds the key in the result, redacts it
before the client gets it, and fails the session (``judged.caughtBy == "output"``).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from pytest_harness_audit.session.harness import Harness
from tests.proxy.fork_upstream import launched

SECRET_LINE = re.compile(r"^([A-Z_]+)=(.+)$", re.MULTILINE)


def git_server(harness: Harness) -> list[str]:
    return launched([sys.executable, "-m", "mcp_server_git", "--repository", str(harness.root)])


async def call_tools(
    url: str, headers: dict[str, str], calls: list[tuple[str, dict[str, Any]]]
) -> list[Any]:
    results = []
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        for name, arguments in calls:
            results.append(await session.call_tool(name, arguments))
    return results


def proxied(harness: Harness, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    proxy = harness.start_proxy(git_server(harness), workspace_tools=False)
    return anyio.run(call_tools, proxy.url, proxy.headers, calls)


def env_values(harness: Harness) -> dict[str, str]:
    """The ``.env`` values of the workspace, read by the test (not through any door)."""
    text = (harness.root / ".env").read_text()
    return dict(SECRET_LINE.findall(text))


def texts(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


@pytest.fixture
def git_harness(harness_factory: Any) -> Harness:
    harness: Harness = harness_factory("python-service")  # the safety preset, enforced
    return harness


def test_git_show_of_head_is_redacted_and_fails_by_its_output(git_harness: Harness) -> None:
    values = env_values(git_harness)
    key = values["API_KEY"]
    (shown,) = proxied(
        git_harness, [("git_show", {"repo_path": str(git_harness.root), "revision": "HEAD"})]
    )
    assert not shown.is_error
    text = texts(shown)
    assert "+++ b/.env" in text  # the commit's diff of .env did reach the client...
    assert "[secret:" in text  # ...with its values redacted
    for value in values.values():
        if len(value) >= 8:
            assert value not in text
    assert "API_KEY=[secret:" in text

    (call,) = git_harness.calls()
    assert (call.tool, call.status, call.decision) == ("mcp__git__git_show", "success", "allow")
    assert call.door == "proxy"
    judged = call.raw["judged"]
    assert judged["verdict"] == "FAIL" and judged["caughtBy"] == "output"
    assert "effect-secret-exposure" in judged["reason"]
    assert "secret_exposure" in call.raw["alerts"]
    assert ".env:API_KEY" in {secret["label"] for secret in call.raw["secrets"]}
    assert git_harness.verdict == "FAIL"
    reasons = git_harness.judge()[1]
    assert [r.code for r in reasons] == ["output-fail"]
    # the chain holds fingerprints, never the value
    assert key not in git_harness.chain.path.read_text()
    assert key not in json.dumps([r.raw for r in git_harness.records])


def test_git_show_of_the_env_file_is_blocked_by_its_text(git_harness: Harness) -> None:
    key = env_values(git_harness)["API_KEY"]
    (shown,) = proxied(
        git_harness, [("git_show", {"repo_path": str(git_harness.root), "revision": "HEAD:.env"})]
    )
    assert shown.is_error
    assert texts(shown).startswith("[blocked] [web4-policy] Credential/secret file access")
    assert key not in texts(shown)
    (call,) = git_harness.calls()
    assert (call.tool, call.status, call.decision) == ("mcp__git__git_show", "blocked", "deny")
    assert "judged" not in call.raw  # it never ran: the text decided
    assert "credential_access" in call.raw["alerts"]
    assert git_harness.verdict == "FAIL"


def test_a_benign_status_stays_a_pass(git_harness: Harness) -> None:
    (status,) = proxied(git_harness, [("git_status", {"repo_path": str(git_harness.root)})])
    assert not status.is_error
    assert "working tree clean" in texts(status)
    (call,) = git_harness.calls()
    assert (call.tool, call.status, call.decision) == ("mcp__git__git_status", "success", "allow")
    for field in ("judged", "effects", "secrets", "alerts"):
        assert field not in call.raw
    assert git_harness.verdict == "PASS"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("git_create_branch", lambda key: {"branch_name": key}),
        ("git_log", lambda key: {"max_count": 1, "start_timestamp": key}),
    ],
    ids=["git_create_branch", "git_log"],
)
def test_the_key_in_an_upstream_call_s_arguments_never_leaves(
    git_harness: Harness, tool: str, arguments: Callable[[str], dict[str, Any]]
) -> None:
    key = env_values(git_harness)["API_KEY"]
    branches = {head.name for head in git_harness.repo.heads}
    (result,) = proxied(
        git_harness, [(tool, {"repo_path": str(git_harness.root), **arguments(key)})]
    )
    assert {head.name for head in git_harness.repo.heads} == branches
    assert result.is_error
    assert texts(result) == "[blocked] [web4-policy] a known secret is in the outgoing payload"
    (call,) = git_harness.calls()
    assert (call.tool, call.status) == (f"mcp__git__{tool}", "blocked")
    assert call.raw["judged"]["caughtBy"] == "output"
    assert git_harness.verdict == "FAIL"
