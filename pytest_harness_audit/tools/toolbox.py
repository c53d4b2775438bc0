"""``ToolBox``: the workspace tools of one harness session, run by name.

``ToolBox.run`` never raises for a problem of the call itself — bad parameters, a missing file, a
failing command, a timeout, an escaping path or an exception in a custom tool all come back as an
error :class:`ToolOutcome` with a one-line message.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.tools.confinement import WorkspacePaths
from pytest_harness_audit.tools.files import edit_file, read_file, write_file
from pytest_harness_audit.tools.network import NetworkStub, web_fetch, web_search
from pytest_harness_audit.tools.outcome import ToolFailure, ToolOutcome
from pytest_harness_audit.tools.planning import (
    TaskRecord,
    TodoItem,
    parse_task,
    parse_todos,
    task_summary,
    todo_summary,
)
from pytest_harness_audit.tools.search import glob_files, grep_files
from pytest_harness_audit.tools.shell import bash_environment, run_bash

ToolFunction = Callable[[Mapping[str, Any]], Any]
"""A tool: takes the call's parameters, returns its output (or raises to fail)."""

BUILTIN_TOOLS = (
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "Read",
    "Task",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
)
"""Names of the tools every :class:`ToolBox` has."""


@dataclass(frozen=True)
class _RegisteredTool:
    # a cancellable function also takes ``cancel=``
    function: Callable[..., Any]
    category: str | None
    custom: bool
    #: Takes a ``cancel`` keyword (a ``threading.Event``) and stops when it is set.
    cancellable: bool = False


class ToolBox:
    """The tools of one workspace rooted at ``root``; web tools answer from ``network``.

    ``bash_env`` adds variables to the environment ``Bash`` commands see (see
    :func:`~pytest_harness_audit.tools.shell.bash_environment`). ``withhold(path)`` names files
    (relative to the root) whose contents ``Grep`` must not show — the harness passes the files
    its policy would not let ``Read``, so a search cannot leak what a read may not.
    """

    def __init__(
        self,
        root: Path,
        network: NetworkStub | None = None,
        *,
        bash_env: Mapping[str, str] | None = None,
        withhold: Callable[[str], bool] | None = None,
    ) -> None:
        if not os.path.isdir(root):
            raise UsageError(f"workspace root is not a directory: {root}")
        self._paths = WorkspacePaths(root)
        self.network = network if network is not None else NetworkStub()
        self._bash_env = bash_environment(self._paths.root, bash_env)
        self._todos: tuple[TodoItem, ...] = ()
        self._tasks: list[TaskRecord] = []
        builtins: dict[str, ToolFunction] = {
            "Read": partial(read_file, self._paths),
            "Write": partial(write_file, self._paths),
            "Edit": partial(edit_file, self._paths),
            "Glob": partial(glob_files, self._paths),
            "Grep": partial(grep_files, self._paths, withhold=withhold),
            "Bash": partial(run_bash, self._paths.root, self._bash_env),
            "TodoWrite": self._todo_write,
            "Task": self._task,
            "WebFetch": partial(web_fetch, self.network),
            "WebSearch": partial(web_search, self.network),
        }
        self._tools: dict[str, _RegisteredTool] = {
            name: _RegisteredTool(function, None, custom=False, cancellable=name == "Bash")
            for name, function in builtins.items()
        }

    @property
    def root(self) -> Path:
        """The workspace root, with symlinks resolved."""
        return self._paths.root

    @property
    def todos(self) -> tuple[TodoItem, ...]:
        """The todo list as the last successful ``TodoWrite`` left it."""
        return self._todos

    @property
    def tasks(self) -> tuple[TaskRecord, ...]:
        """Every ``Task`` the agent asked for, in order."""
        return tuple(self._tasks)

    def names(self) -> list[str]:
        """The names of all tools, built-in and registered, sorted."""
        return sorted(self._tools)

    def register(self, name: str, fn: ToolFunction, category: str | None = None) -> None:
        """Add (or replace) the tool ``name``: ``fn(params)`` returns its output or raises.

        ``category`` is what a policy should classify the tool as (``category_of``). An exception
        raised by ``fn`` becomes an error outcome. If ``fn`` returns a :class:`ToolOutcome`, that
        outcome is used as it is.
        """
        if not isinstance(name, str) or not name.strip():
            raise UsageError(
                f"register_tool: the tool name must be a non-empty string, got {name!r}"
            )
        if not callable(fn):
            raise UsageError(f"register_tool({name!r}): the tool must be callable, got {fn!r}")
        if category is not None and (not isinstance(category, str) or not category):
            raise UsageError(
                f"register_tool({name!r}): category must be a non-empty string, got {category!r}"
            )
        self._tools[name] = _RegisteredTool(fn, category, custom=True)

    def category_of(self, name: str) -> str | None:
        """The category given when ``name`` was registered; ``None`` for built-ins and unknowns."""
        tool = self._tools.get(name)
        return tool.category if tool is not None else None

    def run(
        self, tool: str, params: Mapping[str, Any], *, cancel: threading.Event | None = None
    ) -> ToolOutcome:
        """Run ``tool`` with ``params``; every tool-level problem is an error outcome.

        Setting ``cancel`` while the call runs stops a ``Bash`` command (its whole process
        group is ended); the other built-in tools are quick and run to their end.
        """
        registered = self._tools.get(tool)
        if registered is None:
            return ToolOutcome.failure(
                f"unknown tool {tool!r} (available: {', '.join(self.names())})"
            )
        if not isinstance(params, Mapping):
            return ToolOutcome.failure(
                f"{tool}: parameters must be a mapping, got {type(params).__name__}"
            )
        try:
            if registered.cancellable and cancel is not None:
                output = registered.function(dict(params), cancel=cancel)
            else:
                output = registered.function(dict(params))
        except ToolFailure as failure:
            return ToolOutcome.failure(failure.message, failure.output)
        except Exception as exc:
            if registered.custom:
                return ToolOutcome.failure(f"{tool} raised {type(exc).__name__}: {exc}")
            return ToolOutcome.failure(f"{tool}: unexpected {type(exc).__name__}: {exc}")
        if isinstance(output, ToolOutcome):
            return output
        return ToolOutcome.success(output)

    def _todo_write(self, params: Mapping[str, Any]) -> str:
        self._todos = parse_todos(params)
        return todo_summary(self._todos)

    def _task(self, params: Mapping[str, Any]) -> str:
        task = parse_task(params)
        self._tasks.append(task)
        return task_summary(task)
