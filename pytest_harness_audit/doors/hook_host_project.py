"""The ``permissions`` of the project's settings files, as one name in the host settings state.

The host writes an ``allow`` rule to the project's ``.claude/settings.local.json`` (or
``.claude/settings.json``) when the user allows a tool for good at its prompt, so those files
are compared without their ``permissions`` (:mod:`.hook_host_settings`), and their
``permissions`` are kept apart, under :func:`permissions_name` in the same state: the entries'
set (:func:`~.hook_host_permissions.permission_entries`), judged by what a change adds
(:func:`~.hook_host_permissions.judge_added`) as ``allowedTools`` is. The state is the one the
chain already holds for the host's settings, so every event that compares it (between calls,
at ``ConfigChange``, when a session whose hooks stopped is reported) judges them too, and a
record holding the state holds them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_harness_audit.doors.hook_host_permissions import (
    Change,
    entries_state,
    judge_added,
    permission_entries,
)

#: The project's own settings files (whose ``permissions`` the host writes).
PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
#: The prefix of the name, in a state, of a project's settings ``permissions`` (the project's
#: path follows it).
PERMISSIONS_PREFIX = "permissions:"
#: The key, in what ``hook pre`` kept of the workspace, of the same entries (a call's window
#: judges their change, :class:`~.hook_effects.HookInspector`).
PERMISSIONS_KEY = "projectPermissions"


def permissions_name(project: str) -> str:
    """The name of ``project``'s settings ``permissions`` in a state."""
    return PERMISSIONS_PREFIX + project


def is_permissions(name: str) -> bool:
    """Whether a state's name is that of a project's settings ``permissions``."""
    return name.startswith(PERMISSIONS_PREFIX)


def settings_paths(project: str | None) -> list[str]:
    """The project's settings files (none without a project)."""
    return [os.path.join(project, name) for name in PROJECT_SETTINGS] if project else []


def _paths_of(name: str) -> list[str]:
    return settings_paths(name[len(PERMISSIONS_PREFIX) :])


def permissions_value(name: str) -> str | None:
    """The entries now of the project a :func:`permissions_name` names, as a state value."""
    return entries_state(permission_entries(_paths_of(name)))


def shown_permissions(name: str) -> str:
    """The name as a reason shows it."""
    return os.path.join(name[len(PERMISSIONS_PREFIX) :], ".claude", "settings*.json") + (
        " (permissions)"
    )


def permissions_change(
    known: Mapping[str, Any],
    names: Iterable[str],
    *,
    asked: Iterable[tuple[str, Mapping[str, Any]]] = (),
) -> Change | None:
    """The change of the ``permissions`` named among ``names`` since ``known`` (a state), each
    entry added judged against the asked calls still open; ``None``: none of them is named."""
    chosen = [name for name in names if is_permissions(name)]
    if not chosen:
        return None
    open_asks = list(asked)
    changes = [
        judge_added(known.get(name), permission_entries(_paths_of(name)), asked=open_asks)
        for name in chosen
    ]
    return Change(
        tuple(rule for change in changes for rule in change.at_prompt),
        tuple(rule for change in changes for rule in change.unprompted),
        tuple(rule for change in changes for rule in change.unexplained),
        sum(change.removed for change in changes),
    )


__all__ = [
    "PERMISSIONS_KEY",
    "PERMISSIONS_PREFIX",
    "PROJECT_SETTINGS",
    "is_permissions",
    "permissions_change",
    "permissions_name",
    "permissions_value",
    "settings_paths",
    "shown_permissions",
]
