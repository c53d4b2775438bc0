"""The host's own settings, watched by the hook door across a call and between its events.

``~/.claude/settings.json`` (``disableAllHooks``, ``hooks``), ``~/.claude.json`` (``mcpServers``),
the host's managed settings and managed MCP servers, the project's ``.claude/settings*.json`` and
``.mcp.json`` and the agents, commands and skills folders under ``~/.claude`` decide whether the
hooks run at all, which tools exist and what the agent is told. The gate refuses a write to them
it can read, but a program can build their names at run time
(``os.path.expanduser('~') + '/.cla' + 'ude/settings.json'``), and a process a call left running
can change them after the call's post. So the door keeps a digest of the parts of
each that count (:func:`host_settings_state`):

* across a call: ``hook pre`` keeps it in the call's pending file and ``hook post`` compares; a
  change is the call's effect ``protected_file_changed`` (``effects.hostSettings``), judged as a
  persona rewrite is (``safety``: FAIL);
* between events: ``session-start`` records it in the chain (its ``session`` record), and every
  later event compares the settings with the last state the chain holds; a change no call's
  window saw is a ``note`` record (:data:`~pytest_harness_audit.readers.verdict.
  HOST_SETTINGS_CHANGED`, alert ``protected_file_changed``) carrying the new state, and FAILs
  the verdict (``host-settings-changed``). A change after the last event (the hooks switched off,
  so no event came) is found when the session is reported (:func:`late_reasons`).

Only the parts that count are compared: the host rewrites the rest of ``~/.claude.json``
(counters, tips, history) on its own during a session; its ``projects[*].allowedTools``
(:mod:`.hook_host_permissions`) and the ``permissions`` of the project's settings files
(:mod:`.hook_host_project`) are judged by what a change adds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.doors.chain_faults import open_gate as open_session_gate
from pytest_harness_audit.doors.hook_host_digest import (
    FOLDER_ENTRY_LIMIT,
    file_digest,
    folder_digest,
    marked_records,
)
from pytest_harness_audit.doors.hook_host_permissions import (
    ALLOWED_TOOLS,
    HOST_ALLOWED_TOOLS,
    PERMISSIONS_EFFECTS_KEY,
    Change,
    allowed_state,
    asked_calls,
    change_of,
)
from pytest_harness_audit.doors.hook_host_project import (
    PERMISSIONS_KEY,
    PROJECT_SETTINGS,
    is_permissions,
    permissions_change,
    permissions_name,
    permissions_value,
    shown_permissions,
)
from pytest_harness_audit.doors.hook_unfinished import USE_ID_FIELD
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.inspect import PROTECTED_FILE_CHANGED
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import (
    HOST_SETTINGS_CHANGED,
    HOST_SETTINGS_CODE,
    Verdict,
    VerdictReason,
)

_SETTINGS_KEYS = (
    "hooks", "disableAllHooks", "permissions", "env", "apiKeyHelper", "mcpServers",
    "enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers",
    "statusLine", "enabledPlugins", "extraKnownMarketplaces",
)  # fmt: skip
#: The host's settings files (under the home folder) and the keys of each that count.
HOST_SETTINGS: Mapping[str, tuple[str, ...]] = {
    ".claude/settings.json": _SETTINGS_KEYS,
    ".claude/settings.local.json": _SETTINGS_KEYS,
    ".claude.json": ("mcpServers", "projects"),
}
#: The folders under the home folder whose listing and contents count (the host's own agents,
#: slash commands and skills: what the agent is told).
HOST_FOLDERS = (".claude/agents/", ".claude/commands/", ".claude/skills/")
#: The host's managed settings (Linux, macOS): every key counts.
MANAGED_SETTINGS = (
    "/etc/claude-code/managed-settings.json",
    "/Library/Application Support/ClaudeCode/managed-settings.json",
)
#: The managed MCP servers' file, beside each managed settings file: every key counts.
MANAGED_MCP = "managed-mcp.json"
#: Other managed settings files (``os.pathsep``-separated) instead of :data:`MANAGED_SETTINGS`.
MANAGED_ENV = "HARNESS_AUDIT_MANAGED_SETTINGS"
#: The project's MCP servers (every key counts), watched as its settings files are.
PROJECT_MCP = ".mcp.json"
#: What counts in them (:data:`PROJECT_SETTINGS`, watched between events; a call's window sees
#: them as protected files of the workspace): not ``permissions``, which the host itself writes
#: when the user allows a tool for good at its prompt; those are judged by what a change adds
#: (:mod:`.hook_host_project`).
_PROJECT_SETTINGS_KEYS = tuple(key for key in _SETTINGS_KEYS if key != "permissions")
#: The record field holding a state (a ``session`` record holds it in its ``session`` field).
STATE_FIELD = "hostSettings"
_MANAGED = "managed:"
#: The prefix of a project settings file's name in a state.
PROJECT_PREFIX = "project:"
_SESSION_EVENTS = ("SessionStart", "SessionEnd")


def host_settings_state(
    home: str | None = None,
    *,
    project: str | None = None,
    names: Iterable[str] | None = None,
    environ: Mapping[str, str] | None = None,
    taken: Mapping[str, str | None] | None = None,
) -> dict[str, str | None]:
    """``name → digest`` of what counts in each of the host's settings (``None``: absent).

    ``names``: those of an earlier state (so a state taken later compares the same files);
    else the home folder's files and folders, the managed settings and managed MCP servers and,
    with ``project``, the project's settings files and ``.mcp.json``. ``taken``: digests
    already taken at this event, used as they are for the names it holds."""
    base = home if home is not None else os.path.expanduser("~")
    if names is None:
        env = os.environ if environ is None else environ
        managed = [p for p in (env.get(MANAGED_ENV) or "").split(os.pathsep) if p]
        managed = managed or list(MANAGED_SETTINGS)
        beside = (os.path.join(os.path.dirname(p), MANAGED_MCP) for p in managed)
        chosen = [
            *HOST_SETTINGS,
            ALLOWED_TOOLS,
            *HOST_FOLDERS,
            *dict.fromkeys(_MANAGED + p for p in (*managed, *beside)),
        ]
        if project:
            files = (*PROJECT_SETTINGS, PROJECT_MCP)
            chosen += [PROJECT_PREFIX + os.path.join(project, name) for name in files]
            chosen.append(permissions_name(project))
        names = chosen
    taken = taken or {}
    return {name: taken[name] if name in taken else _state_of(name, base) for name in names}


def shown(name: str) -> str:
    """A state's name as a reason shows it: ``~/.claude/settings.json``, an absolute path."""
    if is_permissions(name):
        return shown_permissions(name)
    for prefix in (_MANAGED, PROJECT_PREFIX):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return f"~/{name}"


