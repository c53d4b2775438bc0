"""The function-tool door's contract under load: gate failures, concurrent calls, odd signatures.

* the gate failing on a call (an approver raising, a chain that cannot be written) refuses the
  call and fails the session, even where the framework swallows a tool's exception;
* calls a framework runs at once go through the gate one at a time, so each record holds what
  its own call did;
* a record says which parameters were the signature's defaults, and a ``**kwargs`` key never
  hides another argument.

The framework tests need the ``agents`` extra and are skipped without it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from agent_support import agents_sdk_run

import pytest_harness_audit.gate.seam as seam
from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.session.harness import Harness

Factory = Callable[..., Harness]


@pytest.fixture
def service(harness_factory: Factory) -> Harness:
    return harness_factory("python-service", "safety")


def _broken_approver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The approval step raises for every call it would let run (a failing approver)."""
    real, real_async = seam.approve, seam.approve_async

    def approve(gate: Any, decision: Any) -> Any:
        if decision.blocked:
            return real(gate, decision)
        raise RuntimeError("approver unreachable")

    async def approve_async(gate: Any, decision: Any) -> Any:
        if decision.blocked:
            return await real_async(gate, decision)
        raise RuntimeError("approver unreachable")

    monkeypatch.setattr(seam, "approve", approve)
    monkeypatch.setattr(seam, "approve_async", approve_async)


class _UnwritableChain:
    """The gate's chain whose appends fail as on a full disk (a stand-in, since the compiled
    build's chain takes no attributes of its own)."""

    def __init__(self, chain: Any) -> None:
        self._chain = chain

    def append(self, *args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chain, name)


def _unwritable_chain(monkeypatch: pytest.MonkeyPatch, harness: Harness) -> None:
    monkeypatch.setattr(harness.gate, "chain", _UnwritableChain(harness.gate.chain))


# -- the gate failing ----------------------------------------------------------------------------
@pytest.mark.parametrize("on_block", ["raise", "return"])
def test_a_failing_approver_refuses_the_call_and_fails_the_session(
    service: Harness, monkeypatch: pytest.MonkeyPatch, on_block: str
) -> None:
    ran: list[str] = []

    @service.tool(category="file_read", on_block=on_block)
    def read_file(path: str) -> str:
        ran.append(path)
        return "text"

    _broken_approver(monkeypatch)
    if on_block == "raise":
        with pytest.raises(ToolCallBlocked, match="internal gate error") as caught:
            read_file("README.md")
        assert caught.value.tool == "read_file"
    else:
        assert "internal gate error" in read_file("README.md")
    monkeypatch.undo()
    assert ran == []
    (call,) = service.calls()
    assert (call.tool, call.status) == ("read_file", "blocked")
    assert service.verdict.name == "FAIL"


