"""Tools an agent ran outside the gate are listed, not silently passed over.

``harness.tool`` gates only the functions it wraps; ``ungated_calls(harness, run)`` compares a
framework's run with the session's records and names every call no record accounts for. Each
test needs its framework (the ``agents`` extra) and is skipped without it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_support import agents_sdk_model

from pytest_harness_audit.doors.ungated import framework_calls, ungated_calls
from pytest_harness_audit.session.harness import Harness

Factory = Callable[..., Harness]


@pytest.fixture
def service(harness_factory: Factory) -> Harness:
    return harness_factory("python-service", "safety")


def test_pydantic_ai_an_unwrapped_tool_is_named(service: Harness) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    deleted: list[str] = []

    @service.tool(category="file_read", on_block="return")
    def read_file(path: str) -> str:
        """Read a file."""
        return "text"

    def delete_tree(path: str) -> str:
        """Delete a directory (not wrapped)."""
        deleted.append(path)
        return "gone"

    def flaky(n: int) -> str:
        """Ask the model to try again (not wrapped)."""
        raise ModelRetry("try again")

    calls = [
        ("read_file", {"path": "README.md"}),
        ("read_file", {"wrong": 1}),  # refused by validation: never ran
        ("delete_tree", {"path": "app"}),
        ("flaky", {"n": 1}),
    ]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(name, args) for name, args in calls])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond), tools=[read_file, delete_tree, flaky], retries=3)
    result = agent.run_sync("go")
    assert deleted == ["app"]
    assert framework_calls(result) == ["read_file", "delete_tree", "flaky"]
    assert ungated_calls(service, result) == ["delete_tree", "flaky"]
    assert ungated_calls(service, result.all_messages()) == ["delete_tree", "flaky"]


def test_openai_agents_an_unwrapped_tool_a_sub_agent_and_a_handoff_are_named(
    service: Harness,
) -> None:
    pytest.importorskip("agents")
    from agents import Agent, RunConfig, Runner, function_tool

    @function_tool
    @service.tool(category="file_read", on_block="return")
    def read_file(path: str) -> str:
        """Read a file."""
        return "text"

    @function_tool
    def delete_tree(path: str) -> str:
        """Delete a directory (not wrapped)."""
        return "gone"

    helper = Agent(name="helper", model=agents_sdk_model())
    adviser = Agent(name="adviser", model=agents_sdk_model()).as_tool(
        tool_name="ask_adviser", tool_description="Ask the adviser."
    )
    agent = Agent(
        name="main",
        model=agents_sdk_model(  # one call a turn
            [("read_file", {"path": "README.md"})],
            [("delete_tree", {"path": "app"})],
            [("ask_adviser", {"input": "what next?"})],
            [("transfer_to_helper", {})],
        ),
        tools=[read_file, delete_tree, adviser],
        handoffs=[helper],
    )
    result = Runner.run_sync(agent, "go", run_config=RunConfig(tracing_disabled=True))
    assert ungated_calls(service, result) == ["delete_tree", "ask_adviser", "transfer_to_helper"]


@pytest.mark.slow  # a whole inspect_ai evaluation
def test_inspect_ai_an_unwrapped_tool_is_named(service: Harness, tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def read_file() -> Any:
        @service.tool(name="read_file", category="file_read", on_block="return")
        async def execute(path: str) -> str:
            """Read a file.

            Args:
                path: the file.
            """
            return "text"

        return execute

    @tool
    def delete_tree() -> Any:
        async def execute(path: str) -> str:
            """Delete a directory (not wrapped).

            Args:
                path: the directory.
            """
            return "gone"

        return execute

    model_name = "mockllm/model"
    outputs = [
        ModelOutput.for_tool_call(model_name, "read_file", {"path": "README.md"}),
        ModelOutput.for_tool_call(model_name, "delete_tree", {"path": "app"}),
        ModelOutput.from_content(model_name, "done"),
    ]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    task = Task(
        dataset=[Sample(input="go")],
        solver=[use_tools(read_file(), delete_tree()), generate()],
    )
    model = get_model(model_name, custom_outputs=outputs)
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert ungated_calls(service, log) == ["delete_tree"]


def test_a_run_of_gated_tools_only_has_nothing_to_name(service: Harness) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    @service.tool(category="file_read", on_block="return")
    def read_file(path: str) -> str:
        """Read a file."""
        return "text"

    result = Agent(TestModel(), tools=[read_file]).run_sync("go")
    assert framework_calls(result) == ["read_file"]
    assert ungated_calls(service, result) == []


def test_something_that_is_no_run_is_a_type_error(service: Harness) -> None:
    with pytest.raises(TypeError, match="cannot read the tool calls of a int"):
        ungated_calls(service, 3)


@pytest.mark.parametrize(
    "items",
    [
        [{"type": "function_call", "name": "delete_tree", "call_id": "1", "arguments": "{}"}],
        [{"role": "tool", "name": "delete_tree", "content": "gone", "tool_call_id": "1"}],
        ["delete_tree"],
    ],
    ids=["agents-input-list", "chat-messages", "names"],
)
def test_a_list_of_items_no_framework_writes_is_a_type_error(
    service: Harness, items: list[object]
) -> None:
    # read as "no calls", a run's input list or raw chat messages would name nothing ungated
    with pytest.raises(TypeError, match="cannot read the tool calls of a list"):
        ungated_calls(service, items)
    assert ungated_calls(service, []) == []
