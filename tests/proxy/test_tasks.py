"""MCP tasks (2025-11-25) through the proxy: a call is gated, run and inspected while the client
waits, whatever it asked for.

The upstream (``tasks_server.py``) runs a ``tools/call`` carrying ``task`` as a task: it answers
with a ``CreateTaskResult`` at once and keeps the result for ``tasks/result``, out of the
call's sight. The proxy announces no ``tasks`` capability and lists no task support, runs a
call that asks for a task anyway as a plain call (the upstream never sees ``task``), so its
decision, its effects and its result are the call's record, and does not serve ``tasks/*``.
An upstream's ``notifications/tasks/status`` never reaches the client.

The client is the official one; the SDK has no client side of tasks (its ``tools/call`` result
must be a ``CallToolResult``), so a task-augmented call is sent through its raw request path,
and what the proxy sends back is read on the wire.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams
from secret_support import api_key, service_harness

from pytest_harness_audit.doors.proxy import RecordingProxy, StdioUpstream
from pytest_harness_audit.session.harness import Harness

TASKS_SERVER = str(Path(__file__).resolve().parent / "tasks_server.py")
TASK = {"ttl": 60_000}
TASK_METHODS = ["tasks/list", "tasks/get", "tasks/result", "tasks/cancel"]

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


class _Tap:
    """The client's read stream, keeping every message the proxy sent."""

    def __init__(self, inner: Any, heard: list[Any]) -> None:
        self._inner = inner
        self._heard = heard

    async def receive(self) -> Any:
        message = await self._inner.receive()
        self._heard.append(message)
        return message

    def __aiter__(self) -> _Tap:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Tap:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Client:
    """An official client of the proxy, with the raw request path and the wire it heard."""

    def __init__(self, session: ClientSession, heard: list[Any]) -> None:
        self.session = session
        self.heard = heard
        #: What the server announced at ``initialize``.
        self.capabilities: Any = None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The raw answer to ``method`` (the SDK validates none of it)."""
        answer: dict[str, Any] = await self.session._dispatcher.send_raw_request(method, params, {})
        return answer

    async def call_as_task(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A ``tools/call`` of ``name`` asking for task-augmented execution."""
        return await self.request(
            "tools/call", {"name": name, "arguments": arguments, "task": TASK}
        )

    def wire(self) -> str:
        """Everything the proxy sent the client, as text."""
        return "\n".join(repr(message) for message in self.heard)


def _upstream(harness: Harness) -> StdioUpstream:
    received = harness.root.parent / "received.jsonl"
    env = {"RECEIVED": str(received)}
    return StdioUpstream("jobs", sys.executable, (TASKS_SERVER,), env, str(harness.root))


def _received(harness: Harness) -> list[dict[str, Any]]:
    """The requests the upstream received (method, and whether it carried ``task``)."""
    path = harness.root.parent / "received.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


@asynccontextmanager
async def _proxied(harness: Harness) -> AsyncIterator[_Client]:
    heard: list[Any] = []
    async with (
        RecordingProxy(harness.gate, [_upstream(harness)], report=lambda _: None) as proxy,
        create_client_server_memory_streams() as (client_streams, server_streams),
        anyio.create_task_group() as group,
    ):
        server = proxy.server
        group.start_soon(server.run, *server_streams, server.create_initialization_options())
        read, write = client_streams
        async with ClientSession(_Tap(read, heard), write) as session:
            client = _Client(session, heard)
            client.capabilities = (await session.initialize()).capabilities
            yield client
            await anyio.sleep(0.2)  # a notification travels apart from the answers
        group.cancel_scope.cancel()


def _text(answer: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in answer.get("content", []))


def test_the_upstream_runs_a_call_asking_for_a_task_as_a_task(harness: Harness) -> None:
    """Without the proxy, the upstream answers a task request with a task, and the call's
    result (the workspace's key) comes through ``tasks/result`` only."""
    key = api_key(harness)
    parameters = StdioServerParameters(
        command=sys.executable, args=[TASKS_SERVER], cwd=str(harness.root)
    )

    async def session() -> tuple[Any, ...]:
        async with stdio_client(parameters) as streams, ClientSession(*streams) as direct:
            ready = await direct.initialize()
            listed = (await direct.list_tools()).tools
            client = _Client(direct, [])
            created = await client.call_as_task("show_settings", {})
            task_id = created["task"]["taskId"]
            payload = await client.request("tasks/result", {"taskId": task_id})
            return ready.capabilities.tasks, listed, created, payload

    capability, listed, created, payload = anyio.run(session)
    assert capability is not None and capability.requests is not None
    assert {tool.execution.task_support for tool in listed if tool.execution} == {"optional"}
    assert "content" not in created
    assert key in _text(payload)


def test_the_proxy_announces_no_tasks_and_lists_no_task_support(harness: Harness) -> None:
    async def session() -> tuple[Any, ...]:
        async with _proxied(harness) as client:
            listed = await client.request("tools/list", {})
            return client.capabilities, listed

    capabilities, listed = anyio.run(session)
    assert capabilities.tasks is None
    names = [tool["name"] for tool in listed["tools"]]
    assert names == ["write_note", "show_settings", "echo", "background_note"]
    assert all("execution" not in tool for tool in listed["tools"])


