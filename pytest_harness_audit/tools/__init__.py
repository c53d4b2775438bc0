"""Workspace tool executors: real, confined to the workspace root, never raising for a bad call.

Use :class:`ToolBox` — ``ToolBox(root).run("Read", {"file_path": "README.md"})`` — which returns a
:class:`ToolOutcome`. The built-in tools take Claude Code's parameters: ``Read``, ``Write``,
``Edit``, ``Bash``, ``Glob``, ``Grep``, ``TodoWrite``, ``Task``, ``WebFetch``, ``WebSearch``.
"""

from __future__ import annotations

from pytest_harness_audit.tools.network import NetworkStub
from pytest_harness_audit.tools.outcome import ToolFailure, ToolOutcome, ToolStatus
from pytest_harness_audit.tools.planning import TaskRecord, TodoItem
from pytest_harness_audit.tools.toolbox import BUILTIN_TOOLS, ToolBox, ToolFunction

__all__ = [
    "BUILTIN_TOOLS",
    "NetworkStub",
    "TaskRecord",
    "TodoItem",
    "ToolBox",
    "ToolFailure",
    "ToolFunction",
    "ToolOutcome",
    "ToolStatus",
]
