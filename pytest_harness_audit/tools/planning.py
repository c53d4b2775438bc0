"""``TodoWrite`` and ``Task``: state the agent keeps, recorded in the toolbox; nothing runs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.tools.outcome import ToolFailure
from pytest_harness_audit.tools.params import ToolParams

TODO_STATUSES = ("pending", "in_progress", "completed")
"""The statuses a todo item may have."""
_TODO_KEYS = frozenset({"content", "status", "activeForm", "priority", "id"})


@dataclass(frozen=True)
class TodoItem:
    """One entry of the agent's todo list."""

    content: str
    status: str
    active_form: str | None = None
    priority: str | None = None
    id: str | None = None


@dataclass(frozen=True)
class TaskRecord:
    """A sub-agent task the agent asked for; the harness records it and runs nothing."""

    description: str
    prompt: str
    subagent_type: str


def _todo_item(index: int, raw: Any) -> TodoItem:
    where = f"TodoWrite: todos[{index}]"
    if not isinstance(raw, Mapping):
        raise ToolFailure(f"{where} must be a mapping (got {raw!r})")
    unknown = sorted(str(key) for key in raw if key not in _TODO_KEYS)
    if unknown:
        raise ToolFailure(
            f"{where}: unknown key {', '.join(map(repr, unknown))} "
            f"(accepted: {', '.join(sorted(_TODO_KEYS))})"
        )
    content = raw.get("content")
    if not isinstance(content, str) or not content:
        raise ToolFailure(f"{where}.content must be a non-empty string (got {content!r})")
    status = raw.get("status")
    if status not in TODO_STATUSES:
        raise ToolFailure(
            f"{where}.status must be one of {', '.join(TODO_STATUSES)} (got {status!r})"
        )
    optional: dict[str, str | None] = {}
    for key in ("activeForm", "priority", "id"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise ToolFailure(f"{where}.{key} must be a string (got {value!r})")
        optional[key] = value
    return TodoItem(
        content=content,
        status=str(status),
        active_form=optional["activeForm"],
        priority=optional["priority"],
        id=optional["id"],
    )


def parse_todos(params: Mapping[str, Any]) -> tuple[TodoItem, ...]:
    """The validated ``todos`` list of a ``TodoWrite`` call."""
    args = ToolParams("TodoWrite", params, ("todos",))
    raw = args.raw("todos")
    if not isinstance(raw, list):
        raise ToolFailure(f"TodoWrite: parameter 'todos' must be a list (got {raw!r})")
    return tuple(_todo_item(index, item) for index, item in enumerate(raw))


def todo_summary(todos: tuple[TodoItem, ...]) -> str:
    """``todos updated: 3 items (1 completed, 1 in_progress, 1 pending)``."""
    counts = [f"{sum(t.status == s for t in todos)} {s}" for s in reversed(TODO_STATUSES)]
    plural = "" if len(todos) == 1 else "s"
    return f"todos updated: {len(todos)} item{plural} ({', '.join(counts)})"


def parse_task(params: Mapping[str, Any]) -> TaskRecord:
    """The validated ``Task`` parameters (``subagent_type`` defaults to ``general-purpose``)."""
    args = ToolParams("Task", params, ("description", "prompt", "subagent_type", "model"))
    description = args.required_str("description")
    prompt = args.required_str("prompt")
    subagent_type = args.optional_str("subagent_type") or "general-purpose"
    args.optional_str("model")
    return TaskRecord(description=description, prompt=prompt, subagent_type=subagent_type)


def task_summary(task: TaskRecord) -> str:
    """What a ``Task`` call answers: that it was recorded and not run."""
    return f"task recorded, not run in the harness: {task.description} ({task.subagent_type})"
