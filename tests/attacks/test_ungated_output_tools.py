"""``ungated_calls`` tells pydantic-ai's output tools from function tools by what they return.

pydantic-ai carries a structured final output through an output tool (``final_result`` by
default) whose return is a status text. ``ungated_calls`` left out every tool whose name began
with ``final_result``, so an ungated function tool named ``final_result_notes`` ran unreported;
and it counted the stub return pydantic-ai gives a function tool it skipped (``end_strategy=
"early"``, the final result already given in the same response) as a call that ran, naming a
gated tool that never ran as ungated. Now an output tool is told by its name and its status
return, and a skipped tool's stub beside a final result is no call. Benign twins: a plain run
with an output tool names nothing; an ungated tool whose result is an output tool's status text
is still named.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from secret_support import service_harness

from pytest_harness_audit.doors.ungated import ungated_calls
from pytest_harness_audit.session.harness import Harness

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


class Answer(BaseModel):
    """The run's structured output."""

    answer: str


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _run(tools: list[Any], *responses: list[ToolCallPart], **options: Any) -> Any:
    turns = iter(responses)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=next(turns))

    agent = Agent(FunctionModel(respond), tools=tools, output_type=Answer, **options)
    return agent.run_sync("go")


def _final() -> ToolCallPart:
    return ToolCallPart("final_result", {"answer": "done"})


def test_an_ungated_tool_named_like_the_output_tool_is_named(harness: Harness) -> None:
    def final_result_notes(topic: str) -> str:
        """Notes on a topic."""
        return "notes"

    result = _run(
        [final_result_notes], [ToolCallPart("final_result_notes", {"topic": "x"})], [_final()]
    )
    assert ungated_calls(harness, result) == ["final_result_notes"]


def test_a_gated_tool_pydantic_ai_skipped_is_not_named(harness: Harness) -> None:
    ran: list[str] = []

    @harness.tool(category="file_read", on_block="return")
    def read_file(path: str) -> str:
        """Read a file."""
        ran.append(path)
        return "text"

    calls = [_final(), ToolCallPart("read_file", {"path": "README.md"})]
    result = _run([read_file], calls, end_strategy="early")
    assert ran == []
    assert ungated_calls(harness, result) == []


def test_a_run_with_an_output_tool_names_nothing(harness: Harness) -> None:
    @harness.tool(category="file_read", on_block="return")
    def read_file(path: str) -> str:
        """Read a file."""
        return "text"

    result = _run([read_file], [ToolCallPart("read_file", {"path": "README.md"})], [_final()])
    assert ungated_calls(harness, result) == []


def test_an_ungated_tool_returning_an_output_status_is_named(harness: Harness) -> None:
    def echo(text: str) -> str:
        """Echo a text."""
        return text

    result = _run([echo], [ToolCallPart("echo", {"text": "Final result processed."})], [_final()])
    assert ungated_calls(harness, result) == ["echo"]
