"""The host's own settings, watched by the hook door across a call and between its events.

``~/.claude/settings.json`` (``disableAllHooks``, ``hooks``), ``~/.claude.json`` (``mcpServers``),
the host's managed settings, the project's ``.claude/settings*.json`` and the agents and commands
folders under ``~/.claude`` decide whether the hooks run at all, which tools exist and what the
agent is told. The gate refuses a write to them it can read, but a program can build their names
at run time (``os.path.expanduser('~') + '/.cla' + 'ude/settings.json'``), and a process a call
left running can change them after the call's post. So the door keeps a digest of the parts of
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
(counters, tips, history) on its own during a session.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.doors.chain_faults import open_gate as open_session_gate
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
#: The folders under the home folder whose listing and contents count (the host's own agents
#: and slash commands: what the agent is told).
HOST_FOLDERS = (".claude/agents/", ".claude/commands/")
#: The host's managed settings (Linux, macOS): every key counts.
MANAGED_SETTINGS = (
    "/etc/claude-code/managed-settings.json",
    "/Library/Application Support/ClaudeCode/managed-settings.json",
)
#: Other managed settings files (``os.pathsep``-separated) instead of :data:`MANAGED_SETTINGS`.
MANAGED_ENV = "HARNESS_AUDIT_MANAGED_SETTINGS"
#: The project's own settings files, watched between events (a call's window sees them as
#: protected files of the workspace).
PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
#: What counts in them: not ``permissions``, which the host itself writes when the user allows a
#: tool for good at its prompt (the hooks still judge every call).
_PROJECT_SETTINGS_KEYS = tuple(key for key in _SETTINGS_KEYS if key != "permissions")
#: The record field holding a state (a ``session`` record holds it in its ``session`` field).
STATE_FIELD = "hostSettings"
#: The per-project keys of ``~/.claude.json`` that count.
_PROJECT_KEYS = ("mcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers", "allowedTools")
_MANAGED = "managed:"
#: The prefix of a project settings file's name in a state.
PROJECT_PREFIX = "project:"
_MAX_BYTES = 16 << 20
#: Entries a folder digest walks; past that, what it saw and the count so far.
FOLDER_ENTRY_LIMIT = 2000
_FOLDER_BYTES = 8 << 20
_SESSION_EVENTS = ("SessionStart", "SessionEnd")


def host_settings_state(
    home: str | None = None,
    *,
    project: str | None = None,
    names: Iterable[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str | None]:
    """``name → digest`` of what counts in each of the host's settings (``None``: absent).

    ``names``: those of an earlier state (so a state taken later compares the same files);
    else the home folder's files and folders, the managed settings and, with ``project``, the
    project's settings files."""
    base = home if home is not None else os.path.expanduser("~")
    if names is None:
        env = os.environ if environ is None else environ
        managed = [p for p in (env.get(MANAGED_ENV) or "").split(os.pathsep) if p]
        chosen = [
            *HOST_SETTINGS,
            *HOST_FOLDERS,
            *(_MANAGED + p for p in managed or MANAGED_SETTINGS),
        ]
        if project:
            chosen += [PROJECT_PREFIX + os.path.join(project, name) for name in PROJECT_SETTINGS]
        names = chosen
    return {name: _state_of(name, base) for name in names}


def shown(name: str) -> str:
    """A state's name as a reason shows it: ``~/.claude/settings.json``, an absolute path."""
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
    if name.startswith(_MANAGED):
        return _digest(name[len(_MANAGED) :], None)
    if name.startswith(PROJECT_PREFIX):
        return _digest(name[len(PROJECT_PREFIX) :], _PROJECT_SETTINGS_KEYS)
    if name.endswith("/"):
        return _folder_digest(os.path.join(home, name))
    keys = HOST_SETTINGS.get(name)
    return None if keys is None else _digest(os.path.join(home, name), keys)


def _read(path: str) -> bytes | str | None:
    """The file's first bytes; ``None`` when absent, a text saying why it cannot be read."""
    try:
        # never blocks on a FIFO put in a settings file's place
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            return f"not a file: {stat.filemode(mode)}"
        try:
            return handle.read(_MAX_BYTES + 1)
        except OSError as exc:
            return f"unreadable: {exc.strerror}"


