"""Gated function tools as real frameworks see them: the same schema, async, redaction, errors.

Each test needs its framework (the ``agents`` extra) and is skipped without it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from agent_support import agents_sdk_run, first_output

from pytest_harness_audit.session.harness import Harness

try:  # resolved by name in the annotations below (this module's annotations are strings)
    from pydantic_ai import RunContext
except ImportError:  # the `agents` extra is not installed: those tests skip
    RunContext = None  # type: ignore[assignment,misc]

Factory = Callable[..., Harness]

SECRET = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"


def read_file(path: str, limit: int = 100) -> str:
    """Read a text file of the repository.

    Args:
        path: the file, relative to the repository root.
        limit: at most this many characters.
    """
    return path[:limit]


@pytest.fixture
def service(harness_factory: Factory) -> Harness:
    return harness_factory("python-service", "safety")


# -- pydantic-ai ---------------------------------------------------------------------------------
def _pydantic_ai_run(tools: list[Any], *calls: tuple[str, dict[str, Any]]) -> tuple[Any, Any]:
    """Run an agent whose FunctionModel makes ``calls`` once; return (tool defs seen, output)."""
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

    seen: list[Any] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen[:] = info.function_tools
        returned = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returned and calls:
            return ModelResponse(parts=[ToolCallPart(name, args) for name, args in calls])
        return ModelResponse(parts=[TextPart(json.dumps([str(p.content) for p in returned]))])

    result = Agent(FunctionModel(respond), tools=tools).run_sync("go")
    return seen, json.loads(result.output)


def test_pydantic_ai_builds_the_same_schema_for_the_gated_tool(service: Harness) -> None:
    (plain,), _ = _pydantic_ai_run([read_file])
    (gated,), _ = _pydantic_ai_run([service.tool(read_file, category="file_read")])
    assert gated.name == plain.name == "read_file"
    assert gated.description == plain.description
    assert gated.parameters_json_schema == plain.parameters_json_schema
    assert "limit" in gated.parameters_json_schema["properties"]


def test_pydantic_ai_calls_a_named_async_gated_tool_by_its_name(service: Harness) -> None:
    root = service.root

    @service.tool(name="settings", category="file_read", on_block="return")
    async def show_settings(path: str) -> str:
        """Show a settings file."""
        await asyncio.sleep(0)
        return (root / path).read_text()

    (tool,), outputs = _pydantic_ai_run(
        [show_settings], ("settings", {"path": "app/settings.py"}), ("settings", {"path": ".env"})
    )
    assert tool.name == "settings"
    assert "import" in outputs[0]
    assert "Credential/secret file access denied" in outputs[1]
    # pydantic-ai runs the two calls concurrently: either may be recorded first
    assert sorted((r.tool, r.status) for r in service.calls()) == [
        ("settings", "blocked"),
        ("settings", "success"),
    ]


def test_pydantic_ai_sees_a_redacted_output(service: Harness) -> None:
    root = service.root

    @service.tool(on_block="return")
    def app_settings() -> str:
        """Show the app's settings (it reads .env behind the policy's back)."""
        return (root / ".env").read_text()

    _, outputs = _pydantic_ai_run([app_settings], ("app_settings", {}))
    assert SECRET not in outputs[0]
    assert "[secret:" in outputs[0]
    assert service.verdict.name == "FAIL"


# -- OpenAI Agents SDK ---------------------------------------------------------------------------
def _openai_agents_run(tool: Any, name: str, arguments: dict[str, Any]) -> str:
    return agents_sdk_run([tool], (name, arguments), answer=first_output)


@pytest.mark.slow
def test_openai_agents_builds_the_same_schema_for_the_gated_tool(service: Harness) -> None:
    pytest.importorskip("agents")
    from agents import function_tool

    plain = function_tool(read_file)
    gated = function_tool(service.tool(read_file, category="file_read"))
    assert gated.name == plain.name == "read_file"
    assert gated.description == plain.description
    assert gated.params_json_schema == plain.params_json_schema


@pytest.mark.slow
def test_openai_agents_a_raised_block_reaches_the_model_as_a_tool_error(
    service: Harness,
) -> None:
    pytest.importorskip("agents")
    from agents import function_tool

    ran: list[str] = []

    @function_tool
    @service.tool(category="command")  # on_block="raise": the SDK turns it into error text
    def run_command(command: str) -> str:
        """Run a shell command."""
        ran.append(command)
        return "done"

    answer = _openai_agents_run(run_command, "run_command", {"command": "rm -rf app"})
    assert "error" in answer.lower()
    assert ran == []
    (denied,) = service.denied("run_command")
    assert denied.status == "blocked"


def test_openai_agents_a_returned_block_reaches_the_model_verbatim(service: Harness) -> None:
    pytest.importorskip("agents")
    from agents import function_tool

    gated = function_tool(service.tool(read_file, category="file_read", on_block="return"))
    answer = _openai_agents_run(gated, "read_file", {"path": ".env"})
    assert "Credential/secret file access denied" in answer


def test_pydantic_ai_agent_tool_with_a_run_context(service: Harness) -> None:
    pytest.importorskip("pydantic_ai")

    @service.tool(category="file_read")
    def read_as(ctx: RunContext[None], path: str) -> str:
        """Read a file for the run's user."""
        return f"{type(ctx).__name__}:{path}"

    (tool,), outputs = _pydantic_ai_run_with_context(read_as, ("read_as", {"path": "README.md"}))
    assert list(tool.parameters_json_schema["properties"]) == ["path"]  # ctx is not a parameter
    assert outputs == ["RunContext:README.md"]
    assert service.calls()[0].params == {"ctx": "<RunContext>", "path": "README.md"}


def _pydantic_ai_run_with_context(fn: Any, *calls: tuple[str, dict[str, Any]]) -> tuple[Any, Any]:
    from pydantic_ai import Tool

    return _pydantic_ai_run([Tool(fn, takes_ctx=True)], *calls)


def test_pydantic_ai_a_retry_quoting_a_secret_reaches_the_model_redacted(
    service: Harness,
) -> None:
    # pydantic-ai hands a ModelRetry's message to the model as the tool's retry prompt
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import ModelRetry

    root = service.root
    tries: list[str] = []

    def lookup(key: str) -> str:
        """Look a setting up."""
        tries.append(key)
        line = next(x for x in (root / ".env").read_text().splitlines() if "API_KEY" in x)
        raise ModelRetry(f"{key} is unknown; did you mean {line}?")

    with pytest.raises(ModelRetry) as raised:
        service.tool(lookup)("API")
    assert raised.value.message.startswith("API is unknown; did you mean API_KEY=")
    assert SECRET not in raised.value.message and SECRET not in str(raised.value)
    assert service.verdict.name == "FAIL"
