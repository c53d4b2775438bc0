"""The workspace's protected files changed between hook events.

The host, not this door, runs a call; a process the call leaves running (``nohup … &``,
``setsid``, a daemon) goes on after the call's post, when no call's window is open, and can
rewrite a persona file, plant a git hook or a ``core.fsmonitor``, or write a ``protect:`` file.
No call's before-and-after comparison sees that, and the session would be judged PASS.

So the hook door keeps, after each call whose window it compared (a post with a workspace
snapshot), the state of the workspace's protected files (mode and what a snapshot keeps of
their content, :func:`~.hook_effects.protected_state`) in the store, out of the agent's reach,
one file a session and workspace root (``hook-between/<session>-<root hash>.json``). At the
next event that opens no window (a pre, the post of a call whose window was not compared, a
turn's stop, the session's end) the same files are compared with it, with every protected file
the last whole snapshot saw, and any protected file now at the workspace's top, in ``.git``,
its hooks, the folder ``core.hooksPath`` names, or a submodule's git directory (of a linked
worktree, in the git directories its ``.git`` file leads to); a post also
compares the kept state with its pre's snapshot (what changed between pre's comparison and its
snapshot). A difference is recorded as a ``note`` :data:`WORKSPACE_CHANGED_BETWEEN` (alert
``protected_file_changed``, ``effects.protected``), judged by the policy's effect rules
(``safety``: FAIL), and the state is kept anew. While another call of the session is in flight,
a pre does not compare and a post takes up only what changed in its own window (that call's
record says so), leaving a change made meanwhile for a later comparison; a stop and the
session's end compare whatever is pending. The host's own settings are left to
:mod:`.hook_host_settings`, which watches them between events already.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.storage import StorageLayout, sanitize_session_id
from pytest_harness_audit.doors.chain_faults import open_gate as open_session_gate
from pytest_harness_audit.doors.hook_between_git import git_files
from pytest_harness_audit.doors.hook_between_kept import (
    STATE_DELETED,
    STATE_REWRITTEN,
    keep_noted,
    rewritten,
    was_kept,
)
from pytest_harness_audit.doors.hook_between_memory import memory_candidates, memory_paths
from pytest_harness_audit.doors.hook_between_walk import (
    changed_now,
    keep_after,
    resume_between,
    tamper,
    tampered,
)
from pytest_harness_audit.doors.hook_effects import (
    EFFECTS_UNAVAILABLE,
    PENDING_KEY,
    HookInspection,
    HookInspector,
    Unseen,
    protected_candidates,
    protected_state,
    workspace_root,
)
from pytest_harness_audit.doors.hook_host_programs import protection_at
from pytest_harness_audit.doors.hook_host_project import PROJECT_SETTINGS
from pytest_harness_audit.doors.hook_host_settings import PROJECT_MCP, HostWatch, check_between
from pytest_harness_audit.doors.hook_in_flight import IN_FLIGHT_SECONDS, in_flight
from pytest_harness_audit.gate.seam import CallFindings, Outcome
from pytest_harness_audit.gate.store_guard import TAMPER_ALERT
from pytest_harness_audit.inspect import MEMORY_WRITE, PROTECTED_FILE_CHANGED, WorkspaceSnapshot
from pytest_harness_audit.inspect.effects import Protection
from pytest_harness_audit.policy import Policy

#: The note's tool.
WORKSPACE_CHANGED_BETWEEN = "WorkspaceChangedBetween"
_HOST_FILES = frozenset((*PROJECT_SETTINGS, PROJECT_MCP))


def state_path(storage: str | os.PathLike[str], session_id: str, root: str) -> Path:
    """Where the session's last protected state of the workspace ``root`` is kept in the store
    (one a root: a call from another folder, the project unnamed, leaves this one's as it is)."""
    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Path(storage) / "hook-between" / f"{sanitize_session_id(session_id)}-{digest}.json"


def watched_paths(root: str, protection: Protection, known: Iterable[str] = ()) -> set[str]:
    """The files compared between events: ``known`` ones, the protected files at the
    workspace's top (and ``protect`` globs naming one path), git's configurations and hooks,
    and the memory files (:func:`~.hook_between_memory.memory_candidates`)."""
    paths = set(known) | protected_candidates(root, protection) | git_files(root)
    paths |= memory_candidates(root)
    return {path for path in paths if path not in _HOST_FILES}


def keep(
    storage: str | os.PathLike[str],
    session_id: str,
    root: str,
    protection: Protection,
    known: Iterable[str] = (),
    *,
    complete: bool = False,
    files: Mapping[str, Any] | None = None,
) -> None:
    """Keep the state of the workspace's protected files now (after a compared window), or
    ``files`` as given. ``complete``: ``known`` is every protected file of the workspace (a
    whole snapshot's), so one not in the state was made after it."""
    if files is None:
        paths = watched_paths(root, protection, known)
        files = protected_state(root, paths, protection)
    data = {"root": root, "files": dict(files), "complete": complete}
    StorageLayout.at(storage).ensure_dirs()  # a store made here is one like any (``.gitignore``)
    path = state_path(storage, session_id, root)
    kept = json.dumps(data, sort_keys=True).encode()
    keep_noted(storage, session_id, path, kept)


class UnreadableState(ValueError):
    """The kept state is there and cannot be read: nothing can be compared."""


class DeletedState(UnreadableState):
    """The kept state is gone although the session's witness says it was kept, or its bytes
    are not those kept: a tamper."""


def _kept_state(
    storage: str | os.PathLike[str], session_id: str, root: str
) -> tuple[dict[str, Any], bool] | None:
    """The kept state of ``root`` and whether it is complete (``None``: none kept)."""
    path = state_path(storage, session_id, root)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if was_kept(storage, session_id, path.name):
            raise DeletedState(f"{path}: {STATE_DELETED}") from None
        return None
    except OSError as exc:
        raise UnreadableState(f"{path}: {type(exc).__name__}") from None
    if rewritten(storage, session_id, path.name, raw):
        raise DeletedState(f"{path}: {STATE_REWRITTEN}")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise UnreadableState(f"{path}: {type(exc).__name__}") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("files"), Mapping):
        raise UnreadableState(f"{path}: not a kept state")
    if data.get("root") != root:
        raise UnreadableState(f"{path}: the state of another workspace")
    return dict(data["files"]), data.get("complete") is True


