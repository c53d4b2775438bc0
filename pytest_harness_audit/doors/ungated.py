"""Tool calls a framework ran outside the gate: what ``harness.tool`` could not see.

``harness.tool`` gates the functions it wraps, nothing else. An agent can run other tools: a
function added without the wrapper, an MCP server not reached through the recording proxy, a
hosted or built-in tool (web search, code execution, a shell or computer tool), a sub-agent
(``Agent.as_tool``), a handoff. Those calls leave no record, so the verdict cannot count them.
:func:`ungated_calls` compares what the framework says ran with what the session recorded and
lists each call no record accounts for:

* pydantic-ai — a run result (``all_messages()``) or its messages: each tool return, each
  retry a tool raised (``ModelRetry``), each built-in tool call; output tools
  (``final_result…``, told by the status text of their return) are not calls, nor a function
  tool pydantic-ai skipped once the same response gave the final result;
* the OpenAI Agents SDK — a run result (``new_items``): each tool call item (a function, a
  hosted or local tool: the item's type names it then) and each handoff;
* inspect_ai — an eval log, a sample or its messages: each tool message, but those whose error
  says the tool did not run (its approver rejected the call, or the call did not parse).

A record accounts for one call of this run only, matched by

* name: the name the framework gives the model (wrap a tool under it), or, for a tool reached
  through the recording proxy (recorded ``mcp__<server>__<tool>``), the upstream's tool name;
* arguments, when the framework gives them and the record kept its parameters (the
  ``verbose`` audit level): each argument the model passed has the recorded value (a value the
  record redacts as a secret matches what it stands for);
* time, when the framework gives it (pydantic-ai stamps each response and each tool's return):
  the record was written while the call ran, so a record of an earlier (or later) run in the
  same session accounts for none of this run's calls;
* position: the calls of one model response may run in any order, but the calls of a later
  response come after the records of an earlier one, so a record older than this run's earlier
  calls accounts for none of its later ones (not across the samples of an eval log, which run
  side by side).

With no time given (the Agents SDK, inspect_ai), a run's first calls can still be matched to an
earlier run's records of the same tool with the same arguments. ``since`` closes that: the
number of calls the session had recorded before the run (``len(harness.calls())`` taken just
before it), so no earlier record accounts for any of its calls.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pytest_harness_audit.audit.clock import parse_timestamp
from pytest_harness_audit.inspect.secrets import REDACTION

#: pydantic-ai's default name for the tool that carries a structured final output.
_OUTPUT_TOOL_PREFIX = "final_result"
#: The status texts pydantic-ai gives an output tool's return (the tool is no function tool).
_OUTPUT_STATUS = frozenset(
    {
        "Final result processed.",
        "Output not used as the final result - addressing tool retries from this round first.",
        "Output tool not used - a final result was already processed.",
        "Output tool processed, but its value will not be the final result of the agent run.",
        "Output tool not used - output function execution failed.",
        "Output tool not used - output failed validation.",
    }
)
#: The text of the return pydantic-ai gives a function tool it did not run: the same response
#: had already given the final result.
_SKIPPED = "Tool not executed - a final result was already processed."
#: A proxied MCP tool's recorded name: ``mcp__<server>__<tool>``.
_PROXIED = re.compile(r"mcp__(?P<server>.+?)__(?P<tool>.+)")
#: A record's timestamp keeps milliseconds; a response's is finer.
_EARLY = _dt.timedelta(milliseconds=5)
#: A record written by another process (the proxy) may land a little after the return.
_LATE = _dt.timedelta(seconds=1)
_MARKER = re.compile(re.escape(REDACTION).replace(r"\{fingerprint\}", r"[^\]]+"))


class _Recorded(Protocol):
    """What :func:`ungated_calls` reads from a session: its recorded calls."""

    def calls(self) -> Any:
        """The session's call records (each with a ``tool``)."""


@dataclass(frozen=True)
class _Ran:
    """One call a framework says ran: its name, arguments, model response and time span."""

    name: str
    args: Mapping[str, Any] | None = None
    group: int = 0
    span: tuple[_dt.datetime, _dt.datetime] | None = None
    thread: int = 0  # the sample of an eval log


