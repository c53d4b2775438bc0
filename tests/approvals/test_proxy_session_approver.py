"""The test's scripted approver answers at the harness's recording proxy too.

``harness.approver(...)`` and the ``harness_approvals`` marker set the session's approver; the
recording proxy judges its calls with a gate of its own on the same session. That gate must ask
the session's approver before the client: a call the test's approver rejects may not run because
the client (an MCP client that declared ``elicitation``) would accept it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.streamable_http import streamable_http_client

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.proxy_session import RecordingProxySession

Factory = Callable[..., Harness]
DEPLOY = {"file_path": "deploy/app.yaml", "content": "replicas: 2\n"}


@asynccontextmanager
async def http_client(proxy: RecordingProxySession, **options: Any) -> AsyncIterator[ClientSession]:
    """The official MCP client on the proxy's streamable HTTP endpoint, with its token."""
    async with (
        httpx2.AsyncClient(headers=proxy.headers) as http,
        streamable_http_client(proxy.url, http_client=http) as (read, write),
        ClientSession(read, write, **options) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


class _AcceptingUser:
    """An elicitation callback that approves every call it is asked about."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked += 1
        return types.ElicitResult(action="accept", content={"decision": "approve"})


def _write_through_proxy(harness: Harness, user: _AcceptingUser | None) -> types.CallToolResult:
    proxy = harness.start_proxy(workspace_tools=True)
    options: dict[str, Any] = {} if user is None else {"elicitation_callback": user}

    async def call() -> types.CallToolResult:
        async with http_client(proxy, **options) as session:
            return await session.call_tool("Write", DEPLOY)

    return anyio.run(call)


def test_a_scripted_reject_holds_against_a_client_that_approves(
    harness_factory: Factory, ask_policy: Policy
) -> None:
    harness = harness_factory(policy=ask_policy)
    harness.approver(lambda call: ("reject", "change freeze"), name="release-manager")
    user = _AcceptingUser()
    result = _write_through_proxy(harness, user)
    assert result.is_error
    assert text_of(result) == "[blocked] [web4-approval] reject: change freeze"
    assert not (harness.root / "deploy/app.yaml").exists()
    assert user.asked == 0
    [call] = harness.calls()
    assert call.raw["approval"]["approver"] == "release-manager"


@pytest.mark.harness_approvals({"*": "reject"}, name="marker-approver")
def test_the_approvals_marker_answers_at_the_proxy(
    harness_factory: Factory, ask_policy: Policy
) -> None:
    harness = harness_factory(policy=ask_policy)
    result = _write_through_proxy(harness, _AcceptingUser())
    assert result.is_error
    assert not (harness.root / "deploy/app.yaml").exists()
    [call] = harness.calls()
    assert call.raw["approval"]["approver"] == "marker-approver"


def test_an_approver_that_raises_at_the_proxy_fails_the_session(
    harness_factory: Factory, ask_policy: Policy
) -> None:
    harness = harness_factory(policy=ask_policy)

    def broken(call: object) -> str:
        raise RuntimeError("approval service down")

    harness.approver(broken)
    result = _write_through_proxy(harness, _AcceptingUser())
    assert result.is_error
    assert "raised RuntimeError: approval service down" in text_of(result)
    assert not (harness.root / "deploy/app.yaml").exists()
    assert harness.verdict.name == "FAIL"


def test_without_a_scripted_approver_the_client_still_answers(
    harness_factory: Factory, ask_policy: Policy
) -> None:
    harness = harness_factory(policy=ask_policy)
    user = _AcceptingUser()
    result = _write_through_proxy(harness, user)
    assert not result.is_error, text_of(result)
    assert user.asked == 1
    assert (harness.root / "deploy/app.yaml").exists()
    [call] = harness.calls()
    assert call.raw["approval"]["approver"].startswith("client:")


def test_an_approver_set_after_the_proxy_started_answers_too(
    harness_factory: Factory, ask_policy: Policy, tmp_path: Path
) -> None:
    harness = harness_factory(policy=ask_policy)
    proxy = harness.start_proxy(workspace_tools=True)
    harness.approver(lambda call: "reject")
    user = _AcceptingUser()

    async def call() -> types.CallToolResult:
        async with http_client(proxy, elicitation_callback=user) as session:
            return await session.call_tool("Write", DEPLOY)

    assert anyio.run(call).is_error
    assert user.asked == 0
    assert not (harness.root / "deploy/app.yaml").exists()