def changed_between(
    storage: str | os.PathLike[str],
    session_id: str,
    root: str,
    protection: Protection,
) -> tuple[list[str], set[str]] | None:
    """The protected files changed since the kept state, and the paths now watched; ``None``
    when no state is kept (nothing to compare)."""
    found = _kept_state(storage, session_id, root)
    if found is None:
        return None
    before = found[0]
    paths = watched_paths(root, protection, before)
    now = protected_state(root, paths, protection)
    return sorted(path for path in paths if before.get(path) != now.get(path)), paths


def check(
    storage: str | os.PathLike[str],
    session_id: str,
    *,
    root: str | None,
    policy: Policy,
    event: str,
    own: Path | None = None,
    calls_done: bool = False,
) -> list[str]:
    """At an event that opens no window: record the protected files changed since the kept
    state (a note, judged by the policy's effect rules) and keep the state now; the paths
    changed. Nothing while another call of the session is in flight (its window may be what
    changed them: its own post says so), unless ``calls_done`` (the turn or the session is over:
    a pending file left now is a call whose post never came)."""
    if root is None or (not calls_done and in_flight(storage, session_id, own)):
        return []
    protection = protection_at(root, policy)
    try:
        found = changed_between(storage, session_id, root, protection)
    except UnreadableState as exc:
        _record(storage, session_id, root=root, policy=policy, event=event, unreadable=exc)
        keep(storage, session_id, root, protection)
        return []
    if found is None:
        keep(storage, session_id, root, protection)
        return []
    changed, paths = found
    if changed:
        _record(storage, session_id, root=root, policy=policy, event=event, changed=changed)
        keep(storage, session_id, root, protection, paths)
    if calls_done:  # what a process left running did to the rest of the workspace
        _walk_now(storage, session_id, root, policy, event)
    return changed


def _walk_now(
    storage: str | os.PathLike[str], session_id: str, root: str, policy: Policy, event: str
) -> None:
    """Record what changed since the kept snapshot (:mod:`.hook_between_walk`), or its loss."""
    gone = tampered(storage, session_id, root)
    if gone is not None:
        reason = f"the workspace's kept snapshot was deleted or rewritten (seen at {event}): {gone}"
        _record(storage, session_id, root=root, policy=policy, event=event,
                found=tamper(gone), reason=reason)  # fmt: skip
    try:
        found = changed_now(Path(storage), session_id, root, policy)
    except OSError:  # the workspace cannot be walked now: the next call's window compares
        found = None
    if found is not None:
        effects, findings = found
        reason = f"the workspace changed between hook events (seen at {event}): "
        reason += ", ".join(sorted({*effects.deleted_dirs, *effects.deleted, *effects.discarded}))
        _record(storage, session_id, root=root, policy=policy, event=event,
                found=findings, reason=reason)  # fmt: skip