def _args(value: Any) -> Mapping[str, Any] | None:
    """A call's arguments as a mapping (parsed from JSON text), else ``None``."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


def _aware(value: Any) -> _dt.datetime | None:
    if not isinstance(value, _dt.datetime):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)


def _output_return(part: Any) -> bool:
    """Whether ``part`` is the status return of an output tool (by its default name: a function
    tool's return may hold any text)."""
    name = str(getattr(part, "tool_name", "") or "")
    return (
        getattr(part, "part_kind", "") == "tool-return"
        and name.startswith(_OUTPUT_TOOL_PREFIX)
        and getattr(part, "content", None) in _OUTPUT_STATUS
    )


def _pydantic_ai(messages: Iterable[Any]) -> list[_Ran]:
    messages = list(messages)
    # the requests that answer a response with a final result: a function tool's return
    # there may be the stub of a call pydantic-ai skipped
    finals = {
        index
        for index, message in enumerate(messages)
        if any(map(_output_return, getattr(message, "parts", ())))
    }
    issued: dict[str, tuple[int, Any, _dt.datetime | None]] = {}
    ran: list[_Ran] = []
    for index, message in enumerate(messages):
        parts = getattr(message, "parts", ())
        if getattr(message, "kind", "") == "response":
            when = _aware(getattr(message, "timestamp", None))
            for part in parts:
                call_id = getattr(part, "tool_call_id", None)
                if getattr(part, "part_kind", "") == "tool-call" and call_id:
                    issued[str(call_id)] = (index, getattr(part, "args", None), when)
        for part in parts:
            kind = getattr(part, "part_kind", "")
            name = str(getattr(part, "tool_name", "") or "")
            content = getattr(part, "content", None)
            if not name or _output_return(part):
                continue
            if kind == "tool-return" and content == _SKIPPED and index in finals:
                continue
            if kind != "tool-return" and name.startswith(_OUTPUT_TOOL_PREFIX):
                continue  # an output tool's retry (its return is told by its text)
            text = isinstance(content, str)
            if kind == "builtin-tool-call":
                ran.append(_Ran(name, _args(getattr(part, "args", None)), index))
            elif (
                kind == "tool-return" and (getattr(part, "outcome", "") != "retried" or text)
            ) or (kind == "retry-prompt" and text):
                # a retried return with a list holds validation errors: no run; a retry prompt
                # with text: the tool ran and raised ModelRetry
                group, args, start = issued.get(
                    str(getattr(part, "tool_call_id", "")), (index, None, None)
                )
                end = _aware(getattr(part, "timestamp", None))
                span = (start - _EARLY, end + _LATE) if start and end else None
                ran.append(_Ran(name, _args(args), group, span))
    return ran


def _openai_agents(items: Iterable[Any]) -> list[_Ran]:
    ran: list[_Ran] = []
    group = 0
    calling = False
    for item in items:
        kind = getattr(item, "type", "")
        if kind not in ("tool_call_item", "handoff_call_item"):
            calling = False
            continue
        if not calling:  # the calls of one model response come together
            group += 1
            calling = True
        raw = getattr(item, "raw_item", None)
        name = getattr(raw, "name", None)
        args = getattr(raw, "arguments", None)
        if isinstance(raw, dict):
            name = name or raw.get("name") or raw.get("type")
            args = raw.get("arguments")
        name = str(name or getattr(raw, "type", None) or kind)
        ran.append(_Ran(name, _args(args), group))
    return ran


def _refused_before_running(error: Any) -> bool:
    """Whether an inspect_ai tool message's ``error`` says the tool did not run: its approver
    rejected the call, or the call named no tool or arguments it takes (``parsing``; but an
    embedded null byte is found by the tool's own subprocess, once it runs)."""
    kind = getattr(error, "type", None)
    text = str(getattr(error, "message", ""))
    return kind == "approval" or (kind == "parsing" and "embedded null byte" not in text)


def _inspect_ai(messages: Iterable[Any]) -> list[_Ran]:
    asked: dict[str, Any] = {}
    ran: list[_Ran] = []
    group = 0
    for message in messages:
        role = getattr(message, "role", "")
        if role == "assistant":
            group += 1  # the tool messages after it answer its calls
            for call in getattr(message, "tool_calls", None) or ():
                asked[str(getattr(call, "id", ""))] = getattr(call, "arguments", None)
        elif role == "tool" and not _refused_before_running(getattr(message, "error", None)):
            name = str(getattr(message, "function", "") or "tool")
            args = asked.get(str(getattr(message, "tool_call_id", "")))
            ran.append(_Ran(name, _args(args), group))
    return ran


def _calls(run: Any) -> list[_Ran]:
    """The calls of :func:`framework_calls`, with what the framework tells of each."""
    if callable(getattr(run, "all_messages", None)):
        return _pydantic_ai(run.all_messages())
    if hasattr(run, "new_items"):
        return _openai_agents(run.new_items)
    if hasattr(run, "samples"):  # an inspect_ai eval log
        ran: list[_Ran] = []
        for at, sample in enumerate(run.samples or ()):
            ran += [_Ran(c.name, c.args, c.group, c.span, at) for c in _calls(sample)]
        return ran
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


def framework_calls(run: Any) -> list[str]:
    """The tool calls ``run`` (a framework's run result, log or messages) says ran, by name.

    Raises ``TypeError`` for anything else, a list of items none of those frameworks writes
    (plain dicts, such as a run's input list) included: read as no calls, it would name none.
    """
    return [call.name for call in _calls(run)]


def _names(record: Any) -> tuple[str, ...]:
    """The names a framework may give the call ``record`` holds (see the module doc)."""
    tool = str(record.tool)
    proxied = _PROXIED.fullmatch(tool)
    return (tool, proxied["tool"]) if proxied else (tool,)


def _same(asked: Any, kept: Any) -> bool:
    """Whether a recorded value ``kept`` is the argument ``asked`` (a redacted part matching
    anything)."""
    if isinstance(asked, Mapping) and isinstance(kept, Mapping):
        return all(key in kept and _same(value, kept[key]) for key, value in asked.items())
    if isinstance(asked, (list, tuple)) and isinstance(kept, (list, tuple)):
        return len(asked) == len(kept) and all(map(_same, asked, kept))
    if asked == kept:
        return True
    if isinstance(kept, str) and _MARKER.search(kept):
        parts = (re.escape(part) for part in _MARKER.split(kept))
        return re.fullmatch(".+".join(parts), str(asked), re.DOTALL) is not None
    return not isinstance(asked, (Mapping, list, tuple)) and str(asked) == str(kept)


def _accounts(record: Any, call: _Ran) -> bool:
    """Whether ``record`` may be the record of ``call``."""
    if call.name not in _names(record):
        return False
    params = getattr(record, "params", None)
    if call.args is not None and isinstance(params, Mapping) and not _same(call.args, params):
        return False
    if call.span is not None:
        raw = getattr(record, "raw", None)
        stamp = raw.get("timestamp") if isinstance(raw, Mapping) else None
        when = parse_timestamp(stamp) if isinstance(stamp, str) else None
        if when is not None and not call.span[0] <= when <= call.span[1]:
            return False
    return True


def ungated_calls(harness: _Recorded, run: Any, *, since: int = 0) -> list[str]:
    """The tool calls ``run`` made that ``harness`` recorded no call for (name, once per call).

    Empty when every call the framework ran went through the gate. Each record accounts for
    one call of this run at most, matched as the module doc says. ``since``: how many calls
    the session had recorded before the run; none of those accounts for its calls.
    """
    if isinstance(since, bool) or not isinstance(since, int) or since < 0:
        raise ValueError(f"ungated_calls: since must be a count of calls (>= 0), got {since!r}")
    records = list(harness.calls())[since:]
    used: set[int] = set()
    missing: list[str] = []
    # per thread: its current response, the last record its earlier responses were matched
    # to, and the last record matched so far
    where: dict[int, tuple[int | None, int, int]] = {}
    ran = _calls(run)
    # the samples of an eval log run side by side: their records interleave, and which of two
    # like records is whose cannot be told, so their calls are matched in no order
    ordered = len({call.thread for call in ran}) < 2
    for call in ran:
        group, after, latest = where.get(call.thread, (None, -1, -1))
        if ordered and call.group != group:
            group, after = call.group, max(after, latest)
        found = next(
            (
                at
                for at in range(after + 1, len(records))
                if at not in used and _accounts(records[at], call)
            ),
            None,
        )
        if found is None:
            missing.append(call.name)
        else:
            used.add(found)
            latest = max(latest, found)
        where[call.thread] = (group, after, latest)
    return missing


__all__ = ["framework_calls", "ungated_calls"]
