"""``ungated_calls`` matches each call of one run to a record of that run: a record of an
earlier run of the same tool does not hide a later run's ungated call, and a tool reached
through the recording proxy (recorded ``mcp__<server>__<tool>``) is not named ungated under the
plain name the framework gives it."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from agent_support import agents_sdk_model

from pytest_harness_audit.audit.clock import utc_timestamp
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.doors.ungated import ungated_calls
from pytest_harness_audit.session.harness import Harness

Factory = Callable[..., Harness]


@pytest.fixture
def service(harness_factory: Factory) -> Harness:
    return harness_factory("python-service", "safety")


class Records:
    """A session stand-in holding the given call records."""

    def __init__(self, *records: dict[str, Any]) -> None:
        self.records = [CallRecord({"kind": "call", **record}) for record in records]

    def calls(self) -> list[CallRecord]:
        return self.records


def _pydantic_agent(tools: list[Any], calls: list[tuple[str, dict[str, Any]]]) -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(name, args) for name, args in calls])
        return ModelResponse(parts=[TextPart("done")])

    return Agent(FunctionModel(respond), tools=tools)


def test_pydantic_ai_an_earlier_run_s_record_does_not_hide_a_later_ungated_call(
    service: Harness,
) -> None:
    pytest.importorskip("pydantic_ai")

    @service.tool(name="read_file", category="file_read", on_block="return")
    def gated_read(path: str) -> str:
        """Read a file."""
        return "text"

    def read_file(path: str) -> str:
        """Read a file (not wrapped)."""
        return "text"

    calls = [("read_file", {"path": "README.md"})]
    first = _pydantic_agent([gated_read], calls).run_sync("go")
    # a record's time keeps milliseconds and is matched with a few of slack: runs started
    # within them could not be told apart by time (a loaded machine ran them so)
    time.sleep(0.05)
    second = _pydantic_agent([read_file], calls).run_sync("go")
    assert len(service.calls(tool="read_file")) == 1  # only the first run went through the gate
    assert ungated_calls(service, first) == []
    assert ungated_calls(service, second) == ["read_file"]


def test_pydantic_ai_two_gated_runs_are_each_clean(service: Harness) -> None:
    pytest.importorskip("pydantic_ai")

    @service.tool(category="file_read", on_block="return")
    def read_file(path: str) -> str:
        """Read a file."""
        return "text"

    calls = [("read_file", {"path": "README.md"}), ("read_file", {"path": "setup.py"})]
    runs = [_pydantic_agent([read_file], calls).run_sync("go") for _ in range(2)]
    assert len(service.calls(tool="read_file")) == 4
    assert [ungated_calls(service, run) for run in runs] == [[], []]


def test_openai_agents_an_older_record_does_not_account_for_a_later_response_s_call(
    service: Harness,
) -> None:
    pytest.importorskip("agents")
    from agents import Agent, RunConfig, Runner, function_tool

    @function_tool(name_override="read_file")
    @service.tool(name="read_file", category="file_read", on_block="return")
    def gated_read(path: str) -> str:
        """Read a file."""
        return "text"

    @function_tool
    @service.tool(category="file_read", on_block="return")
    def list_dir(path: str) -> str:
        """List a directory."""
        return "README.md"

    @function_tool
    def read_file(path: str) -> str:
        """Read a file (not wrapped)."""
        return "text"

    config = RunConfig(tracing_disabled=True)
    read = [("read_file", {"path": "README.md"})]
    first = Runner.run_sync(
        Agent(name="a", model=agents_sdk_model(read), tools=[gated_read]),
        "go",
        run_config=config,
    )
    model = agents_sdk_model([("list_dir", {"path": "."})], read)
    second = Runner.run_sync(
        Agent(name="b", model=model, tools=[list_dir, read_file]), "go", run_config=config
    )
    assert ungated_calls(service, first) == []
    # the only read_file record is older than the list_dir call before it
    assert ungated_calls(service, second) == ["read_file"]


def test_openai_agents_since_keeps_an_earlier_run_s_record_from_a_run_s_first_call(
    service: Harness,
) -> None:
    pytest.importorskip("agents")
    from agents import Agent, RunConfig, Runner, function_tool

    @function_tool(name_override="read_file")
    @service.tool(name="read_file", category="file_read", on_block="return")
    def gated_read(path: str) -> str:
        """Read a file."""
        return "text"

    @function_tool
    def read_file(path: str) -> str:
        """Read a file (not wrapped)."""
        return "text"

    config = RunConfig(tracing_disabled=True)
    read = [("read_file", {"path": "README.md"})]
    Runner.run_sync(
        Agent(name="a", model=agents_sdk_model(read), tools=[gated_read]),
        "go",
        run_config=config,
    )
    before = len(service.calls())
    second = Runner.run_sync(
        Agent(name="b", model=agents_sdk_model(read), tools=[read_file]),
        "go",
        run_config=config,
    )
    # no time in the Agents SDK's items: the first run's record passes for the second's call
    assert ungated_calls(service, second) == []
    assert ungated_calls(service, second, since=before) == ["read_file"]
    # the same count taken before a gated run leaves its own record to account for it
    again = len(service.calls())
    third = Runner.run_sync(
        Agent(name="c", model=agents_sdk_model(read), tools=[gated_read]),
        "go",
        run_config=config,
    )
    assert ungated_calls(service, third, since=again) == []


@pytest.mark.parametrize("since", [-1, True, "3", 1.5])
def test_since_must_be_a_count(since: Any) -> None:
    with pytest.raises(ValueError, match="since must be a count of calls"):
        ungated_calls(Records(), [], since=since)


def test_openai_agents_calls_of_one_response_match_in_any_order(service: Harness) -> None:
    pytest.importorskip("agents")
    from agents import Agent, RunConfig, Runner, function_tool

    @function_tool
    @service.tool(category="file_read", on_block="return")
    def read_file(path: str) -> str:
        """Read a file."""
        return "text"

    @function_tool
    @service.tool(category="file_read", on_block="return")
    def list_dir(path: str) -> str:
        """List a directory."""
        return "README.md"

    model = agents_sdk_model(
        [("read_file", {"path": "README.md"}), ("list_dir", {"path": "."})],
        [("list_dir", {"path": "app"}), ("read_file", {"path": "setup.py"})],
    )
    result = Runner.run_sync(
        Agent(name="a", model=model, tools=[read_file, list_dir]),
        "go",
        run_config=RunConfig(tracing_disabled=True),
    )
    assert len(service.calls()) == 4
    assert ungated_calls(service, result) == []


def _messages(*calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """pydantic-ai messages of one response calling ``calls``, each returned just now."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    now = dt.datetime.now(dt.timezone.utc)
    parts = [ToolCallPart(name, args, tool_call_id=f"c{n}") for n, (name, args) in enumerate(calls)]
    returns = [
        ToolReturnPart(name, "ok", tool_call_id=f"c{n}", timestamp=now + dt.timedelta(seconds=1))
        for n, (name, _args) in enumerate(calls)
    ]
    return [
        ModelRequest(parts=[UserPromptPart("go")]),
        ModelResponse(parts=parts, timestamp=now),
        ModelRequest(parts=returns),
    ]


