"""Known secrets in the JSON-RPC errors an upstream answers the proxy with.

A real upstream (``leaky_upstream.py``, the SDK's low-level server) reads the workspace's
``.env`` and answers with an MCP error quoting it: to ``resources/list``,
``resources/templates/list``, ``prompts/list`` and ``completion/complete`` (relayed ungated),
and to a ``tools/call`` (its ``data``). A real MCP client reaches it through the session's
proxy. A read's or a prompt's error is redacted (the benign twins), and so is every other
relayed error: recorded, redacted for the client (its code kept), judged. An error without a
secret is relayed unchanged and unrecorded.
"""

from __future__ import annotations

import json
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

SLOW = pytest.mark.slow

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


@pytest.mark.parametrize(
    "method",
    [m if m == "resources/list" else pytest.param(m, marks=SLOW) for m in LISTINGS],
)
def test_listing_error_holding_the_env_is_not_relayed_whole(harness: Harness, method: str) -> None:
    key = api_key(harness)
    answer = _answer(harness, LISTINGS[method])
    leaked = key in answer
    assert not (leaked and harness.verdict == "PASS"), (method, harness.verdict)
    assert not leaked, answer
    assert json.loads(answer)["code"] == types.INVALID_PARAMS  # the upstream's code, kept
    (record,) = [c for c in harness.calls() if c.tool == f"mcp__leaky__{method}"]
    assert record.status == "error"
    assert harness.verdict == "FAIL"


@SLOW
@pytest.mark.parametrize("method", list(LISTINGS))
def test_benign_twin_a_listing_error_without_a_secret_is_relayed_unchanged(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    monkeypatch.setenv("LEAKY_BENIGN", "1")
    answer = json.loads(_answer(harness, LISTINGS[method]))
    assert answer["code"] == types.INVALID_PARAMS
    assert answer["message"] == f"{method} failed: 'nothing to see'"
    assert not [c for c in harness.calls() if c.tool == f"mcp__leaky__{method}"]
    assert harness.verdict == "PASS"


def test_benign_twin_a_read_error_is_redacted(harness: Harness) -> None:
    key = api_key(harness)
    answer = _answer(harness, lambda c: c.read_resource("memo://anything"))
    assert "resources/read failed" in answer
    assert key not in answer
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("tool", [pytest.param("err", marks=SLOW), "err_data"])
def test_call_error_holding_the_env_reaches_the_client_redacted(
    harness: Harness, tool: str
) -> None:
    key = api_key(harness)
    answer = _answer(harness, lambda c: c.call_tool(tool, {}))
    assert "failed" in answer or "see data" in answer
    assert key not in answer, (harness.verdict, answer)
    assert harness.verdict == "FAIL"
    error = json.loads(answer)
    assert error["code"] == types.INVALID_PARAMS  # still a protocol error, its code kept
    (record,) = [c for c in harness.calls() if c.tool == f"mcp__leaky__{tool}"]
    recorded = json.dumps(record.raw)
    assert key not in recorded
    if tool == "err_data":
        # the data is in the record and in the answer, redacted: not only "see data"
        assert error["data"] is not None and "API_KEY" in error["data"]
        assert "API_KEY" in recorded


@SLOW
def test_benign_twin_a_call_error_without_a_secret_is_relayed_unchanged(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_BENIGN", "1")
    error = json.loads(_answer(harness, lambda c: c.call_tool("err_data", {})))
    assert error == {"code": types.INVALID_PARAMS, "message": "see data", "data": "nothing to see"}
    assert harness.verdict == "PASS"


@SLOW
def test_benign_twin_a_call_and_listing_without_a_secret_pass(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_BENIGN", "1")
    answer = _answer(harness, lambda c: c.call_tool("fine", {}))
    assert '"ok"' in answer
    assert harness.verdict == "PASS"


def _read(harness: Harness, uri: str) -> str:
    return _answer(harness, lambda c: c.read_resource(uri))


@pytest.mark.parametrize(
    "uri",
    [
        pytest.param("repo://.%65nv", marks=SLOW),
        "repo://%2Eenv",
        pytest.param("repo://config/cred%65ntials.json", marks=SLOW),
        pytest.param("repo://%252Eenv", marks=SLOW),
        pytest.param("repo://docs/../.%45NV", marks=SLOW),
    ],
)
def test_escaped_credential_read_is_refused_before_the_upstream(harness: Harness, uri: str) -> None:
    answer = _read(harness, uri)
    (record,) = [c for c in harness.calls() if c.tool == "mcp__leaky__resources/read"]
    assert record.status == "blocked", (record.status, record.rule_id, answer[:120])
    assert answer.startswith('{"code"') and "[blocked]" in answer


@SLOW
@pytest.mark.parametrize("uri", ["repo://.env", "repo://config/credential%73.json"])
def test_benign_twin_plain_credential_reads_are_refused(harness: Harness, uri: str) -> None:
    answer = _read(harness, uri)
    (record,) = [c for c in harness.calls() if c.tool == "mcp__leaky__resources/read"]
    assert record.status == "blocked" and record.rule_id == "deny-secret-files"
    assert "[blocked]" in answer
