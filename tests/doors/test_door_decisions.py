"""Each door's answer for each gate decision, as its real host takes it (docs/reference.md).

The hosts run for real: the official MCP client on the recording proxy (streamable HTTP),
pydantic-ai with its ``FunctionModel`` and the OpenAI Agents SDK with a scripted model on
``harness.tool`` functions. For every decision the test checks what the host does with the
door's answer (the call ran or not, the model read an error or a result, the run went on) and
the session's record and verdict: a refused call never runs, and never reaches the model as a
successful result.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from pytest_harness_audit.gate import seam
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness

Factory = Callable[..., Harness]

#: The decision → the file whose read the policy decides so (``error``: the gate fails).
FILES = {
    "allow": "plain.txt",
    "warn": "notes.txt",
    "ask": "deploy.txt",
    "deny": "secret.txt",
    "dry-run deny": "secret.txt",
    "error": "plain.txt",
}
RULES: list[dict[str, Any]] = [
    {
        "id": "deny-secret",
        "name": "No secrets",
        "priority": 1,
        "decision": "deny",
        "reason": "no secrets here",
        "match": {"targetPatterns": ["**/secret.txt"]},
    },
    {
        "id": "warn-notes",
        "name": "Notes are watched",
        "priority": 2,
        "decision": "warn",
        "reason": "notes are watched",
        "match": {"targetPatterns": ["**/notes.txt"]},
    },
    {
        "id": "ask-deploy",
        "name": "Deploys need a human",
        "priority": 3,
        "decision": "ask",
        "reason": "deploys need a human",
        "match": {"targetPatterns": ["**/deploy.txt"]},
    },
]
#: decision → (the call ran, the session's verdict, text the host hands on)
EXPECTED: dict[str, tuple[bool, str, str]] = {
    "allow": (True, "PASS", "content of plain.txt"),
    "warn": (True, "WARN", "content of notes.txt"),
    "ask": (False, "WARN", "[blocked] [web4-approval] reject:"),
    "deny": (False, "FAIL", "[blocked] [web4-policy] no secrets here"),
    "dry-run deny": (True, "WARN", "content of secret.txt"),
    "error": (False, "FAIL", "[blocked] [web4-policy] internal gate error, refused:"),
}
DECISIONS = list(EXPECTED)


@pytest.fixture(params=DECISIONS)
def decision(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def session(
    harness_factory: Factory, decision: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Harness]:
    policy = Policy.from_dict(
        {"defaultPolicy": "allow", "enforce": decision != "dry-run deny", "rules": RULES}
    )
    harness = harness_factory(policy=policy)
    for name in set(FILES.values()):
        (harness.root / name).write_text(f"content of {name}\n", encoding="utf-8")
    if decision == "error":
        _failing_gate(monkeypatch)
    yield harness


def _failing_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The approval step raises for a call it would let run: an internal error at the gate."""
    real, real_async = seam.approve, seam.approve_async

    def approve(gate: Any, decided: Any) -> Any:
        if decided.blocked:
            return real(gate, decided)
        raise RuntimeError("approval step unreachable")

    async def approve_async(gate: Any, decided: Any) -> Any:
        if decided.blocked:
            return await real_async(gate, decided)
        raise RuntimeError("approval step unreachable")

    monkeypatch.setattr(seam, "approve", approve)
    monkeypatch.setattr(seam, "approve_async", approve_async)


def _judged(harness: Harness, decision: str, tool: str, ran: bool) -> None:
    [call] = harness.calls()
    assert call.tool == tool
    assert call.status == ("success" if ran else "blocked")
    assert harness.verdict.name == EXPECTED[decision][1]


def _gated_read(harness: Harness, ran: list[str]) -> Callable[[str], str]:
    @harness.tool(category="file_read")  # on_block="raise", the default
    def read_file(path: str) -> str:
        """Read a file of the repository.

        Args:
            path: the file, relative to the repository.
        """
        ran.append(path)
        return (harness.root / path).read_text(encoding="utf-8")

    return read_file


