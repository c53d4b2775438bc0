"""A raised block reaches the model as the host framework's own tool failure, and the run goes on.

pydantic-ai ends the run on a tool's exception unless it is ``ToolFailed``; inspect_ai fails the
sample unless it is ``ToolError``. A block raised as ``ToolCallBlocked`` alone did both.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.doors.host_refusals import as_host_failure, loaded_host_failures
from pytest_harness_audit.doors.tools import ToolCallBlocked, block_shown_to_model
from pytest_harness_audit.session.harness import Harness

Factory = Callable[..., Harness]


@pytest.fixture
def service(harness_factory: Factory) -> Harness:
    return harness_factory("python-service", "safety")


def _read_file_tool(service: Harness, ran: list[str]) -> Callable[[str], str]:
    @service.tool(category="file_read")  # on_block="raise", the default
    def read_file(path: str) -> str:
        """Read a file of the repository.

        Args:
            path: the file.
        """
        ran.append(path)
        return "text"

    return read_file


def test_pydantic_ai_tells_the_model_of_a_raised_block_and_the_run_goes_on(
    service: Harness,
) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    ran: list[str] = []
    shown: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:  # first a blocked read, then an allowed one
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": ".env"})])
        shown.extend(str(getattr(part, "content", "")) for part in messages[-1].parts)
        if len(messages) == 3:
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "README.md"})])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond), tools=[_read_file_tool(service, ran)])
    assert agent.run_sync("go").output == "done"
    assert ran == ["README.md"]
    assert "Credential/secret file access denied" in shown[0]
    assert "try again" not in shown[0].lower()  # a terminal failure, not a retry request
    assert [r.status for r in service.denied("read_file")] == ["blocked"]
    assert service.verdict.name == "FAIL"


@pytest.mark.slow  # a whole inspect_ai evaluation
def test_inspect_ai_tells_the_model_of_a_raised_block_and_the_sample_goes_on(
    service: Harness, tmp_path: Path
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
        @service.tool(name="read_file", category="file_read")  # on_block="raise"
        async def execute(path: str) -> str:
            """Read a file.

            Args:
                path: the file.
            """
            ran.append(path)
            return "text"

        return execute

    model_name = "mockllm/model"
    outputs = [
        ModelOutput.for_tool_call(model_name, "read_file", {"path": ".env"}),
        ModelOutput.for_tool_call(model_name, "read_file", {"path": "README.md"}),
        ModelOutput.from_content(model_name, "done"),
    ]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    task = Task(dataset=[Sample(input="go")], solver=[use_tools(read_file()), generate()])
    model = get_model(model_name, custom_outputs=outputs)
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success"
    (sample,) = log.samples or []
    assert sample.error is None
    tool_messages = [m for m in sample.messages if m.role == "tool"]
    assert tool_messages[0].error is not None
    assert "Credential/secret file access denied" in tool_messages[0].error.message
    assert ran == ["README.md"]
    assert service.verdict.name == "FAIL"


def test_the_agents_sdk_shows_the_block_with_the_failure_function(service: Harness) -> None:
    pytest.importorskip("agents")
    from agents import function_tool

    from tests.doors.test_function_tools_frameworks import _openai_agents_run

    ran: list[str] = []
    gated = function_tool(
        _read_file_tool(service, ran), failure_error_function=block_shown_to_model
    )
    answer = _openai_agents_run(gated, "read_file", {"path": ".env"})
    assert "Credential/secret file access denied" in answer
    assert ran == []


def test_the_failure_function_hides_any_other_exception_text() -> None:
    pytest.importorskip("agents")
    shown = block_shown_to_model(None, RuntimeError("token sk-live-0123456789abcdef"))
    assert "sk-live" not in shown
    assert shown == block_shown_to_model(None, ValueError("other"))


def test_a_block_is_still_a_tool_call_blocked_with_its_record(service: Harness) -> None:
    pytest.importorskip("pydantic_ai")
    import pydantic_ai.exceptions

    ran: list[str] = []
    with pytest.raises(ToolCallBlocked) as caught:
        _read_file_tool(service, ran)(".env")
    assert isinstance(caught.value, pydantic_ai.exceptions.ToolFailed)
    assert type(caught.value).__name__ == "ToolCallBlocked"
    assert caught.value.message.startswith("[blocked]")
    assert caught.value.tool == "read_file"
    assert caught.value.record["result"]["status"] == "blocked"
    assert ran == []


def test_only_imported_frameworks_are_mixed_in(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("pydantic_ai.exceptions", "inspect_ai.tool"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert loaded_host_failures() == ()
    assert as_host_failure(ToolCallBlocked) is ToolCallBlocked


def test_a_framework_class_is_mixed_in_once_and_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    class ToolFailed(Exception):
        def __init__(self, message: str) -> None:
            self.message = message
            super().__init__(message)

    fake = type(sys)("fake_exceptions")
    fake.ToolFailed = ToolFailed  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pydantic_ai.exceptions", fake)
    monkeypatch.delitem(sys.modules, "inspect_ai.tool", raising=False)
    mixed = as_host_failure(ToolCallBlocked)
    assert mixed is as_host_failure(ToolCallBlocked)
    assert mixed.__mro__[1:3] == (ToolCallBlocked, *ToolCallBlocked.__mro__[1:2])
    error = mixed("[blocked] no", None, "t")  # type: ignore[call-arg]
    assert isinstance(error, ToolFailed) and error.message == "[blocked] no"
    assert json.dumps(str(error)) == '"[blocked] no"'
    assert as_host_failure(mixed) is mixed  # already one: nothing more to add
