"""A blocked function-tool call, raised as the host framework's own "this call failed" error.

Agent frameworks tell a tool's failure to the model, and let the agent go on, only for their own
exception classes; any other exception ends the run (pydantic-ai) or fails the sample
(inspect_ai). A governance block is such a failure: the call was refused, the agent should read
why and adapt, as Claude Code's agent does after a hook's ``deny``. So the exception a blocked
call raises is :class:`~pytest_harness_audit.doors.tools.ToolCallBlocked` and, at once, each
loaded framework's class:

* pydantic-ai: ``pydantic_ai.exceptions.ToolFailed`` (a terminal failure the model reads; it does
  not spend the tool's retries, as ``ModelRetry`` would, nor ask the model to try again);
* inspect_ai: ``inspect_ai.tool.ToolError`` (reported to the model instead of ending the sample).

A framework counts only when its module is already imported: a host that runs the tool has
imported it, and a test that calls the tool directly pays no import. The OpenAI Agents SDK has
no such class (it shows the model a fixed text for every tool exception);
:func:`~pytest_harness_audit.doors.tools.block_shown_to_model` is a ``failure_error_function``
that shows a block's text instead.
"""

from __future__ import annotations

import sys

#: ``(module, class)`` of each framework's "tell the model this tool call failed" exception.
HOST_FAILURES: tuple[tuple[str, str], ...] = (
    ("pydantic_ai.exceptions", "ToolFailed"),
    ("inspect_ai.tool", "ToolError"),
)


def loaded_host_failures() -> tuple[type[Exception], ...]:
    """The exception classes of :data:`HOST_FAILURES` whose framework is imported."""
    found: list[type[Exception]] = []
    for module_name, class_name in HOST_FAILURES:
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None) if module is not None else None
        if isinstance(cls, type) and issubclass(cls, Exception):
            found.append(cls)
    return tuple(found)


_mixed: dict[tuple[type[Exception], ...], type[Exception]] = {}


def _with_hosts(base: type[Exception], hosts: tuple[type[Exception], ...]) -> type[Exception]:
    key = (base, *hosts)
    mixed = _mixed.get(key)
    if mixed is None:  # one class per combination: ``except`` and ``type(a) is type(b)`` agree
        mixed = _mixed.setdefault(key, type(base.__name__, key, {"__module__": base.__module__}))
    return mixed


def as_host_failure(base: type[Exception]) -> type[Exception]:
    """``base``, or a class of its name that is also every loaded framework's failure class."""
    hosts = tuple(host for host in loaded_host_failures() if not issubclass(base, host))
    return _with_hosts(base, hosts) if hosts else base


__all__ = ["HOST_FAILURES", "as_host_failure", "loaded_host_failures"]
