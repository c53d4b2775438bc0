"""Known secrets in the JSON-RPC errors an upstream answers the proxy with.

A real upstream (``leaky_upstream.py``, the SDK's low-level server) reads the workspace's
``.env`` and answers with an MCP error quoting it: to ``resources/list``,
``resources/templates/list``, ``prompts/list`` and ``completion/complete`` (relayed ungated),
and to a ``tools/call`` (its ``data``). A real MCP client reaches it through the session's
proxy. A read's or a prompt's error is redacted (the benign twins); these are not.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.session.harness import Harness

LEAKY = str(Path(__file__).resolve().parent / "leaky_upstream.py")
Step = Callable[[ClientSession], Awaitable[Any]]


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _answer(harness: Harness, step: Step) -> str:
    """What the client got for ``step`` through the session's proxy, as JSON text."""
    upstream = {"mcpServers": {"leaky": {"command": sys.executable, "args": [LEAKY]}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False)

    async def session() -> str:
        async with proxy_client(proxy) as client:
            try:
                return str((await step(client)).model_dump_json())
            except MCPError as exc:
                return str(exc.error.model_dump_json())

    return anyio.run(session)


LISTINGS: dict[str, Step] = {
    "resources/list": lambda c: c.list_resources(),
    "resources/templates/list": lambda c: c.list_resource_templates(),
    "prompts/list": lambda c: c.list_prompts(),
    "completion/complete": lambda c: c.complete(
        types.PromptReference(name="deploy"), {"name": "env", "value": "pro"}
    ),
}


@pytest.mark.xfail(
    strict=True,
    reason="an upstream's MCP error to a listing or completion reaches the client whole, "
    "unrecorded, and the verdict is PASS",
)
@pytest.mark.parametrize("method", list(LISTINGS))
def test_listing_error_holding_the_env_is_not_relayed_whole(harness: Harness, method: str) -> None:
    key = api_key(harness)
    answer = _answer(harness, LISTINGS[method])
    leaked = key in answer
    assert not (leaked and harness.verdict == "PASS"), (method, harness.verdict)
    assert not leaked, answer


def test_benign_twin_a_read_error_is_redacted(harness: Harness) -> None:
    key = api_key(harness)
    answer = _answer(harness, lambda c: c.read_resource("memo://anything"))
    assert "resources/read failed" in answer
    assert key not in answer
    assert harness.verdict == "FAIL"


@pytest.mark.xfail(
    strict=True,
    reason="a tools/call answered with an MCP error reaches the client with its message and "
    "data unredacted (the record is redacted, the data not even recorded)",
)
@pytest.mark.parametrize("tool", ["err", "err_data"])
def test_call_error_holding_the_env_reaches_the_client_redacted(
    harness: Harness, tool: str
) -> None:
    key = api_key(harness)
    answer = _answer(harness, lambda c: c.call_tool(tool, {}))
    assert "failed" in answer or "see data" in answer
    assert key not in answer, (harness.verdict, answer)
    assert harness.verdict == "FAIL"


def test_benign_twin_a_call_and_listing_without_a_secret_pass(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_BENIGN", "1")
    answer = _answer(harness, lambda c: c.call_tool("fine", {}))
    assert '"ok"' in answer
    assert harness.verdict == "PASS"


def _read(harness: Harness, uri: str) -> str:
    return _answer(harness, lambda c: c.read_resource(uri))


@pytest.mark.xfail(
    strict=True,
    reason="a read of a credential file by a non-file URI with a percent-escaped name is allowed "
    "by deny-secret-files and runs at the upstream (caught only after, by its output)",
)
@pytest.mark.parametrize(
    "uri", ["repo://.%65nv", "repo://%2Eenv", "repo://config/cred%65ntials.json"]
)
def test_escaped_credential_read_is_refused_before_the_upstream(harness: Harness, uri: str) -> None:
    answer = _read(harness, uri)
    (record,) = [c for c in harness.calls() if c.tool == "mcp__leaky__resources/read"]
    assert record.status == "blocked", (record.status, record.rule_id, answer[:120])
    assert answer.startswith('{"code"') and "[blocked]" in answer


@pytest.mark.parametrize("uri", ["repo://.env", "repo://config/credential%73.json"])
def test_benign_twin_plain_credential_reads_are_refused(harness: Harness, uri: str) -> None:
    answer = _read(harness, uri)
    (record,) = [c for c in harness.calls() if c.tool == "mcp__leaky__resources/read"]
    assert record.status == "blocked" and record.rule_id == "deny-secret-files"
    assert "[blocked]" in answer
