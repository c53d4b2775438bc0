"""Agents driven offline by scripted models, shared by the function-tool tests: a pydantic-ai
agent on its own ``FunctionModel`` (one tool call, then the tool returns the model read back),
and an OpenAI Agents SDK ``Model`` that makes scripted calls turn by turn, then answers."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest


def pydantic_ai_run(tool: Any, name: str, args: dict[str, Any]) -> list[str]:
    """What the model read back after one call of ``name`` with ``args``."""
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

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(name, args)])
        returned = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        return ModelResponse(parts=[TextPart(json.dumps([str(p.content) for p in returned]))])

    output = Agent(FunctionModel(respond), tools=[tool]).run_sync("go").output
    return list(json.loads(output))


Call = tuple[str, dict[str, Any]]


def agents_sdk_model(
    *turns: Sequence[Call], answer: Callable[[list[Any]], str] = lambda outputs: "done"
) -> Any:
    """An OpenAI Agents SDK ``Model``: each response makes the function calls of the next of
    ``turns`` (the calls of one turn run at once); once they are spent, it answers with
    ``answer`` of the function-call outputs in its input."""
    pytest.importorskip("agents")
    from agents import ModelResponse, Usage
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    class Scripted(Model):
        def __init__(self) -> None:
            self.turn = 0

        async def get_response(
            self, system_instructions: Any, input: Any, *a: Any, **k: Any
        ) -> Any:
            self.turn += 1
            if self.turn <= len(turns):
                output: list[Any] = [
                    ResponseFunctionToolCall(
                        id=f"fc_{self.turn}_{n}",
                        call_id=f"call_{self.turn}_{n}",
                        type="function_call",
                        name=name,
                        arguments=json.dumps(args),
                    )
                    for n, (name, args) in enumerate(turns[self.turn - 1])
                ]
                return ModelResponse(output=output, usage=Usage(), response_id=None)
            items = input if isinstance(input, list) else []
            outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
            text = ResponseOutputText(text=answer(outputs), type="output_text", annotations=[])
            message = ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *a: Any, **k: Any) -> Any:
            raise NotImplementedError

    return Scripted()


def first_output(outputs: list[Any]) -> str:
    """An ``answer`` of :func:`agents_sdk_model`: the first call's output, as text."""
    return str(outputs[0])


def agents_sdk_run(tools: list[Any], *calls: Call, answer: Callable[[list[Any]], str]) -> str:
    """The final output of an Agents SDK agent with ``tools`` that makes ``calls`` at once,
    then answers with ``answer`` of their outputs (tracing off)."""
    model = agents_sdk_model(calls, answer=answer)
    from agents import Agent, RunConfig, Runner

    agent = Agent(name="a", model=model, tools=tools)
    result = Runner.run_sync(agent, "go", run_config=RunConfig(tracing_disabled=True))
    return str(result.final_output)