def _findings(
    policy: Policy, changed: Sequence[str], unreadable: UnreadableState | None
) -> CallFindings:
    """The note's findings: the changed files judged by the effect rules; an unreadable state
    a WARN when the policy judges effects (nothing could be compared), a deleted one a FAIL."""
    if isinstance(unreadable, DeletedState):
        why = f"the protected files' kept state was deleted or rewritten ({unreadable})"
        return CallFindings((TAMPER_ALERT,), {"unknown": why}, "FAIL", why, "effect")
    if unreadable is not None:
        why = f"effects unknown: the protected files' kept state is unreadable ({unreadable})"
        note = {"unknown": why}
        if policy.effect_rules:
            return CallFindings((EFFECTS_UNAVAILABLE,), note, "WARN", why, "effect")
        return CallFindings((EFFECTS_UNAVAILABLE,), note)
    protection = protection_at(None, policy)  # built once, not once a path
    memory = memory_paths(path for path in changed if not protection(path))
    protected = [path for path in changed if path not in memory]
    alerts = ((PROTECTED_FILE_CHANGED,) if protected else ()) + ((MEMORY_WRITE,) if memory else ())
    effects = {"protected": protected} if protected else {}
    found = CallFindings(alerts, {**effects, "memory": memory} if memory else effects)
    judgement = policy.effect_rules.judge(alerts, tool=WORKSPACE_CHANGED_BETWEEN, category="hook")
    if judgement is not None and judgement.verdict is not None:
        why = f"rule {judgement.rule_id}: {judgement.reason}"
        found = CallFindings(found.alerts, found.effects, judgement.verdict, why, "effect")
    return found


def _record(
    storage: str | os.PathLike[str],
    session_id: str,
    *,
    root: str,
    policy: Policy,
    event: str,
    changed: Sequence[str] = (),
    unreadable: UnreadableState | None = None,
    found: CallFindings | None = None,
    reason: str = "",
) -> None:
    if found is None:
        found = _findings(policy, changed, unreadable)
    if not reason and unreadable is not None:
        reason = f"the protected files' kept state is unreadable (seen at {event}): {unreadable}"
    elif not reason:
        kind = "protected" if "protected" in (found.effects or {}) else "memory"
        reason = f"{kind} files changed between hook events (seen at {event}): "
        reason += ", ".join(changed)
    gate = open_session_gate(
        storage_dir=Path(storage), session_id=session_id, policy=policy, root=root, door="hook"
    )
    try:
        gate.inspectors[:] = [_Found(found)]
        details = {"event": event, "changed": list(changed)}
        decision = gate.unjudged(
            WORKSPACE_CHANGED_BETWEEN, "hook", details, target=None, kind="note"
        )
        gate.run(
            WORKSPACE_CHANGED_BETWEEN,
            details,
            lambda _decision: Outcome("error", None, reason),
            decision=decision,
        )
    finally:
        gate.chain.close()


def resume(
    inspector: HookInspector,
    state: Mapping[str, Any] | None,
    problem: str,
    where: tuple[Path, str, Path],
) -> None:
    """At post: take up what pre kept (:meth:`~.hook_effects.HookInspector.load`), and what
    changed since the session's last compared call as the call's ``between``
    (:func:`~.hook_between_walk.resume_between`); ``where``: the store, the session and the
    call's pending file."""
    storage, session_id, own = where
    inspector.load(state, problem)
    started = (state or {}).get("started")
    busy = in_flight(storage, session_id, own)
    resume_between(inspector, storage, session_id, started, busy)


def between_events(
    storage: Path,
    session_id: str,
    *,
    policy: Policy,
    cwd: str | None,
    event: str,
    calls_done: bool = False,
) -> HostWatch:
    """At an event that opens no window: the host's settings
    (:func:`~.hook_host_settings.check_between`) and the workspace's protected files
    (:func:`check`, ``calls_done`` at a turn's or the session's end) against their last state;
    the host's watch."""
    host = check_between(storage, session_id, policy=policy, cwd=cwd, event=event)
    root = workspace_root(cwd)
    check(storage, session_id, root=root, policy=policy, event=event, calls_done=calls_done)
    return host


