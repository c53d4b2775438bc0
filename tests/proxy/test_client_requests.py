"""Requests an upstream sends to the client during a call: sampling, elicitation, roots."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from proxy_support import (
    ASKING_SERVER,
    STUB_PROXY,
    asking_upstream,
    http_client,
    memory_client,
    text_of,
)
from stub_gate import StubGate, read_records

from pytest_harness_audit.doors.proxy import BackgroundProxy, RecordingProxy
from pytest_harness_audit.doors.proxy.client_requests import CallOrigin, InFlightCalls, NoOrigin

pytestmark = pytest.mark.anyio

ROOT = "file:///srv/project"


class FakeClient:
    """Callbacks of an official ClientSession that answer like a user and a model would."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        content = params.messages[0].content
        assert isinstance(content, types.TextContent)
        self.asked.append(f"sampling: {content.text}")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text=content.text.upper()), model="stub"
        )

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(f"elicitation: {params.message}")
        return types.ElicitResult(action="accept", content={"colour": "teal"})

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri=ROOT, name="project")])

    def options(self) -> dict[str, Any]:
        return {
            "sampling_callback": self.sample,
            "elicitation_callback": self.elicit,
            "list_roots_callback": self.list_roots,
        }


def summary(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(r["tool"], r["status"]) for r in records]


