"""Tool calls a framework ran outside the gate: what ``harness.tool`` could not see.

``harness.tool`` gates the functions it wraps, nothing else. An agent can run other tools: a
function added without the wrapper, an MCP server not reached through the recording proxy, a
hosted or built-in tool (web search, code execution, a shell or computer tool), a sub-agent
(``Agent.as_tool``), a handoff. Those calls leave no record, so the verdict cannot count them.
:func:`ungated_calls` compares what the framework says ran with what the session recorded, by
tool name, and lists each call no record accounts for:

* pydantic-ai — a run result (``all_messages()``) or its messages: each tool return, each
  retry a tool raised (``ModelRetry``), each built-in tool call; output tools are not calls;
* the OpenAI Agents SDK — a run result (``new_items``): each tool call item (a function, a
  hosted or local tool: the item's type names it then) and each handoff;
* inspect_ai — an eval log, a sample or its messages: each tool message.

A gated tool is recognised by its name: wrap it under the name the framework gives the model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Protocol

#: pydantic-ai's default name for the tool that carries a structured final output.
_OUTPUT_TOOL_PREFIX = "final_result"


class _Recorded(Protocol):
    """What :func:`ungated_calls` reads from a session: its recorded calls."""

    def calls(self) -> Any:
        """The session's call records (each with a ``tool``)."""


def _pydantic_ai(messages: Iterable[Any]) -> list[str]:
    ran: list[str] = []
    for message in messages:
        for part in getattr(message, "parts", ()):
            kind = getattr(part, "part_kind", "")
            name = str(getattr(part, "tool_name", "") or "")
            if not name or name.startswith(_OUTPUT_TOOL_PREFIX):
                continue
            text = isinstance(getattr(part, "content", None), str)
            if kind == "builtin-tool-call":
                ran.append(name)
            elif kind == "tool-return" and (getattr(part, "outcome", "") != "retried" or text):
                ran.append(name)  # a retried return with a list holds validation errors: no run
            elif kind == "retry-prompt" and text:
                ran.append(name)  # the tool ran and raised ModelRetry (not a validation error)
    return ran


def _openai_agents(items: Iterable[Any]) -> list[str]:
    ran: list[str] = []
    for item in items:
        kind = getattr(item, "type", "")
        if kind not in ("tool_call_item", "handoff_call_item"):
            continue
        raw = getattr(item, "raw_item", None)
        name = getattr(raw, "name", None)
        if name is None and isinstance(raw, dict):
            name = raw.get("name") or raw.get("type")
        ran.append(str(name or getattr(raw, "type", None) or kind))
    return ran


def _inspect_ai(messages: Iterable[Any]) -> list[str]:
    return [
        str(getattr(message, "function", "") or "tool")
        for message in messages
        if getattr(message, "role", "") == "tool"
    ]


def framework_calls(run: Any) -> list[str]:
    """The tool calls ``run`` (a framework's run result, log or messages) says ran, by name.

    Raises ``TypeError`` for anything else, a list of items none of those frameworks writes
    (plain dicts, such as a run's input list) included: read as no calls, it would name none.
    """
    if callable(getattr(run, "all_messages", None)):
        return _pydantic_ai(run.all_messages())
    if hasattr(run, "new_items"):
        return _openai_agents(run.new_items)
    if hasattr(run, "samples"):  # an inspect_ai eval log
        return [name for sample in run.samples or () for name in framework_calls(sample)]
    if hasattr(run, "messages") and not hasattr(run, "parts"):  # an inspect_ai sample
        return _inspect_ai(run.messages)
    if isinstance(run, Iterable) and not isinstance(run, (str, bytes)):
        items = list(run)
        if any(hasattr(item, "parts") for item in items):
            return _pydantic_ai(items)
        if any(hasattr(item, "raw_item") for item in items):
            return _openai_agents(items)
        if not items or any(hasattr(item, "role") for item in items):
            return _inspect_ai(items)
    raise TypeError(f"ungated_calls: cannot read the tool calls of a {type(run).__name__}")


def ungated_calls(harness: _Recorded, run: Any) -> list[str]:
    """The tool calls ``run`` made that ``harness`` recorded no call for (name, once per call).

    Empty when every call the framework ran went through the gate. A name appears as often as
    its calls outnumber the session's records of that tool.
    """
    recorded = Counter(str(call.tool) for call in harness.calls())
    missing: list[str] = []
    for name in framework_calls(run):
        if recorded[name] > 0:
            recorded[name] -= 1
        else:
            missing.append(name)
    return missing


__all__ = ["framework_calls", "ungated_calls"]