def test_a_failing_approver_refuses_an_async_call(
    service: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []

    @service.tool(category="file_read", on_block="return")
    async def read_file(path: str) -> str:
        ran.append(path)
        return "text"

    _broken_approver(monkeypatch)
    assert "internal gate error" in asyncio.run(read_file("README.md"))
    monkeypatch.undo()
    assert ran == []
    assert service.verdict.name == "FAIL"


def test_a_chain_that_cannot_be_written_fails_the_session_and_refuses_what_follows(
    service: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []

    @service.tool(category="file_read", on_block="return")
    def read_file(path: str) -> str:
        ran.append(path)
        return "text"

    _unwritable_chain(monkeypatch, service)
    # the call ran before its record could not be written: its output is withheld
    assert read_file("README.md").startswith("[blocked]")
    monkeypatch.undo()
    assert read_file("app/settings.py").startswith("[blocked]")  # nothing could record it
    assert ran == ["README.md"]
    verdict, reasons = service.judge()
    assert verdict.name == "FAIL"
    assert any("No space left on device" in reason.text for reason in reasons)


def test_openai_agents_swallowing_the_error_does_not_make_a_pass(
    service: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("agents")
    from agents import function_tool

    ran: list[str] = []

    @function_tool
    @service.tool(category="file_read", on_block="return")
    def read_file(path: str) -> str:
        """Read a file."""
        ran.append(path)
        return "text"

    _broken_approver(monkeypatch)
    outputs = _openai_agents_run([read_file], ("read_file", {"path": "README.md"}))
    monkeypatch.undo()
    assert "internal gate error" in outputs[0]
    assert ran == []
    assert service.verdict.name == "FAIL"


# -- concurrent calls ----------------------------------------------------------------------------
def _slow_tools(harness: Harness, *, asynchronous: bool) -> list[Any]:
    """A tool deleting a file midway and a harmless one running for as long."""
    root = harness.root
    if asynchronous:

        @harness.tool(on_block="return")
        async def delete_file(path: str) -> str:
            """Delete a file."""
            await asyncio.sleep(0.15)
            (root / path).unlink()
            await asyncio.sleep(0.15)
            return "deleted"

        @harness.tool(category="command", on_block="return")
        async def run_command(command: str) -> str:
            """Run a command."""
            await asyncio.sleep(0.4)
            return "ok"

        return [run_command, delete_file]

    @harness.tool(on_block="return")
    def delete_file_sync(path: str) -> str:
        """Delete a file."""
        time.sleep(0.15)
        (root / path).unlink()
        time.sleep(0.15)
        return "deleted"

    @harness.tool(category="command", on_block="return")
    def run_command_sync(command: str) -> str:
        """Run a command."""
        time.sleep(0.4)
        return "ok"

    return [run_command_sync, delete_file_sync]


def _deleters(harness: Harness) -> list[str]:
    return [c.tool for c in harness.calls() if (c.raw.get("effects") or {}).get("deleted")]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_pydantic_ai_concurrent_calls_are_each_judged_on_what_they_did(
    service: Harness, asynchronous: bool
) -> None:
    pytest.importorskip("pydantic_ai")
    tools = _slow_tools(service, asynchronous=asynchronous)
    names = [tool.__name__ for tool in tools]
    _pydantic_ai_run(
        tools, (names[0], {"command": "echo hi"}), (names[1], {"path": "app/pricing.py"})
    )
    assert sorted(c.tool for c in service.calls()) == sorted(names)
    assert _deleters(service) == [names[1]]  # not the command that ran meanwhile


def test_openai_agents_concurrent_calls_are_each_judged_on_what_they_did(
    service: Harness,
) -> None:
    pytest.importorskip("agents")
    from agents import function_tool

    tools = _slow_tools(service, asynchronous=True)
    _openai_agents_run(
        [function_tool(tool) for tool in tools],
        ("run_command", {"command": "echo hi"}),
        ("delete_file", {"path": "app/pricing.py"}),
    )
    assert sorted(c.tool for c in service.calls()) == ["delete_file", "run_command"]
    assert _deleters(service) == ["delete_file"]


def test_a_tool_calling_a_tool_does_not_wait_for_itself(service: Harness) -> None:
    @service.tool(category="file_read")
    def read_file(path: str) -> str:
        return path

    @service.tool(category="file_read")
    def read_two(first: str, second: str) -> str:
        return read_file(first) + read_file(second)

    @service.tool(category="file_read")
    async def read_async(path: str) -> str:
        inline = read_file(path)  # a sync call on the loop's thread, inside this call
        threaded = await asyncio.to_thread(read_file, path)  # a thread this call started
        return inline + threaded

    assert read_two("README.md", "app/settings.py") == "README.mdapp/settings.py"
    assert asyncio.run(read_async("README.md")) == "README.mdREADME.md"
    assert [c.tool for c in service.calls()] == [
        "read_file",
        "read_file",
        "read_two",
        "read_file",
        "read_file",
        "read_async",
    ]


def test_threads_calling_at_once_are_recorded_once_each(service: Harness) -> None:
    @service.tool(category="file_read")
    def read_file(path: str) -> str:
        time.sleep(0.01)
        return path

    threads = [threading.Thread(target=read_file, args=(f"doc{n}.md",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(c.params["path"] for c in service.calls()) == [f"doc{n}.md" for n in range(8)]


# -- parameters ----------------------------------------------------------------------------------
def test_a_record_names_the_parameters_left_to_their_defaults(service: Harness) -> None:
    @service.tool(category="file_read")
    def read_file(path: str, limit: int = 100, encoding: str = "utf-8") -> str:
        return path

    read_file("README.md")
    read_file("README.md", limit=5, encoding="utf-8")
    first, second = service.calls()
    assert first.params == {"path": "README.md", "limit": 100, "encoding": "utf-8"}
    assert first.raw["defaulted"] == ["limit", "encoding"]
    assert "defaulted" not in second.raw  # passed explicitly, even with the default's value


def test_a_default_naming_the_credential_file_is_judged(service: Harness) -> None:
    ran: list[str] = []

    @service.tool(category="file_read", on_block="return")
    def read_file(path: str = ".env") -> str:
        ran.append(path)
        return "secret"

    assert read_file().startswith("[blocked]")
    assert ran == []
    assert service.calls()[0].raw["defaulted"] == ["path"]


def test_a_keyword_catch_all_cannot_hide_an_argument(service: Harness) -> None:
    seen: list[Any] = []

    @service.tool(category="file_read", on_block="return")
    def read_file(path: str, /, **options: Any) -> str:
        seen.append((path, options))
        return "text"

    assert read_file(".env", path="README.md").startswith("[blocked]")
    assert seen == []
    (call,) = service.calls()
    assert call.params == {"path": ".env", "options": {"path": "README.md"}}


def test_positional_arguments_cannot_be_hidden_by_a_keyword_of_the_same_name(
    service: Harness,
) -> None:
    @service.tool(category="file_read", on_block="return")
    def read_files(*paths: str, **options: Any) -> str:
        return "text"

    assert read_files(".env", paths="README.md").startswith("[blocked]")
    (call,) = service.calls()
    assert call.params == {"paths": [".env"], "options": {"paths": "README.md"}}


# -- framework drivers ---------------------------------------------------------------------------
def _pydantic_ai_run(tools: list[Any], *calls: tuple[str, dict[str, Any]]) -> list[str]:
    """A FunctionModel making ``calls`` in one response (run at once), then the returns."""
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
        returned = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returned:
            return ModelResponse(parts=[ToolCallPart(name, args) for name, args in calls])
        return ModelResponse(parts=[TextPart(json.dumps([str(p.content) for p in returned]))])

    result = Agent(FunctionModel(respond), tools=tools).run_sync("go")
    outputs: list[str] = json.loads(result.output)
    return outputs


def _openai_agents_run(tools: list[Any], *calls: tuple[str, dict[str, Any]]) -> list[str]:
    """A scripted Model making ``calls`` in one response (run at once), then the outputs."""
    outputs: list[str] = json.loads(agents_sdk_run(tools, *calls, answer=json.dumps))
    return outputs