async def test_sampling_elicitation_and_roots_reach_the_client_and_are_recorded(
    gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    client = FakeClient()
    async with (
        make_proxy([asking_upstream()]) as proxy,
        memory_client(proxy, **client.options()) as session,
    ):
        with anyio.fail_after(20):
            sampled = await session.call_tool("ask_model", {"prompt": "hello"})
            elicited = await session.call_tool("ask_user", {"question": "Favourite colour?"})
            rooted = await session.call_tool("roots", {})
    assert (sampled.is_error, text_of(sampled)) == (False, "stub said: HELLO")
    assert (elicited.is_error, text_of(elicited)) == (False, "accept: teal")
    assert (rooted.is_error, text_of(rooted)) == (False, ROOT)
    assert client.asked == ["sampling: hello", "elicitation: Favourite colour?", "roots"]

    records = gate.records()
    assert summary(records) == [
        ("mcp__ask__sampling/createMessage", "success"),
        ("mcp__ask__ask_model", "success"),
        ("mcp__ask__elicitation/create", "success"),
        ("mcp__ask__ask_user", "success"),
        ("mcp__ask__roots/list", "success"),
        ("mcp__ask__roots", "success"),
    ]
    sampling = records[0]
    assert sampling["params"]["messages"][0]["content"]["text"] == "hello"
    assert sampling["params"]["maxTokens"] == 20
    assert sampling["output"]["content"]["text"] == "HELLO"
    assert records[2]["output"] == {"action": "accept", "content": {"colour": "teal"}}
    assert records[4]["output"]["roots"][0]["uri"] == ROOT


async def test_a_client_without_the_capability_is_not_asked_and_the_upstream_is_told(
    gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    def refusal(method: str, capability: str) -> str:
        return f"{method} is not supported by the client (it declared no '{capability}' capability)"

    async with make_proxy([asking_upstream()]) as proxy, memory_client(proxy) as session:
        with anyio.fail_after(20):
            # ask_model turns the refusal into an isError result ...
            sampled = await session.call_tool("ask_model", {"prompt": "hello"})
            # ... the other tools let it propagate: the upstream answers with a JSON-RPC error.
            with pytest.raises(MCPError) as elicit_error:
                await session.call_tool("ask_user", {"question": "Colour?"})
            with pytest.raises(MCPError) as roots_error:
                await session.call_tool("roots", {})
            await session.send_ping()
    sampling_refusal = refusal("sampling/createMessage", "sampling")
    assert sampled.is_error
    assert text_of(sampled).endswith(f"the client could not sample: {sampling_refusal}")
    assert elicit_error.value.error.message == refusal("elicitation/create", "elicitation")
    assert elicit_error.value.code == types.METHOD_NOT_FOUND
    assert roots_error.value.error.message == refusal("roots/list", "roots")

    records = gate.records()
    assert [(r["tool"], r["status"], r["error_message"]) for r in records] == [
        ("mcp__ask__sampling/createMessage", "error", sampling_refusal),
        ("mcp__ask__ask_model", "error", text_of(sampled)),
        ("mcp__ask__elicitation/create", "error", elicit_error.value.error.message),
        ("mcp__ask__ask_user", "error", elicit_error.value.error.message),
        ("mcp__ask__roots/list", "error", roots_error.value.error.message),
        ("mcp__ask__roots", "error", roots_error.value.error.message),
    ]


async def test_the_clients_own_error_goes_back_to_the_upstream(
    gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    async def refuse(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.ErrorData:
        return types.ErrorData(code=-1, message="User rejected sampling request")

    async with (
        make_proxy([asking_upstream()]) as proxy,
        memory_client(proxy, sampling_callback=refuse) as session,
    ):
        with anyio.fail_after(20):
            result = await session.call_tool("ask_model", {"prompt": "hello"})
    assert result.is_error and "User rejected sampling request" in text_of(result)
    sampling, call = gate.records()
    assert (sampling["tool"], sampling["status"]) == ("mcp__ask__sampling/createMessage", "error")
    assert sampling["error_message"] == "User rejected sampling request"
    assert (call["tool"], call["status"]) == ("mcp__ask__ask_model", "error")


async def test_the_gate_can_refuse_a_relayed_request(tmp_path: Path, reports: list[str]) -> None:
    gate = StubGate(tmp_path / "deny", deny=["mcp__ask__sampling/createMessage"])
    client = FakeClient()
    async with (
        RecordingProxy(gate, [asking_upstream()], report=reports.append) as proxy,
        memory_client(proxy, **client.options()) as session,
    ):
        with anyio.fail_after(20):
            result = await session.call_tool("ask_model", {"prompt": "hello"})
    assert result.is_error
    assert "the client could not sample: [blocked] [web4-policy]" in text_of(result)
    assert client.asked == []
    assert summary(gate.records()) == [
        ("mcp__ask__sampling/createMessage", "blocked"),
        ("mcp__ask__ask_model", "error"),
    ]


async def test_a_roots_change_of_the_client_reaches_the_upstream(
    make_proxy: Callable[..., RecordingProxy],
) -> None:
    client = FakeClient()
    async with (
        make_proxy([asking_upstream()]) as proxy,
        memory_client(proxy, **client.options()) as session,
    ):
        with anyio.fail_after(20):
            assert text_of(await session.call_tool("roots_changes", {})) == "0"
            await session.send_notification(types.RootsListChangedNotification())
            while (count := text_of(await session.call_tool("roots_changes", {}))) == "0":
                await anyio.sleep(0.01)  # the notification has no answer to wait for
    assert count == "1"


@pytest.mark.slow
def test_relayed_requests_travel_over_the_proxys_http_transport(gate: StubGate) -> None:
    client = FakeClient()

    async def ask(proxy: BackgroundProxy) -> list[str]:
        async with http_client(proxy.endpoint, **client.options()) as session:
            with anyio.fail_after(20):
                return [
                    text_of(await session.call_tool("ask_model", {"prompt": "over http"})),
                    text_of(await session.call_tool("ask_user", {"question": "Colour?"})),
                    text_of(await session.call_tool("roots", {})),
                ]

    with BackgroundProxy(gate, [asking_upstream()], report=lambda line: None) as proxy:
        answers = anyio.run(ask, proxy)
    assert answers == ["stub said: OVER HTTP", "accept: teal", ROOT]
    assert [tool for tool, _ in summary(gate.records())] == [
        "mcp__ask__sampling/createMessage",
        "mcp__ask__ask_model",
        "mcp__ask__elicitation/create",
        "mcp__ask__ask_user",
        "mcp__ask__roots/list",
        "mcp__ask__roots",
    ]


@pytest.mark.slow
def test_relayed_requests_travel_through_the_stdio_proxy_command(tmp_path: Path) -> None:
    client = FakeClient()
    params = StdioServerParameters(
        command=sys.executable,
        args=[STUB_PROXY, "--storage", str(tmp_path), "proxy", "--", sys.executable, ASKING_SERVER],
        env={**os.environ, "STUB_GATE_DENY": ""},
    )

    async def ask() -> str:
        async with (
            stdio_client(params, errlog=subprocess.DEVNULL) as (read, write),  # type: ignore[arg-type]
            ClientSession(read, write, **client.options()) as session,
        ):
            await session.initialize()
            with anyio.fail_after(20):
                return text_of(await session.call_tool("ask_model", {"prompt": "piped"}))

    assert anyio.run(ask) == "stub said: PIPED"
    assert summary(read_records(tmp_path)) == [
        ("mcp__asking_server.py__sampling/createMessage", "success"),
        ("mcp__asking_server.py__ask_model", "success"),
    ]


# -- which client is asked ---------------------------------------------------------------------


def _origin(connection: object, request_id: int) -> CallOrigin:
    return CallOrigin(session=None, request_id=request_id, connection=connection)  # type: ignore[arg-type]


def test_the_most_recent_call_of_the_one_client_in_flight_is_asked() -> None:
    calls = InFlightCalls()
    client = object()
    with calls.track(_origin(client, 1)), calls.track(_origin(client, 2)):
        assert calls.origin("up").request_id == 2
    with pytest.raises(NoOrigin, match="no client call is in progress on upstream 'up'"):
        calls.origin("up")


def test_calls_of_several_clients_in_flight_are_not_guessed_between() -> None:
    calls = InFlightCalls()
    with (
        calls.track(_origin(object(), 1)),
        calls.track(_origin(object(), 2)),
        pytest.raises(NoOrigin, match="calls from 2 clients are in progress"),
    ):
        calls.origin("up")
