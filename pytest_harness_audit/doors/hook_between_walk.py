"""What the workspace went through between hook events, judged by its effect.

A process a call leaves running (``nohup python3 tidy.py &``, ``setsid``, a daemon) goes on
after the call's post, when no call's window is open: a tracked directory it deletes, the
owner's uncommitted changes it throws away or committed history it destroys fell in no window,
and the session was judged PASS although the same effect inside a call FAILs it. The other
doors compare each call's snapshot with the previous call's end (``effects.between``); each
hook event being a process of its own, this door keeps that end in the store.

After a call whose window was compared (a post with a whole snapshot from pre), the snapshot
taken at that post is kept (``hook-between/<session>-<root hash>.walk.json``, its name noted
in the session's witness like every kept state, :mod:`.hook_between_kept`). The next call's
post compares it with that call's pre snapshot, when it was kept before that pre started and
no other call of the session is in flight: what differs is the call's ``effects.between``
(the owner's uncommitted work judged on it too), judged by the effect rules as the call's own
effects are. A turn's stop and the session's end take a snapshot and compare it the same way,
a difference recorded as a ``WorkspaceChangedBetween`` note. The protected and memory files are
left to :mod:`.hook_between`, which watches them at every event.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.atomic_file import read_own_file
from pytest_harness_audit.audit.storage import StorageLayout, sanitize_session_id
from pytest_harness_audit.doors.hook_between_kept import (
    STATE_DELETED,
    STATE_REWRITTEN,
    keep_noted,
    rewritten,
    was_kept,
)
from pytest_harness_audit.doors.hook_effects import HookInspector, store_inside
from pytest_harness_audit.doors.hook_host_programs import protection_at
from pytest_harness_audit.doors.hook_uncommitted import HookUncommitted
from pytest_harness_audit.gate.inspection import MANY_FILES_DELETED
from pytest_harness_audit.gate.seam import CallFindings
from pytest_harness_audit.gate.store_guard import TAMPER_ALERT
from pytest_harness_audit.inspect import (
    DIRECTORY_DELETED,
    FILES_DELETED,
    HISTORY_DESTROYED,
    STARTUP_WRITE,
    UNCOMMITTED_DISCARDED,
    WorkspaceSnapshot,
)
from pytest_harness_audit.inspect.effect_set import Effects
from pytest_harness_audit.inspect.effects import Protection, diff
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import Verdict, VerdictReason

#: The kept snapshot's file name ends so (beside the protected state's ``.json``).
WALK_SUFFIX = ".walk.json"
#: The verdict reason's code of a change found when a session with no end is reported.
LATE_CODE = "workspace-changed-after-last-event"


def walk_path(storage: str | os.PathLike[str], session_id: str, root: str) -> Path:
    """Where the workspace ``root`` as the session's last compared call left it is kept."""
    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = f"{sanitize_session_id(session_id)}-{digest}{WALK_SUFFIX}"
    return Path(storage) / "hook-between" / name