def changed_names(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """The names whose digest differs between two states (only names both hold)."""
    return sorted(name for name in now if name in before and before[name] != now[name])


def changed_host_settings(before: Any, home: str | None = None) -> list[str]:
    """The host settings (as :func:`shown`) whose counted parts changed since ``before`` (a
    :func:`host_settings_state`; anything else compares as nothing known: no change)."""
    if not isinstance(before, Mapping):
        return []
    now = host_settings_state(home, names=[n for n in before if isinstance(n, str)])
    return sorted(shown(name) for name in changed_names(before, now))


def _state_of(name: str, home: str) -> str | None:
    if is_permissions(name):
        return permissions_value(name)
    if name.startswith(_MANAGED):
        return file_digest(name[len(_MANAGED) :], None)
    if name.startswith(PROJECT_PREFIX):
        path = name[len(PROJECT_PREFIX) :]
        mcp = os.path.basename(path) == PROJECT_MCP
        return file_digest(path, None if mcp else _PROJECT_SETTINGS_KEYS)
    if name == ALLOWED_TOOLS:
        return allowed_state(home)
    if name.endswith("/"):
        return folder_digest(os.path.join(home, name))
    keys = HOST_SETTINGS.get(name)
    return None if keys is None else file_digest(os.path.join(home, name), keys)


# -- the state the chain holds ---------------------------------------------------------------


def recorded_state(record: Mapping[str, Any]) -> dict[str, str | None] | None:
    """The host settings state a chain record holds (``None``: none)."""
    value = record.get(STATE_FIELD)
    if not isinstance(value, Mapping) and record.get("kind") == "session":
        session = record.get("session")
        value = session.get(STATE_FIELD) if isinstance(session, Mapping) else None
    if not isinstance(value, Mapping):
        return None
    state = {str(k): v for k, v in value.items() if v is None or isinstance(v, str)}
    return state if len(state) == len(value) else None


@dataclass(frozen=True)
class Recorded:
    """What a session's chain says of the host's settings and of its start and end."""

    #: The last state the chain holds (``None``: none, e.g. a session first seen mid-way).
    state: dict[str, str | None] | None = None
    #: A ``SessionStart`` record is in the chain.
    started: bool = False
    #: The chain's last session event is a ``SessionEnd``.
    ended: bool = False

    @classmethod
    def of(cls, records: Iterable[Mapping[str, Any]]) -> Recorded:
        """Read from the session's records, oldest first."""
        found = cls()
        for record in records:
            if record.get("kind") == "session" and record.get("tool") in _SESSION_EVENTS:
                start = record.get("tool") == _SESSION_EVENTS[0]
                found = replace(found, started=found.started or start, ended=not start)
            state = recorded_state(record)
            if state is not None:
                found = replace(found, state=state)
        return found

    @classmethod
    def read(cls, storage: str | os.PathLike[str], session_id: str) -> Recorded:
        """Read from the stored chain: only the lines that may hold a state or a session event
        are parsed, so a long chain costs one read."""
        marks = (f'"{STATE_FIELD}"'.encode(), *(f'"{e}"'.encode() for e in _SESSION_EVENTS))
        path = StorageLayout.at(storage).paths(session_id).chain
        return cls.of(marked_records(path, marks))


# -- between events ------------------------------------------------------------------------


@dataclass(frozen=True)
class HostWatch:
    """The host's settings at a hook event against the last state the session's chain holds."""

    #: The chain's last state (``None``: nothing known, nothing compared).
    known: dict[str, str | None] | None
    #: The same settings now.
    now: dict[str, str | None] | None
    #: The session's store and id: its asked calls still open explain an ``allowedTools`` entry.
    where: tuple[str, str] | None = None

    @classmethod
    def look(cls, storage: str | os.PathLike[str], session_id: str) -> HostWatch:
        """Compare now with what the chain holds."""
        known = Recorded.read(storage, session_id).state
        now = None if known is None else host_settings_state(names=list(known))
        return cls(known, now, (os.fspath(storage), session_id))

    @property
    def changed(self) -> list[str]:
        """The names whose digest changed since the chain's last state."""
        if self.known is None or self.now is None:
            return []
        return changed_names(self.known, self.now)

    def allowed_change(self) -> Change | None:
        """The change of ``projects[*].allowedTools`` since the chain's last state, judged
        against the asked calls still open (``None``: unchanged)."""
        if self.known is None or ALLOWED_TOOLS not in self.changed:
            return None
        asked = asked_calls(*self.where) if self.where is not None else []
        return change_of(self.known[ALLOWED_TOOLS], os.path.expanduser("~"), asked=asked)

    def permission_change(self, names: list[str] | None = None) -> Change | None:
        """The change of the project settings' ``permissions`` among ``names`` (default every
        changed one) since the chain's last state, judged against the asked calls still open
        (``None``: unchanged)."""
        names = self.changed if names is None else names
        if self.known is None or not any(is_permissions(name) for name in names):
            return None
        asked = asked_calls(*self.where) if self.where is not None else []
        return permissions_change(self.known, names, asked=asked)

    def counted(self, names: list[str]) -> list[str]:
        """``names`` less ``allowedTools`` and the project settings' ``permissions`` when
        their change adds nothing unexplained."""
        change = self.allowed_change() if ALLOWED_TOOLS in names else None
        if change is not None and not change.unexplained:
            names = [name for name in names if name != ALLOWED_TOOLS]
        change = self.permission_change(names)
        if change is not None and not change.unexplained:
            names = [name for name in names if not is_permissions(name)]
        return names

    def record_fields(self, use_id: str | None = None) -> dict[str, Any] | None:
        """The fields a call's record written now adds: the new state, so the chain holds it
        (when it changed), and the host's ``tool_use_id`` of the call (when given), which a
        session's end compares with the host's transcript (:mod:`.hook_unfinished`)."""
        fields: dict[str, Any] = {}
        if self.changed and self.now is not None:
            fields[STATE_FIELD] = dict(self.now)
        if use_id:
            fields[USE_ID_FIELD] = use_id
        return fields or None

    def unattributed(self, kept: Any, project_seen: bool) -> list[str]:
        """At post: the changed names the call's own comparison does not report (those whose
        digest ``kept`` by pre differs from now, and, when the call's workspace snapshot
        watched them as protected files, the project's settings)."""
        names = self.changed
        if isinstance(kept, Mapping) and self.now is not None:
            during = set(changed_names(kept, self.now))
            names = [n for n in names if n not in during]
            if project_seen:
                names = [n for n in names if not n.startswith(PROJECT_PREFIX)]
        return names

    def note_after_call(
        self,
        storage: Path,
        session_id: str,
        kept: Any,
        *,
        policy: Policy,
        cwd: str | None,
        event: str,
    ) -> None:
        """At post: record the changes the call's own comparison does not report; ``kept`` is
        what pre kept of the workspace (``None``: nothing, or no inspection at post)."""
        kept = kept if isinstance(kept, Mapping) else {}
        # pre keeps the state under the same key as a record (``hook_effects.HOST_SETTINGS_KEY``)
        names = self.unattributed(kept.get(STATE_FIELD), "snapshot" in kept)
        if PERMISSIONS_KEY in kept and self.known is not None:
            # the call's window judged the ``permissions`` from the state the chain holds
            seen = kept[PERMISSIONS_KEY]
            names = [n for n in names if not (is_permissions(n) and self.known.get(n) == seen)]
        # the call's record holds the new state: a change that does not count needs no note
        self.note(storage, session_id, policy=policy, cwd=cwd, event=event, names=names, quiet=True)

    def note(
        self,
        storage: Path,
        session_id: str,
        *,
        policy: Policy,
        cwd: str | None,
        event: str,
        names: list[str] | None = None,
        quiet: bool = False,
    ) -> None:
        """Record the change (``names``, default every changed one) as a note, with the state
        now; nothing when there is none. A change that does not count (``allowedTools`` the
        host wrote at its prompt, or removed) is a note of its own that judges nothing, so the
        chain holds the new state (none with ``quiet``); so is a change of the project
        settings' ``permissions`` that adds nothing unexplained."""
        names = self.changed if names is None else names
        if not names or self.now is None:
            return
        counted = self.counted(names)
        if not counted and quiet:
            return
        record_change(
            storage,
            session_id,
            policy=policy,
            cwd=cwd,
            event=event,
            names=counted,
            state=self.now,
            allowed=self.allowed_change() if ALLOWED_TOOLS in names else None,
            permissions=self.permission_change(names),
            unjudged=[name for name in names if name not in counted],
        )


def record_change(
    storage: Path,
    session_id: str,
    *,
    policy: Policy,
    cwd: str | None,
    event: str,
    names: list[str],
    state: Mapping[str, str | None],
    allowed: Change | None = None,
    permissions: Change | None = None,
    unjudged: list[str] | None = None,
) -> None:
    """Record a change of the host's settings no call's window saw: a ``note`` (status
    ``error``, alert ``protected_file_changed``, ``effects.hostSettings``) with the state now.

    With no ``names`` (only ``unjudged`` ones: ``allowed`` or ``permissions``, a change that
    does not count): a ``note`` :data:`HOST_ALLOWED_TOOLS` (status ``success``, no alert) with
    the state now."""
    listed = [shown(name) for name in names]
    details: dict[str, Any] = {"event": event, "changed": listed}
    effects: dict[str, Any] = {"hostSettings": listed} if listed else {}
    if allowed is not None:
        effects.update(allowed.effects())
    if permissions is not None:
        effects.update(permissions.effects(PERMISSIONS_EFFECTS_KEY))
    tool, alerts = HOST_ALLOWED_TOOLS, ""
    if listed:
        tool, alerts = HOST_SETTINGS_CHANGED, PROTECTED_FILE_CHANGED
        reason = f"the host's settings changed between hook events (seen at {event}): "
        if permissions is not None and permissions.unexplained:
            listed = [*listed, "permissions added: " + ", ".join(permissions.unexplained)]
        outcome = Outcome("error", None, reason + ", ".join(listed))
    else:
        details["changed"] = [shown(name) for name in unjudged or [ALLOWED_TOOLS]]
        outcome = Outcome("success", None, None)
    gate = open_session_gate(
        storage_dir=storage, session_id=session_id, policy=policy, root=cwd, door="hook"
    )
    try:
        decision = gate.unjudged(tool, "hook", details, target=None, kind="note")
        decision = replace(decision, alerts=(alerts,) if alerts else ())
        gate.run(
            tool,
            details,
            lambda _decision: outcome,
            extra={STATE_FIELD: dict(state), "effects": effects},
            decision=decision,
        )
    finally:
        gate.chain.close()


def check_between(
    storage: Path, session_id: str, *, policy: Policy, cwd: str | None, event: str
) -> HostWatch:
    """At an event that closes no call: record a change since the chain's last state."""
    watch = HostWatch.look(storage, session_id)
    watch.note(storage, session_id, policy=policy, cwd=cwd, event=event)
    return watch


def window_changes(
    before: Any, call: tuple[str, Mapping[str, Any]], *, asked: bool, where: tuple[str, str] | None
) -> tuple[list[str], Change | None]:
    """At post: the host settings (as :func:`shown`) whose change since ``before`` (what pre
    kept) counts, and the change of ``allowedTools`` (``None``: none), judged against the
    session's asked calls still open and ``call``, the call closed (``asked``: at a prompt)."""
    if not isinstance(before, Mapping):
        return [], None
    now = host_settings_state(names=[n for n in before if isinstance(n, str)])
    names = changed_names(before, now)
    allowed = None
    if ALLOWED_TOOLS in names:
        open_asks = [
            *(asked_calls(*where) if where is not None else ()),
            *([call] if asked else ()),
        ]
        home = os.path.expanduser("~")
        allowed = change_of(before[ALLOWED_TOOLS], home, asked=open_asks, call=call)
        if not allowed.unexplained:
            names.remove(ALLOWED_TOOLS)
    return sorted(shown(name) for name in names), allowed


def late_reasons(storage: str | os.PathLike[str], session_id: str) -> tuple[VerdictReason, ...]:
    """A change of the host's settings since the chain's last state, as a FAIL reason, for a
    session whose hooks stopped (no event came after it to record it)."""
    watch = HostWatch.look(storage, session_id)
    names = watch.counted(watch.changed)
    if not names:
        return ()
    listed = ", ".join(shown(name) for name in names)
    text = f"the host's settings changed after the last hook event: {listed}"
    return (VerdictReason(Verdict.FAIL, HOST_SETTINGS_CODE, text + " (nothing after it was seen)"),)


__all__ = [
    "FOLDER_ENTRY_LIMIT",
    "HOST_FOLDERS",
    "HOST_SETTINGS",
    "MANAGED_ENV",
    "MANAGED_MCP",
    "MANAGED_SETTINGS",
    "PROJECT_MCP",
    "PROJECT_PREFIX",
    "PROJECT_SETTINGS",
    "STATE_FIELD",
    "HostWatch",
    "Recorded",
    "changed_host_settings",
    "changed_names",
    "check_between",
    "host_settings_state",
    "late_reasons",
    "record_change",
    "recorded_state",
    "shown",
    "window_changes",
]
