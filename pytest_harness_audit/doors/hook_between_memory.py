"""The workspace's memory files changed between hook events.

A memory file (``MEMORY.md``, ``memory/**/*.md``, an agent's ``.claude/…/memory…``, as
:func:`~pytest_harness_audit.policy.sensitive.is_memory_path` names them) written by a process
a call left running, after the call's post, is in no call's window. So :mod:`.hook_between`
keeps their state with the protected files' and compares it at the next event: the memory
files the last kept state knew, every memory file at the workspace's top, and those in its
memory folders (``memory/`` and the agents' dot folders, walked up to :data:`MAX_MEMORY_FILES`
files). A difference is the alert ``memory_write`` (``effects.memory``), judged by the policy's
effect rules (``safety``: WARN), not a protected file's FAIL.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from pytest_harness_audit.policy.sensitive import is_memory_path

#: Most files walked in a workspace's memory folders at one event.
MAX_MEMORY_FILES = 512
#: Folders at the workspace's top that hold memory files (besides ``memory/`` in any case).
_AGENT_FOLDERS = frozenset({".claude", ".web4", ".moltbot", ".clawdbot", ".openclaw"})


def memory_candidates(root: str) -> set[str]:
    """The memory files now at the top of ``root`` and in its memory folders (relative)."""
    found: set[str] = set()
    folders: list[str] = []
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name.lower() == "memory" or entry.name in _AGENT_FOLDERS:
                        folders.append(entry.name)
                elif is_memory_path(entry.name):
                    found.add(entry.name)
    except OSError:
        return found
    budget = MAX_MEMORY_FILES
    while folders and budget > 0:
        folder = folders.pop()
        try:
            with os.scandir(os.path.join(root, folder)) as entries:
                for entry in entries:
                    relative = f"{folder}/{entry.name}"
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(relative)
                        continue
                    budget -= 1
                    if is_memory_path(relative):
                        found.add(relative)
                    if budget <= 0:
                        break
        except OSError:
            continue
    return found


def memory_paths(paths: Iterable[str]) -> list[str]:
    """The memory files among ``paths``, sorted."""
    return sorted(path for path in paths if is_memory_path(path))


__all__ = ["MAX_MEMORY_FILES", "memory_candidates", "memory_paths"]
