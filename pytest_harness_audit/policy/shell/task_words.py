"""The words of a task runner's command line, and the order its tasks run in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.tools import option_value as option

#: Most tasks read for one command (a task and what it depends on).
MAX_TASKS: Final = 32


def operands(args: list[str], valued: frozenset[str] = frozenset()) -> list[str]:
    """The words of ``args`` that are no option (nor an option's value), up to ``--``."""
    words: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            break
        if word.startswith("-"):
            index += 2 if word in valued else 1
            continue
        words.append(word)
        index += 1
    return words


def first_text(paths: tuple[str, ...], runner: Runner) -> tuple[str, str] | None:
    """The first of ``paths`` that is a workspace file, with its text."""
    for path in paths:
        text = runner.workspace_text(path)
        if text is not None:
            return path, text
    return None


def closure(start: list[str], dependencies: Callable[[str], list[str]]) -> list[str]:
    """``start`` and what they depend on, each once, at most :data:`MAX_TASKS`."""
    seen: list[str] = []
    pending = list(start)
    while pending and len(seen) < MAX_TASKS:
        name = pending.pop(0)
        if name not in seen:
            seen.append(name)
            pending.extend(dependencies(name))
    return seen


__all__ = ["MAX_TASKS", "closure", "first_text", "operands", "option"]
