"""A pydantic-ai agent driven offline by its own ``FunctionModel``: one tool call, then the
tool returns the model read back (the attack tests of function tools share it)."""

from __future__ import annotations

import json
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