def _digest(path: str, keys: tuple[str, ...] | None) -> str | None:
    data = _read(path)
    if not isinstance(data, bytes):
        return data
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return "invalid: " + hashlib.sha256(data).hexdigest()  # the host may read it otherwise
    if not isinstance(document, dict):
        return "not an object: " + hashlib.sha256(data).hexdigest()
    counted = document if keys is None else {key: document.get(key) for key in keys}
    projects = counted.get("projects") if keys is not None else None
    if isinstance(projects, dict):
        # the host adds an entry for every project it opens: only the tools one names count
        named = {
            name: {key: entry[key] for key in _PROJECT_KEYS if entry.get(key)}
            for name, entry in projects.items()
            if isinstance(entry, dict)
        }
        counted["projects"] = {name: keys for name, keys in named.items() if keys}
    if keys is not None and not any(counted.values()):
        return None  # nothing that counts: as if there were no file
    text = json.dumps(counted, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _folder_digest(path: str) -> str | None:
    """One digest of a folder's listing and contents (links by their target, never followed
    below the folder itself), bounded: :data:`FOLDER_ENTRY_LIMIT` entries, and past
    ``_FOLDER_BYTES`` read in all, a file by its size and change time."""
    try:
        if not stat.S_ISDIR(os.stat(path).st_mode):
            return _digest(path, None)  # a file in the folder's place
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    digest, count, budget = hashlib.sha256(), 0, _FOLDER_BYTES
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            with os.scandir(os.path.join(path, relative)) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            digest.update(f"\0{relative}: unreadable: {exc.strerror}".encode())
            continue
        for entry in entries:
            count += 1
            if count > FOLDER_ENTRY_LIMIT:
                return f"over {FOLDER_ENTRY_LIMIT} entries: {digest.hexdigest()}"
            name = f"{relative}/{entry.name}".encode("utf-8", "surrogateescape")
            digest.update(b"\0" + name + b"\0")
            try:
                if entry.is_symlink():
                    digest.update(b"l" + os.fsencode(os.readlink(entry.path)))
                elif entry.is_dir(follow_symlinks=False):
                    digest.update(b"d")
                    pending.append(f"{relative}/{entry.name}")
                elif entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    digest.update(b"f%d" % info.st_size)
                    if budget > 0:
                        data = _read(entry.path)
                        content = data if isinstance(data, bytes) else str(data).encode()
                        budget -= len(content)
                        digest.update(hashlib.sha256(content).digest())
                    else:
                        digest.update(b"%d" % info.st_mtime_ns)
                else:
                    digest.update(b"o")
            except OSError as exc:
                digest.update(f"unreadable: {exc.strerror}".encode())
    return digest.hexdigest()


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
        return cls.of(_marked_records(path, marks))


def _marked_records(path: Path, marks: tuple[bytes, ...]) -> Iterable[Mapping[str, Any]]:
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return
    with handle:
        for line in handle:
            if not line.endswith(b"\n") or not any(mark in line for mark in marks):
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict):
                yield record


# -- between events ------------------------------------------------------------------------


@dataclass(frozen=True)
class HostWatch:
    """The host's settings at a hook event against the last state the session's chain holds."""

    #: The chain's last state (``None``: nothing known, nothing compared).
    known: dict[str, str | None] | None
    #: The same settings now.
    now: dict[str, str | None] | None

    @classmethod
    def look(cls, storage: str | os.PathLike[str], session_id: str) -> HostWatch:
        """Compare now with what the chain holds."""
        known = Recorded.read(storage, session_id).state
        return cls(known, None if known is None else host_settings_state(names=list(known)))

    @property
    def changed(self) -> list[str]:
        """The names whose digest changed since the chain's last state."""
        if self.known is None or self.now is None:
            return []
        return changed_names(self.known, self.now)

    def record_fields(self) -> dict[str, Any] | None:
        """The field a record written now adds so the chain holds the new state (``None``:
        nothing changed)."""
        return {STATE_FIELD: dict(self.now)} if self.changed and self.now is not None else None

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
        self.note(storage, session_id, policy=policy, cwd=cwd, event=event, names=names)

    def note(
        self,
        storage: Path,
        session_id: str,
        *,
        policy: Policy,
        cwd: str | None,
        event: str,
        names: list[str] | None = None,
    ) -> None:
        """Record the change (``names``, default every changed one) as a note, with the state
        now; nothing when there is none."""
        names = self.changed if names is None else names
        if not names or self.now is None:
            return
        record_change(
            storage, session_id, policy=policy, cwd=cwd, event=event, names=names, state=self.now
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
) -> None:
    """Record a change of the host's settings no call's window saw: a ``note`` (status
    ``error``, alert ``protected_file_changed``, ``effects.hostSettings``) with the state now."""
    listed = [shown(name) for name in names]
    details = {"event": event, "changed": listed}
    reason = f"the host's settings changed between hook events (seen at {event}): "
    reason += ", ".join(listed)
    gate = open_session_gate(
        storage_dir=storage, session_id=session_id, policy=policy, root=cwd, door="hook"
    )
    try:
        decision = gate.unjudged(HOST_SETTINGS_CHANGED, "hook", details, target=None, kind="note")
        decision = replace(decision, alerts=(PROTECTED_FILE_CHANGED,))
        extra = {STATE_FIELD: dict(state), "effects": {"hostSettings": listed}}
        gate.run(
            HOST_SETTINGS_CHANGED,
            details,
            lambda _decision: Outcome("error", None, reason),
            extra=extra,
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


def late_reasons(storage: str | os.PathLike[str], session_id: str) -> tuple[VerdictReason, ...]:
    """A change of the host's settings since the chain's last state, as a FAIL reason, for a
    session whose hooks stopped (no event came after it to record it)."""
    names = HostWatch.look(storage, session_id).changed
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
    "MANAGED_SETTINGS",
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
]
