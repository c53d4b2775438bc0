"""``harness-audit hook install``: write or merge the hooks block into Claude Code settings.

The block runs ``harness-audit hook …`` for PreToolUse, PostToolUse, PostToolUseFailure,
PermissionRequest, PermissionDenied, Stop, SubagentStop, SessionStart, SessionEnd and
ConfigChange, each in a group matching every occurrence of its event (``"matcher": "*"``: every
tool, MCP tools included). Merging keeps every other key and every other hook of the file; an
entry that already runs one of these commands is updated in place, so installing twice changes
nothing, except that one in a group with a narrower matcher moves to a group matching
everything, and one with fields that would keep it from gating every call (``if``, ``async``,
``asyncRewake``, ``args``) loses them, and a ``pre`` or ``permission-request`` entry whose own
``timeout`` would have the host cancel it (and run the call) before its ``--deadline`` refuses
the call gets :data:`TIMEOUT_FLOORS` seconds. The change is shown as a unified diff.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.atomic_file import replace_file
from pytest_harness_audit.doors.hook_deadline import DEADLINE_S
from pytest_harness_audit.errors import UsageError

#: (host event, ``hook`` subcommand, whether the event takes a tool ``matcher``)
EVENTS = (
    ("PreToolUse", "pre", True),
    ("PostToolUse", "post", True),
    ("PostToolUseFailure", "post", True),
    ("PermissionRequest", "permission-request", True),
    ("PermissionDenied", "permission-denied", True),
    ("Stop", "stop", False),
    ("SubagentStop", "subagent-stop", False),
    ("SessionStart", "session-start", False),
    ("SessionEnd", "session-end", False),
    ("ConfigChange", "config-change", False),
)
_PREFIX = "harness-audit hook "
#: Seconds an entry may run, where the host's default is too short: SessionEnd hooks share a
#: 1.5 s budget unless an entry asks for more (up to 60 s), and ``session-end`` verifies the
#: whole chain and writes the report.
TIMEOUTS = {"SessionEnd": 30}
#: Seconds below which an entry's own ``timeout`` is raised, where the host runs the call when
#: it cancels the hook: past its ``--deadline`` the step refuses the call itself, but only if
#: the host has not cancelled it first (an entry without a ``timeout`` gets the host's 600 s).
#: A post step too: past its deadline it keeps the fault of a call that ran unjudged, which a
#: step the host cancelled first could only keep as a slow step's, not as a stall.
TIMEOUT_FLOORS = dict.fromkeys(
    ("PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "PermissionDenied"),
    int(DEADLINE_S) + 30,
)
#: Events whose entries carry ``"onFailure": "block"``: the host (Claude Code 2.1.295 or later)
#: then refuses the call when the step cannot start, is killed or exits with a code it does not
#: expect, where it would otherwise run the call unjudged; the steps themselves answer every
#: failure of theirs with a refusal already (exit 2, a ``deny`` decision).
FAIL_CLOSED = frozenset({"PreToolUse", "PermissionRequest"})
ON_FAILURE = ("onFailure", "block")
#: The ``matcher`` values the host runs a group for on every occurrence of its event.
_MATCH_ALL = ("", "*")
#: Entry fields that would keep one of our entries from gating every call: ``if`` narrows it,
#: ``async`` and ``asyncRewake`` run it without waiting for its answer, ``args`` runs
#: ``command`` as one executable name (the host runs no hook then, and the call goes on).
_NARROWING = ("if", "async", "asyncRewake", "args")


@dataclass(frozen=True)
class Installed:
    """The settings file, whether it changed, and the diff shown for it."""

    path: Path
    changed: bool
    diff: str


def settings_path(scope: str, project_dir: Path, home: Path | None = None) -> Path:
    """``.claude/settings.json`` of the project (``scope="project"``) or the user (``"user"``)."""
    if scope == "user":
        return (home if home is not None else Path.home()) / ".claude" / "settings.json"
    return project_dir / ".claude" / "settings.json"


def hook_command(subcommand: str, policy_args: str, pre_args: str = "") -> str:
    """The command line one hook entry runs (``pre_args`` only for ``pre``)."""
    more = f" {pre_args}" if pre_args and subcommand == "pre" else ""
    return f"{_PREFIX}{subcommand} {policy_args}{more}".rstrip()


def merged_settings(
    settings: dict[str, Any], policy_args: str, *, where: str, pre_args: str = ""
) -> dict[str, Any]:
    """``settings`` with the harness hooks added or updated (a new dict; the input is kept).

    ``pre_args`` are the pre step's answer options (``--warn pass``, ``--approve-allowed``).
    """
    merged: dict[str, Any] = json.loads(json.dumps(settings))
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError(f"{where}: field 'hooks' must be an object, got {type(hooks).__name__}")
    for event, subcommand, takes_matcher in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise UsageError(f"{where}: field 'hooks.{event}' must be a list")
        command = hook_command(subcommand, policy_args, pre_args)
        timeout = _take_narrowed(groups, subcommand, TIMEOUTS.get(event))
        floor = TIMEOUT_FLOORS.get(event)
        closed = event in FAIL_CLOSED
        if not _update_existing(groups, subcommand, command, timeout, floor, closed=closed):
            entry: dict[str, Any] = {"type": "command", "command": command}
            if timeout is not None:
                entry["timeout"] = timeout
            if closed:
                entry[ON_FAILURE[0]] = ON_FAILURE[1]
            group: dict[str, Any] = {"hooks": [entry]}
            if takes_matcher:
                group = {"matcher": "*", **group}
            groups.append(group)
    return merged


def _ours(entry: Any, subcommand: str) -> bool:
    """Whether ``entry`` runs ``harness-audit hook <subcommand>``."""
    text = entry.get("command") if isinstance(entry, dict) else None
    return isinstance(text, str) and (text + " ").startswith(f"{_PREFIX}{subcommand} ")


def _matches_all(group: dict[str, Any]) -> bool:
    """Whether the host runs the group's hooks for every occurrence of its event."""
    return group.get("matcher", "") in _MATCH_ALL