def test_a_denied_call_asking_for_a_task_never_reaches_the_upstream(harness: Harness) -> None:
    """The attack: a credential-file write sent as a task, hoping the gate sees a task
    handle instead of a call. It is refused before the upstream hears of it."""
    env = (harness.root / ".env").read_text(encoding="utf-8")

    async def session() -> dict[str, Any]:
        async with _proxied(harness) as client:
            return await client.call_as_task("write_note", {"path": ".env", "text": "API_KEY=x"})

    answer = anyio.run(session)
    assert answer["isError"] is True
    assert _text(answer).startswith("[blocked] [web4-policy]")
    assert (harness.root / ".env").read_text(encoding="utf-8") == env
    assert [r["method"] for r in _received(harness)] == ["initialize", "tools/list"]
    assert [(c.tool, c.status) for c in harness.calls()] == [("mcp__jobs__write_note", "blocked")]
    assert harness.verdict == "FAIL"


def test_an_allowed_call_asking_for_a_task_runs_as_a_recorded_plain_call(
    harness: Harness,
) -> None:
    """The look-alike: an ordinary write asked for as a task runs, and the client gets its
    result at once, a plain ``CallToolResult`` it can read."""

    async def session() -> dict[str, Any]:
        async with _proxied(harness) as client:
            return await client.call_as_task("write_note", {"path": "notes.txt", "text": "hi"})

    answer = anyio.run(session)
    assert answer == {"content": [{"type": "text", "text": "wrote notes.txt"}], "isError": False}
    assert (harness.root / "notes.txt").read_text(encoding="utf-8") == "hi"
    assert {"method": "tools/call", "task": False} in _received(harness)
    assert [(c.tool, c.status) for c in harness.calls()] == [("mcp__jobs__write_note", "success")]
    assert harness.verdict == "PASS"


def test_a_secret_in_the_result_of_a_call_asking_for_a_task_is_redacted(
    harness: Harness,
) -> None:
    """The attack: the key fetched as a task, for its result to come back through
    ``tasks/result`` past the result inspection. The result comes back with the call,
    redacted, and the session fails."""
    key = api_key(harness)

    async def session() -> tuple[dict[str, Any], str]:
        async with _proxied(harness) as client:
            answer = await client.call_as_task("show_settings", {})
            return answer, client.wire()

    answer, wire = anyio.run(session)
    assert "API_KEY=[secret:" in _text(answer)
    assert key not in wire
    (call,) = harness.calls()
    assert (call.tool, call.status) == ("mcp__jobs__show_settings", "success")
    assert call.alerts
    assert harness.verdict == "FAIL"
    assert key not in harness.chain.path.read_text(encoding="utf-8")


def test_tasks_methods_are_not_served_and_never_reach_the_upstream(harness: Harness) -> None:
    async def session() -> list[int]:
        codes: list[int] = []
        async with _proxied(harness) as client:
            await client.call_as_task("echo", {"text": "hi"})
            for method in TASK_METHODS:
                params = {} if method == "tasks/list" else {"taskId": "task-1"}
                try:
                    await client.request(method, params)
                except MCPError as error:
                    codes.append(error.error.code)
        return codes

    assert anyio.run(session) == [-32601] * len(TASK_METHODS)
    methods = [r["method"] for r in _received(harness)]
    assert not [m for m in methods if m.startswith("tasks/")]


def test_an_upstreams_task_status_holding_a_secret_never_reaches_the_client(
    harness: Harness,
) -> None:
    """The upstream pushes ``notifications/tasks/status`` with the key as its message
    during a plain call; the client hears no such notification."""
    key = api_key(harness)

    async def session() -> str:
        async with _proxied(harness) as client:
            await client.request("tools/call", {"name": "show_settings", "arguments": {}})
            return client.wire()

    wire = anyio.run(session)
    assert "notifications/tasks/status" not in wire
    assert key not in wire


@pytest.mark.parametrize("level", ["debug", "info"])
def test_what_an_upstream_does_on_a_request_that_is_no_call_is_judged_with_the_next_call(
    harness: Harness, level: str
) -> None:
    """``logging/setLevel`` is relayed ungated; the upstream changes ``.env`` when it is set
    to ``debug``. The change is the next call's ``between`` effect: a protected file changed,
    FAIL. At ``info`` (the look-alike) nothing changes and the session passes."""
    env = (harness.root / ".env").read_text(encoding="utf-8")
    echo = {"name": "echo", "arguments": {"text": "hi"}}

    async def session() -> None:
        async with _proxied(harness) as client:
            await client.request("tools/call", echo)
            await client.session.set_logging_level(level)  # type: ignore[arg-type]
            await client.request("tools/call", echo)

    anyio.run(session)
    changed = (harness.root / ".env").read_text(encoding="utf-8") != env
    assert changed is (level == "debug")
    first, second = harness.calls()
    assert (first.tool, second.tool) == ("mcp__jobs__echo", "mcp__jobs__echo")
    assert ("protected_file_changed" in second.alerts) is changed
    assert harness.verdict == ("FAIL" if changed else "PASS")


def test_a_task_answered_to_a_plain_call_is_an_error_and_what_it_did_is_the_calls(
    harness: Harness,
) -> None:
    """An upstream that answers a plain call with a task (as no server may) hands the client
    no task id: the call fails (its answer is no tool result), and the file the upstream wrote
    is the call's recorded effect."""

    async def session() -> dict[str, Any]:
        async with _proxied(harness) as client:
            arguments = {"path": "notes.txt", "text": "hi"}
            return await client.request(
                "tools/call", {"name": "background_note", "arguments": arguments}
            )

    answer = anyio.run(session)
    assert answer["isError"] is True
    assert _text(answer) == (
        "upstream 'jobs' answered tools/call with no valid tool result "
        "(1 validation error; the answer is not quoted)"
    )
    assert (harness.root / "notes.txt").read_text(encoding="utf-8") == "hi"
    (call,) = harness.calls()
    assert (call.tool, call.status) == ("mcp__jobs__background_note", "error")
    assert call.raw["effects"]["created"] == ["notes.txt"]