# -- the recording proxy, with the official MCP client -------------------------------------------
@asynccontextmanager
async def _mcp_client(harness: Harness) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    proxy = harness.start_proxy(workspace_tools=True)
    async with (
        httpx2.AsyncClient(headers=proxy.headers) as http,
        streamable_http_client(proxy.url, http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


def test_mcp_client_reads_a_refusal_as_a_failed_tool_call(session: Harness, decision: str) -> None:
    import mcp_types as types

    async def call() -> types.CallToolResult:
        async with _mcp_client(session) as client:
            return await client.call_tool("Read", {"file_path": FILES[decision]})

    result = anyio.run(call)
    ran, _verdict, shown = EXPECTED[decision]
    text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
    assert shown in text
    assert result.is_error is not ran  # the client's own flag: a refusal is a failed call
    assert result.structured_content is None or ran
    if ran:
        # a warning, and only a warning, is told to the model after the tool's own result (as
        # the hook door's context): a dry run is not
        told = [b.text for b in result.content[1:] if isinstance(b, types.TextContent)]
        assert told == (["[web4-policy] notes are watched"] if decision == "warn" else [])
    _judged(session, decision, "Read", ran)


# -- pydantic-ai, a harness.tool function ---------------------------------------------------------
def test_pydantic_ai_hands_a_refusal_to_the_model_and_goes_on(
    session: Harness, decision: str
) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    ran: list[str] = []
    returned: list[ToolReturnPart] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": FILES[decision]})])
        returned.extend(p for p in messages[-1].parts if isinstance(p, ToolReturnPart))
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond), tools=[_gated_read(session, ran)])
    assert agent.run_sync("go").output == "done"  # the run goes on after a refusal
    should_run, _verdict, shown = EXPECTED[decision]
    [part] = returned
    assert shown in str(part.content)
    assert (part.outcome == "success") is should_run  # a refusal is a failed tool call
    assert bool(ran) is should_run
    _judged(session, decision, "read_file", should_run)


# -- the OpenAI Agents SDK, a harness.tool function ------------------------------------------
def test_agents_sdk_never_runs_a_refused_call(session: Harness, decision: str) -> None:
    pytest.importorskip("agents")
    from agents import function_tool

    from pytest_harness_audit.doors.tools import block_shown_to_model
    from tests.agent_support import agents_sdk_run, first_output

    ran: list[str] = []
    tool = function_tool(_gated_read(session, ran), failure_error_function=block_shown_to_model)
    answer = agents_sdk_run([tool], ("read_file", {"path": FILES[decision]}), answer=first_output)
    should_run, _verdict, shown = EXPECTED[decision]
    assert shown in answer
    assert bool(ran) is should_run
    _judged(session, decision, "read_file", should_run)


# -- the scripted door ----------------------------------------------------------------------------
def test_scripted_calls_return_a_refusal_as_a_blocked_result(
    session: Harness, decision: str
) -> None:
    result = session.call("Read", file_path=FILES[decision])
    should_run, _verdict, shown = EXPECTED[decision]
    assert result.ok is should_run
    assert shown in str(result.output if should_run else result.error_message)
    _judged(session, decision, "Read", should_run)


# -- inspect_ai, a harness.tool function ----------------------------------------------------------
@pytest.mark.slow  # a whole inspect_ai evaluation per decision
def test_inspect_ai_hands_a_refusal_to_the_model_and_the_sample_goes_on(
    session: Harness, decision: str, tmp_path: Path
) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    ran: list[str] = []

    @tool
    def read_file() -> Any:
        @session.tool(name="read_file", category="file_read")  # on_block="raise"
        async def execute(path: str) -> str:
            """Read a file of the repository.

            Args:
                path: the file, relative to the repository.
            """
            ran.append(path)
            return (session.root / path).read_text(encoding="utf-8")

        return execute

    model_name = "mockllm/model"
    outputs = [
        ModelOutput.for_tool_call(model_name, "read_file", {"path": FILES[decision]}),
        ModelOutput.from_content(model_name, "done"),
    ]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    task = Task(dataset=[Sample(input="go")], solver=[use_tools(read_file()), generate()])
    model = get_model(model_name, custom_outputs=outputs)
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success"  # the sample goes on after a refusal
    (sample,) = log.samples or []
    assert sample.error is None
    [message] = [m for m in sample.messages if m.role == "tool"]
    should_run, _verdict, shown = EXPECTED[decision]
    if should_run:
        assert message.error is None
        assert shown in str(message.content)
    else:  # a ToolError: the model reads the block text as the call's error
        assert message.error is not None
        assert shown in message.error.message
    assert bool(ran) is should_run
    _judged(session, decision, "read_file", should_run)