def keep_walk(
    storage: str | os.PathLike[str],
    session_id: str,
    root: str,
    snapshot: WorkspaceSnapshot | None,
    limit: int,
) -> None:
    """Keep ``snapshot`` (``None``: the workspace is not known now, nothing to compare with)
    as the workspace the session's calls left, taken no later than now."""
    whole = snapshot is not None and snapshot.complete and snapshot.root == root
    data = {
        "root": root,
        "taken": time.time(),
        "limit": limit,
        "snapshot": snapshot.to_json() if whole and snapshot is not None else None,
    }
    StorageLayout.at(storage).ensure_dirs()
    path = walk_path(storage, session_id, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = json.dumps(data, separators=(",", ":")).encode()
    keep_noted(storage, session_id, path, kept)


def _kept(
    storage: str | os.PathLike[str], session_id: str, root: str, protection: Protection
) -> tuple[WorkspaceSnapshot, float, int] | None:
    """The kept snapshot of ``root``, when it was taken and the entry limit it was taken with
    (``None``: none kept, or none usable)."""
    path = walk_path(storage, session_id, root)
    try:
        raw = read_own_file(path)
        if rewritten(storage, session_id, path.name, raw):
            return None  # not compared with: the post after the call says so (:func:`tampered`)
        data = json.loads(raw)
        snapshot = data["snapshot"]
        if snapshot is None or data["root"] != root:
            return None
        last = WorkspaceSnapshot.from_json(snapshot, protection)
        return last, float(data["taken"]), int(data["limit"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None


def tampered(storage: str | os.PathLike[str], session_id: str, root: str) -> str | None:
    """Why the kept snapshot counts as tampered with (the witness names it and the store has
    none, or its bytes are not those kept), or ``None``."""
    path = walk_path(storage, session_id, root)
    try:
        raw = read_own_file(path)
    except FileNotFoundError:
        gone = was_kept(storage, session_id, path.name)
        return f"{path}: {STATE_DELETED}" if gone else None
    except OSError:
        return None  # unreadable: nothing is compared with it, nothing hidden by it
    return f"{path}: {STATE_REWRITTEN}" if rewritten(storage, session_id, path.name, raw) else None


def between(
    last: WorkspaceSnapshot, now: WorkspaceSnapshot, uncommitted: HookUncommitted
) -> Effects | None:
    """What changed from ``last`` to ``now``, the owner's work judged on it, without the
    protected and memory files (:mod:`.hook_between` reports them); ``None``: nothing."""
    if last.root != now.root or not (last.complete and now.complete):
        return None
    made = uncommitted.judged(now.root, diff(last, now), last.history, now.history)
    made = dataclasses.replace(made, protected=(), memory=())
    return made if made else None


def resume_between(
    inspector: HookInspector, storage: Path, session_id: str, started: Any, busy: bool
) -> None:
    """At post, before the call is recorded: what changed between the kept snapshot and pre's
    becomes the call's ``between`` (nothing while another call is in flight, or when the kept
    snapshot is not older than pre's start: that call's window is not this call's)."""
    now = inspector.kept
    if busy or not isinstance(now, WorkspaceSnapshot) or not isinstance(started, (int, float)):
        return
    found = _kept(storage, session_id, now.root, inspector.protection)
    if found is None or found[1] > started:
        return
    now.between = between(found[0], now, inspector.uncommitted)


def keep_after(
    storage: Path,
    session_id: str,
    inspector: HookInspector,
    window: WorkspaceSnapshot,
    *,
    replace: bool = True,
) -> None:
    """At post, after a compared window: keep the workspace as the call left it (git's
    tracked paths as pre knew them). Not ``replace``: another call is in flight, so what
    changed before this call's window has not been compared yet; the kept snapshot stays (a
    later comparison covers that span too), and one is kept only when there is none."""
    if not replace and os.path.lexists(walk_path(storage, session_id, window.root)):
        return
    after = inspector.last_snapshot
    if after is not None and window.tracked is not None:
        tracked = frozenset(window.tracked & after.files.keys())
        after = dataclasses.replace(after, tracked=tracked, between=None)
    keep_walk(storage, session_id, window.root, after, inspector.limit)


def changed_now(
    storage: Path, session_id: str, root: str, policy: Policy
) -> tuple[Effects, CallFindings] | None:
    """At a turn's stop or the session's end: what changed since the kept snapshot, judged by
    the effect rules (``None``: nothing it judges, or nothing kept); the workspace now is
    kept."""
    protection = protection_at(root, policy)
    found = _kept(storage, session_id, root, protection)
    if found is None:
        return None
    last, _taken, limit = found
    now = WorkspaceSnapshot.take(
        root,
        protection=protection,
        tracked=False,
        skip=store_inside(root, storage),
        limit=limit,
        partial=False,
    )
    uncommitted = HookUncommitted(root, policy, storage, session_id)
    effects = between(last, now, uncommitted)
    with contextlib.suppress(OSError):
        keep_walk(storage, session_id, root, now, limit)
    findings = None if effects is None else judge(policy, effects, "WorkspaceChangedBetween")
    if effects is None or findings is None or not findings.alerts:
        return None  # files edited or made (by the user, a watcher) are no finding here
    return effects, findings


def judge(policy: Policy, effects: Effects, tool: str) -> CallFindings:
    """``effects`` (recorded as ``between``) judged by the policy's effect rules."""
    kinds = (
        (effects.deleted or effects.emptied or effects.discarded, FILES_DELETED),
        (effects.discarded_all, UNCOMMITTED_DISCARDED),
        (effects.deleted_dirs, DIRECTORY_DELETED),
        (effects.history_destroyed or effects.history_hidden, HISTORY_DESTROYED),
        (effects.startup, STARTUP_WRITE),
    )
    alerts = tuple(alert for present, alert in kinds if present)
    judged = list(alerts)
    lost = len(effects.deleted) + len(effects.emptied) + len(effects.discarded)
    if lost > MANY_FILES_DELETED or HISTORY_DESTROYED in alerts or effects.discarded_all:
        judged.append("many_files_deleted")
    record = {"between": effects.to_record()}
    judgement = policy.effect_rules.judge(judged, tool=tool, category="hook")
    if judgement is None or judgement.verdict is None:
        return CallFindings(alerts, record)
    why = f"rule {judgement.rule_id}: {judgement.reason}"
    return CallFindings(alerts, record, judgement.verdict, why, "effect")


def late_reasons(
    storage: str | os.PathLike[str], session_id: str, policy: Policy
) -> tuple[VerdictReason, ...]:
    """For a session whose hooks stopped (no event came to compare): what changed in each
    workspace since its kept snapshot, judged by the effect rules, as a verdict reason (a kept
    snapshot deleted or rewritten FAILs); nothing is written."""
    folder = Path(storage) / "hook-between"
    reasons: list[VerdictReason] = []
    for path in sorted(folder.glob(f"{sanitize_session_id(session_id)}-*{WALK_SUFFIX}")):
        try:
            root = json.loads(read_own_file(path))["root"]
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue
        if not isinstance(root, str) or walk_path(storage, session_id, root) != path:
            continue
        why = tampered(storage, session_id, root)
        if why is not None:
            text = f"the workspace's kept snapshot was deleted or rewritten: {why}"
            reasons.append(VerdictReason(Verdict.FAIL, LATE_CODE, text))
            continue
        protection = protection_at(root, policy)
        found = _kept(storage, session_id, root, protection)
        if found is None:
            continue
        last, _taken, limit = found
        skip = store_inside(root, storage)
        now = WorkspaceSnapshot.take(
            root, protection=protection, tracked=False, skip=skip, limit=limit, partial=False
        )
        if not now.complete or now.root != last.root:
            continue
        effects = dataclasses.replace(diff(last, now), protected=(), memory=())
        findings = judge(policy, effects, "WorkspaceChangedBetween")
        if findings.verdict is None:
            continue
        listed = ", ".join(sorted({*effects.deleted_dirs, *effects.deleted})[:10])
        text = f"the workspace changed after the last hook event: {listed} ({findings.reason})"
        reasons.append(VerdictReason(Verdict.parse(findings.verdict), LATE_CODE, text))
    return tuple(reasons)


def tamper(why: str) -> CallFindings:
    """The findings of a kept snapshot deleted or rewritten behind the door's back."""
    reason = f"the workspace's kept snapshot was deleted or rewritten ({why})"
    return CallFindings((TAMPER_ALERT,), {"unknown": reason}, "FAIL", reason, "effect")


__all__ = [
    "LATE_CODE",
    "WALK_SUFFIX",
    "between",
    "changed_now",
    "judge",
    "keep_after",
    "keep_walk",
    "late_reasons",
    "resume_between",
    "tamper",
    "tampered",
    "walk_path",
]