def _take_narrowed(groups: list[Any], subcommand: str, timeout: int | None) -> int | None:
    """Take our entries out of groups whose ``matcher`` narrows them (a group left empty goes
    too); the timeout the entry then needs: ``timeout``, or more if a taken entry had more."""
    for group in list(groups):
        entries = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(entries, list) or _matches_all(group):
            continue
        for entry in [entry for entry in entries if _ours(entry, subcommand)]:
            entries.remove(entry)
            given = entry.get("timeout")
            if timeout is not None and isinstance(given, (int, float)) and given > timeout:
                timeout = int(given)
        if not entries:
            groups.remove(group)
    return timeout


def _update_existing(
    groups: list[Any],
    subcommand: str,
    command: str,
    timeout: int | None = None,
    floor: int | None = None,
    *,
    closed: bool = False,
) -> bool:
    """Point an entry already running ``harness-audit hook <subcommand>`` at ``command`` (with
    at least ``timeout`` seconds, when given; a ``timeout`` of its own below ``floor`` raised to
    it), a blocking command hook run for every call (``closed``: whose failure blocks it)."""
    found = False
    for group in groups:
        entries = group.get("hooks") if isinstance(group, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if _ours(entry, subcommand):
                entry["type"] = "command"
                entry["command"] = command
                for key in _NARROWING:
                    entry.pop(key, None)
                if closed:
                    entry[ON_FAILURE[0]] = ON_FAILURE[1]
                found = True
                given = entry.get("timeout")
                enough = isinstance(given, (int, float)) and given >= (timeout or 0)
                if timeout is not None and not enough:
                    entry["timeout"] = timeout
                if floor is not None and isinstance(given, (int, float)) and given < floor:
                    entry["timeout"] = floor
    return found


def install(
    path: Path, policy_args: str = "--preset safety", *, write: bool = True, pre_args: str = ""
) -> Installed:
    """Merge the hooks into the settings file at ``path`` (created when absent)."""
    try:
        before = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = ""
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        settings = json.loads(before) if before.strip() else {}
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    if not isinstance(settings, dict):
        raise UsageError(f"{path}: expected a JSON object, got {type(settings).__name__}")
    merged = merged_settings(settings, policy_args, where=str(path), pre_args=pre_args)
    after = json.dumps(merged, indent=2) + "\n"
    changed = json.loads(after) != settings or not before.strip()
    diff = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True) if before.strip() else [],
            after.splitlines(keepends=True),
            fromfile=f"{path} (before)",
            tofile=str(path),
        )
    )
    if changed and write:
        replace_file(path, after.encode("utf-8"))
    return Installed(path, changed, diff if changed else "")