def _at(seconds: float) -> str:
    return utc_timestamp(dt.datetime.now(dt.timezone.utc).timestamp() + seconds)


def test_a_tool_reached_through_the_recording_proxy_is_not_named_ungated() -> None:
    session = Records({"tool": "mcp__files__read_file", "timestamp": _at(0.5)})
    assert ungated_calls(session, _messages(("read_file", {"path": "a"}))) == []


def test_a_proxied_record_of_another_tool_accounts_for_no_call() -> None:
    session = Records(
        {"tool": "mcp__files__delete_file", "timestamp": _at(0.5)},
        {"tool": "mcp__read_file__files", "timestamp": _at(0.5)},
    )
    assert ungated_calls(session, _messages(("read_file", {"path": "a"}))) == ["read_file"]


def test_a_record_written_before_the_call_was_made_accounts_for_none() -> None:
    session = Records({"tool": "read_file", "timestamp": _at(-60)})
    assert ungated_calls(session, _messages(("read_file", {"path": "a"}))) == ["read_file"]


def test_recorded_parameters_must_be_the_call_s_arguments() -> None:
    messages = _messages(("read_file", {"path": "a"}))
    other = Records(
        {"tool": "read_file", "timestamp": _at(0.5), "request": {"params": {"path": "b"}}}
    )
    same = Records(
        {"tool": "read_file", "timestamp": _at(0.5), "request": {"params": {"path": "a", "n": 1}}}
    )
    redacted = Records(
        {
            "tool": "read_file",
            "timestamp": _at(0.5),
            "request": {"params": {"path": "[secret:ab12cd34]"}},
        }
    )
    assert ungated_calls(other, messages) == ["read_file"]
    assert ungated_calls(same, messages) == []  # a default the record adds is not an argument
    assert ungated_calls(redacted, messages) == []  # the record redacts the value: it may be it


def _sample(*responses: list[str]) -> SimpleNamespace:
    """An inspect_ai-like sample: per response, an assistant message and its tool messages."""
    messages: list[SimpleNamespace] = []
    for turn, names in enumerate(responses):
        calls = [SimpleNamespace(id=f"{turn}.{n}", arguments={}) for n in range(len(names))]
        messages.append(SimpleNamespace(role="assistant", tool_calls=calls))
        messages += [
            SimpleNamespace(role="tool", function=name, tool_call_id=f"{turn}.{n}")
            for n, name in enumerate(names)
        ]
    return SimpleNamespace(messages=messages)


def test_the_samples_of_an_eval_log_are_matched_side_by_side() -> None:
    # two samples ran at once: their records interleave in another order than either's
    session = Records(
        {"tool": "read_file"}, {"tool": "list_dir"}, {"tool": "read_file"}, {"tool": "list_dir"}
    )
    log = SimpleNamespace(
        samples=[_sample(["read_file"], ["list_dir"]), _sample(["list_dir"], ["read_file"])]
    )
    assert ungated_calls(session, log) == []


def test_one_sample_s_later_call_is_not_matched_to_an_older_record() -> None:
    session = Records({"tool": "read_file"}, {"tool": "list_dir"})
    assert ungated_calls(session, _sample(["list_dir"], ["read_file"])) == ["read_file"]
    assert ungated_calls(session, _sample(["read_file"], ["list_dir"])) == []