def after_call(
    host: HostWatch,
    storage: Path,
    session_id: str,
    state: Mapping[str, Any] | None,
    inspection: HookInspection | None,
    *,
    policy: Policy,
    cwd: str | None,
    event: str,
    own: Path,
) -> None:
    """At post, after the call's record: the host's settings changed outside the call's
    window (:meth:`~.hook_host_settings.HostWatch.note_after_call`, with what pre kept in the
    pending file, ``state``); the workspace's protected files kept when the call's window was
    compared (pre kept a snapshot, or checked the protected files of a workspace over its
    entry limit), else compared as at any event (no window: a call that changes no files, or
    one whose window pre could not keep, a background command's among them)."""
    kept = (state or {}).get(PENDING_KEY) if inspection is not None else None
    host.note_after_call(storage, session_id, kept, policy=policy, cwd=cwd, event=event)
    root = workspace_root(cwd)
    if root is None:
        return
    window = inspection.inspector.kept if inspection is not None else None
    protection = protection_at(root, policy)
    if isinstance(window, WorkspaceSnapshot) and window.root == root and inspection is not None:
        gone = tampered(storage, session_id, root)
        if gone is not None:
            reason = (
                f"the workspace's kept snapshot was deleted or rewritten (seen at {event}): {gone}"
            )
            _record(storage, session_id, root=root, policy=policy, event=event,
                    found=tamper(gone), reason=reason)  # fmt: skip
        busy = in_flight(storage, session_id, own)  # then the kept one stays, if any
        keep_after(storage, session_id, inspection.inspector, window, replace=not busy)
        after = inspection.inspector.last_snapshot
        if after is None or after.root != root:
            after = window
        if busy:
            # another call's window is open: take up only what changed in this one's
            _keep_window(storage, session_id, root, protection, window, after)
            return
        # what changed after the check at pre, before pre's snapshot, is in no window either
        _check_before_window(storage, session_id, root, policy, event, window)
        keep(
            storage,
            session_id,
            root,
            protection,
            {*after.protected_digests, *memory_paths(after.files)},
            complete=after.complete,
        )
    elif isinstance(window, Unseen) and window.over_limit:
        keep(storage, session_id, root, protection, window.protected or ())
    else:  # no window (a call that changes no files), or none pre could keep
        check(storage, session_id, root=root, policy=policy, event=event, own=own)


def _keep_window(
    storage: Path,
    session_id: str,
    root: str,
    protection: Protection,
    window: WorkspaceSnapshot,
    after: WorkspaceSnapshot,
) -> None:
    """Take up in the kept state what changed in a call's window (its record says so), and
    nothing else: a change before the window, made while another call was in flight, is left
    for the next check to find."""
    try:
        found = _kept_state(storage, session_id, root)
    except UnreadableState:
        found = None
    if found is None:
        keep(storage, session_id, root, protection, after.protected_digests)
        return
    before, _complete = found
    seen, now = snapshot_state(window), snapshot_state(after)
    paths = watched_paths(root, protection, set(before) | set(now))
    unnamed = protected_state(root, {p for p in paths if not protection(p)}, protection)
    merged = dict(before)
    for path in paths:
        if not protection(path):
            merged[path] = unnamed.get(path)  # no snapshot knows it: taken as it is
        elif seen.get(path) != now.get(path):
            merged[path] = now.get(path)  # changed in the window: the call's record has it
    keep(storage, session_id, root, protection, files=merged)


def snapshot_state(snapshot: WorkspaceSnapshot) -> dict[str, Any]:
    """The protected files of ``snapshot`` as :func:`~.hook_effects.protected_state` gives
    them (``path → [mode, content digest]``)."""
    state: dict[str, Any] = {}
    for path in snapshot.protected_inodes.values():
        info = snapshot.files.get(path)
        if info is not None and path not in _HOST_FILES:
            digest = snapshot.protected_digests.get(path)
            state[path] = [info[3], None if digest is None else digest.hex()]
    return state


def _check_before_window(
    storage: Path,
    session_id: str,
    root: str,
    policy: Policy,
    event: str,
    window: WorkspaceSnapshot,
) -> None:
    """Record the protected files that differ between the kept state and pre's snapshot."""
    try:
        found = _kept_state(storage, session_id, root)
    except UnreadableState:
        return  # said at the check of this call's pre
    if found is None:
        return
    before, complete = found
    seen = snapshot_state(window)
    protection = protection_at(root, policy)
    # a snapshot knows the files protected by name; a kept state every such file it watched,
    # and every one at the top and in ``.git`` (one there now and not kept was made since);
    # one kept from a whole snapshot, every one the workspace had; none outside the workspace
    paths = {path for path in before if protection(path) and not os.path.isabs(path)}
    paths.update(path for path in seen if complete or "/" not in path or path.startswith(".git/"))
    changed = sorted(path for path in paths - _HOST_FILES if before.get(path) != seen.get(path))
    if changed:
        _record(storage, session_id, root=root, policy=policy, event=event, changed=changed)


class _Found:
    """An inspector that hands the seam findings made before the record (the note's)."""

    def __init__(self, findings: CallFindings) -> None:
        self.findings = findings

    def before(self, tool: str, category: str, params: Mapping[str, Any]) -> object:
        """Nothing to look at before."""
        return True

    def after(
        self, token: object, tool: str, category: str, params: Mapping[str, Any], outcome: Outcome
    ) -> CallFindings:
        """The findings made before."""
        return self.findings


__all__ = [
    "IN_FLIGHT_SECONDS",
    "WORKSPACE_CHANGED_BETWEEN",
    "after_call",
    "between_events",
    "changed_between",
    "check",
    "in_flight",
    "keep",
    "resume",
    "state_path",
    "watched_paths",
]
