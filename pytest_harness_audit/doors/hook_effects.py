"""Workspace effects for the host hook door, whose before and after run in two processes.

The host, not this process, runs a tool: ``hook pre`` takes the workspace snapshot just before
the host runs a call that can change files (the categories every door snapshots,
:data:`~pytest_harness_audit.inspect.WATCHED_CATEGORIES`), and keeps it in the call's pending
file; ``hook post`` (or ``PostToolUseFailure``) loads it, walks the workspace again, and the
seam judges the difference as it does for every door (``effects``, ``match.effects``).

The workspace is the project: ``$CLAUDE_PROJECT_DIR`` (the host sets it for hook commands),
wherever the payload's ``cwd`` is, so a ``cd`` into a subdirectory does not shrink what is
watched, and a ``cd`` into a directory outside the project (one the host was given with
``--add-dir``) does not move the watch off the project's persona and settings files; without
it, an absolute ``cwd`` (a relative one would be the hook process's own folder). The audit
store is left out of every snapshot inside the project. A snapshot is the library's own
(:meth:`~pytest_harness_audit.inspect.WorkspaceSnapshot.take`: of a ``.git`` directory only its
key entries), bounded: the walk stops after :data:`DEFAULT_ENTRY_LIMIT` entries
(``hook pre --snapshot-limit N``). What cannot be seen
is judged conservatively and recorded: a workspace over the limit, or a snapshot missing or
unreadable at post, gives the call an ``effects`` note, an alert and, when the policy judges
effects at all, a ``WARN``; the call is recorded either way. Over the limit, the protected files
are still checked one by one (those pre knew, those at the project's top level, and ``protect``
globs naming one path), so a persona rewrite still fails the verdict. The project's secrets are
learned within bounds too, and a call judged without some of them says so
(:mod:`.hook_learning`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_harness_audit.doors.hook_asks import ASKED_KEY
from pytest_harness_audit.doors.hook_host_permissions import (
    HOST_PERMISSION_ADDED,
    PERMISSIONS_EFFECTS_KEY,
    Change,
    asked_calls,
    entries_state,
    judge_added,
    permission_entries,
)
from pytest_harness_audit.doors.hook_host_programs import protection_at
from pytest_harness_audit.doors.hook_host_project import PERMISSIONS_KEY, settings_paths
from pytest_harness_audit.doors.hook_host_settings import (
    PROJECT_SETTINGS,
    host_settings_state,
    window_changes,
)
from pytest_harness_audit.doors.hook_learning import learn_project, unlearned
from pytest_harness_audit.doors.hook_spans import hand_on, resume_spans
from pytest_harness_audit.doors.hook_uncommitted import HookUncommitted
from pytest_harness_audit.gate.inspection import SessionInspection
from pytest_harness_audit.gate.install_guard import InstallGuard
from pytest_harness_audit.gate.install_watch import InstallWatch, Stamp, kept_stamp
from pytest_harness_audit.gate.module_git_watch import ModuleGitWatch
from pytest_harness_audit.gate.module_git_watch import Stamp as ModulesStamp
from pytest_harness_audit.gate.seam import CallFindings, Outcome
from pytest_harness_audit.inspect import (
    EFFECTS_INCOMPLETE,
    EFFECTS_UNAVAILABLE,
    PROTECTED_FILE_CHANGED,
    Inspector,
    SessionSpans,
    WorkspaceSnapshot,
)
from pytest_harness_audit.inspect.credential_changes import CredentialFiles
from pytest_harness_audit.inspect.dropped import dropped_files, staged_removals
from pytest_harness_audit.inspect.effects import Protection, protected_digest
from pytest_harness_audit.policy import Policy

#: Entries (files, symlinks, directories) a hook snapshot walks before it gives up.
DEFAULT_ENTRY_LIMIT = 50_000
#: The pending file's key for what pre saw of the workspace.
PENDING_KEY = "workspace"
#: The key, in what pre saw, of the host's settings (:mod:`.hook_host_settings`).
HOST_SETTINGS_KEY = "hostSettings"
#: The key, in what pre saw, of the auditor's installation (:mod:`~.gate.install_watch`).
INSTALL_KEY = "installation"
#: The pending file's key of the submodules' git configurations and hooks as pre saw them.
MODULES_KEY = "moduleGit"
#: The pending file's key of the owner's credential files as pre saw them.
CREDENTIALS_KEY = "credentialFiles"


@dataclass(frozen=True)
class Unseen:
    """A call whose effects cannot be known, and why (the token post gets instead of a
    snapshot)."""

    reason: str
    #: The workspace had more entries than the limit (else: the snapshot was missing or bad).
    over_limit: bool = False
    limit: int | None = None
    #: Over the limit: the protected files pre could still see (:func:`protected_state`), and
    #: the workspace they are in.
    protected: Mapping[str, Any] | None = None
    root: str | None = None


def workspace_root(cwd: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The project a hook payload's ``cwd`` belongs to (module doc); none for a relative cwd."""
    if not cwd:
        return None
    env = os.environ if environ is None else environ
    project = env.get("CLAUDE_PROJECT_DIR") or ""
    if project and os.path.isabs(project) and os.path.isdir(project):
        # the host's Bash keeps its ``cd`` across calls, into any directory it may work in:
        # a cwd outside the project is such a directory, the project is still the one at stake
        return project
    return cwd if os.path.isabs(cwd) else None


def store_inside(root: str, storage: str | os.PathLike[str]) -> str | None:
    """The audit store's path relative to ``root`` (posix), or ``None`` when it is outside."""
    real_root, real_store = os.path.realpath(root), os.path.realpath(storage)
    if real_store == real_root or os.path.commonpath([real_root, real_store]) != real_root:
        return None
    return os.path.relpath(real_store, real_root).replace(os.sep, "/")


def protected_candidates(root: str, protection: Protection) -> set[str]:
    """The protected files a workspace over the limit is still checked for: those at its top
    level, every ``protect`` glob naming one path and the programs the host's settings name."""
    found: set[str] = set(protection.programs)
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                if protection(entry.name):
                    found.add(entry.name)
    except OSError:
        pass
    found.update(glob for glob in protection.globs if not any(c in glob for c in "*?[{"))
    return found


def protected_state(
    root: str, paths: set[str], protection: Protection | None = None
) -> dict[str, Any]:
    """``path → [mode, content digest]`` (``None`` when absent) of a few protected files."""
    apart = protection is not None and protection.apart
    state: dict[str, Any] = {}
    for path in sorted(paths):
        full = os.path.join(root, path)
        try:
            info = os.lstat(full)
        except OSError:
            state[path] = None
            continue
        # what a snapshot keeps of it (of a git configuration, its command keys)
        digest = protected_digest(root, path, apart) if stat.S_ISREG(info.st_mode) else None
        state[path] = [info.st_mode, None if digest is None else digest.hex()]
    return state


class HookInspector(Inspector):
    """An :class:`~pytest_harness_audit.inspect.Inspector` whose snapshots are bounded and leave
    the audit store out; at post, :meth:`kept_for` hands back what pre kept in the pending
    file."""

    def __init__(
        self,
        root: str,
        policy: Policy,
        *,
        storage: str | os.PathLike[str],
        limit: int = DEFAULT_ENTRY_LIMIT,
        learn: bool = True,
        session_id: str | None = None,
    ) -> None:
        super().__init__(root, learn=False, protect=policy.protect, tracked=False, live=False)
        # the project settings' ``permissions`` are judged by what a change adds (the host
        # writes an ``allow`` rule there when the user allows a tool for good at its prompt)
        self.protection = protection_at(root, policy)
        self.uncommitted: HookUncommitted = HookUncommitted(root, policy, storage, session_id)
        self.limit = limit
        self.skip = store_inside(root, storage)
        #: The session's store and id (its asked calls still open, :mod:`.hook_host_permissions`).
        self.where = None if session_id is None else (os.fspath(storage), session_id)
        #: The project's secrets, learned within bounds (:mod:`.hook_learning`).
        self.learned = learn_project(self.secrets, root, self.skip, self.where) if learn else None
        #: Set at post: what pre saw (``None``: nothing, the call changes no files).
        self.kept: WorkspaceSnapshot | Unseen | None = None
        self.post = False
        self._next: WorkspaceSnapshot | None = None
        #: At post: what pre saw of the host's settings (:mod:`.hook_host_settings`).
        self.host_settings: Any = None
        #: At post: the host asked the user about the call (its pending file says so).
        self.asked = False
        #: At pre: the host's settings as this event already digested them (reused as they are).
        self.host_taken: Mapping[str, str | None] | None = None
        #: At post: the project settings' ``permissions`` entries pre saw (``False``: unknown).
        self.permissions_before: str | bool | None = False
        self._permissions_now: dict[str, tuple[str, str]] | None = None
        #: The auditor's installation (and the policy file), watched from pre to post.
        self.install_watch: InstallWatch | None = InstallWatch.of(
            InstallGuard(root, policy_source=policy.source).paths
        )
        #: At post: the installation's stamp pre kept (``None``: none kept).
        self.install_before: Stamp | None = None
        #: The submodules' git configurations and hooks, and at post their stamp pre kept.
        self.module_watch = ModuleGitWatch(root)
        self.modules_before: ModulesStamp | None = None
        #: At post: the session's spans as earlier calls handed them on (:mod:`.hook_spans`).
        self.spans_seed: SessionSpans | None = None

    def snapshot(self) -> WorkspaceSnapshot:
        """A bounded snapshot of the workspace now (git's tracked paths only at pre: a diff
        reads them from the before side), ``HEAD``'s files the index no longer lists counted as
        tracked (:mod:`~pytest_harness_audit.inspect.dropped`)."""
        if self._next is not None:
            taken, self._next = self._next, None
            return taken
        taken = WorkspaceSnapshot.take(
            self.root,
            protection=self.protection,
            tracked=not self.post,
            skip=self.skip,
            limit=self.limit,
            partial=False,  # a stopped walk's snapshot is not kept (protected files are)
        )
        if taken.tracked is not None:  # no earlier snapshot is known here: HEAD's files count
            removed = staged_removals(self.root) - taken.tracked
            taken.tracked |= removed
            taken.dropped = dropped_files(self.root, removed, taken.files)
        return taken

    @property
    def last_snapshot(self) -> WorkspaceSnapshot | None:
        """The snapshot taken at post, after the call (``None`` before it)."""
        return self._last

    def kept_for(self, category: str) -> WorkspaceSnapshot | Unseen | None:
        """At post, what pre kept for a call of ``category`` (``None``: it changes no files)."""
        if category not in self.watched:
            return None
        if self.kept is None:
            return Unseen("the pre step kept no snapshot: the call's effects are unknown")
        return self.kept

    def pending_state(self, token: object) -> dict[str, Any] | None:
        """What pre keeps in the pending file for ``token`` (``None``: nothing to keep)."""
        if not isinstance(token, WorkspaceSnapshot):
            return None
        state = self._pending_state(token)
        if self.install_watch is not None:
            stamp = self.install_watch.stamp()
            state[INSTALL_KEY] = {
                path: list(info) if info else None for path, info in stamp.items()
            }
        state[MODULES_KEY] = self.module_watch.kept(self.module_watch.stamp())
        # the files the secrets came from, read now; post judges against them (:meth:`load`)
        paths = self.learned.paths if self.learned is not None else ()
        state[CREDENTIALS_KEY] = CredentialFiles(self.root, paths).kept()
        return state

    def _pending_state(self, token: WorkspaceSnapshot) -> dict[str, Any]:
        host = host_settings_state(taken=self.host_taken)
        permissions = entries_state(permission_entries(self.settings_paths()))
        if not token.complete:
            candidates = protected_candidates(self.root, self.protection)
            seen = protected_state(self.root, candidates, self.protection)
            return {
                "overLimit": self.limit,
                "root": self.root,
                "protectedFiles": seen,
                HOST_SETTINGS_KEY: host,
                PERMISSIONS_KEY: permissions,
            }
        return {
            "snapshot": token.to_json(),
            "limit": self.limit,
            HOST_SETTINGS_KEY: host,
            PERMISSIONS_KEY: permissions,
        }

    def _changed_permissions(self) -> dict[str, tuple[str, str]] | None:
        """The entries now, read once, when they differ from pre's (``None``: the same, or
        pre kept none)."""
        before = self.permissions_before
        if not self.post or before is False or not isinstance(before, (str, type(None))):
            return None
        if self._permissions_now is None:
            self._permissions_now = permission_entries(self.settings_paths())
        now = self._permissions_now
        return None if entries_state(now) == before else now

    def settings_paths(self) -> list[str]:
        """The project's settings files (whose ``permissions`` the host writes)."""
        return settings_paths(self.root)

    def permission_change(self, call: tuple[str, Mapping[str, Any]]) -> Change | None:
        """At post: the change of the project settings' ``permissions`` entries since pre,
        judged against the session's open asked calls and ``call`` (``None``: none, or pre
        kept no state of them)."""
        now = self._changed_permissions()
        if now is None:
            return None
        before = self.permissions_before
        open_asks = [
            *(asked_calls(*self.where) if self.where is not None else ()),
            *([call] if self.asked else ()),
        ]
        return judge_added(before, now, asked=open_asks, call=call)

    def load(self, state: Mapping[str, Any] | None, problem: str = "no pending file") -> None:
        """Take up, at post, what pre kept: ``state`` is the pending file, ``None`` when there
        is none (or it is unreadable: ``problem`` says which)."""
        self.post = True
        if self.where is not None:  # what the session's earlier calls did together
            self.spans_seed = resume_spans(Path(self.where[0]), self.where[1], self)
        if state is None:
            self.kept = Unseen(f"{problem}: the call's effects are unknown")
            return
        self.asked = isinstance(state.get(ASKED_KEY), dict)
        kept = state.get(PENDING_KEY)
        if isinstance(kept, Mapping):
            self.host_settings = kept.get(HOST_SETTINGS_KEY)
            self.install_before = kept_stamp(kept.get(INSTALL_KEY))
            self.modules_before = self.module_watch.resume(kept.get(MODULES_KEY))
            self._credentials.resume(kept.get(CREDENTIALS_KEY))
            if PERMISSIONS_KEY in kept:
                self.permissions_before = kept[PERMISSIONS_KEY]
        if kept is None:
            self.kept = None  # pre took no snapshot; ``before`` says so if one was due
            return
        try:
            self.kept = self._restore(kept)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            problem = f"the pre step's snapshot is unreadable ({exc})"
            self.kept = Unseen(f"{problem}: the call's effects are unknown")

    def _restore(self, kept: Any) -> WorkspaceSnapshot | Unseen:
        if not isinstance(kept, Mapping):
            raise ValueError(f"expected an object, got {type(kept).__name__}")
        if "overLimit" in kept:
            limit = int(kept["overLimit"])
            seen = kept.get("protectedFiles")
            root = str(kept.get("root") or self.root)
            protected = dict(seen) if isinstance(seen, Mapping) else None
            reason = f"the workspace has more than {limit} entries"
            return Unseen(reason, True, limit, protected, root)
        # the protected files' content as pre saw it, not as it is now
        snapshot = WorkspaceSnapshot.from_json(kept["snapshot"], self.protection)
        self.root = snapshot.root
        self.limit = int(kept["limit"])
        return snapshot

    def take_after(self, before: WorkspaceSnapshot) -> Unseen | None:
        """Walk the workspace after the call; an :class:`Unseen` when it is over the limit."""
        now = self.snapshot()
        if not now.complete:
            seen: dict[str, Any] = {}
            for path in before.protected_inodes.values():
                digest = before.protected_digests.get(path)
                seen[path] = [before.files[path][3], None if digest is None else digest.hex()]
            reason = f"the workspace grew past {self.limit} entries"
            return Unseen(reason, True, self.limit, seen, before.root)
        self._next = now
        return None

    def protected_changes(self, token: Unseen) -> list[str]:
        """Over the limit: the protected files whose presence, mode or content changed since
        pre looked at them, and the credential files changed (a few files, read directly)."""
        changed = set(self._credentials.changed_any())
        if token.protected is not None and token.root is not None:
            paths = set(token.protected) | protected_candidates(token.root, self.protection)
            now = protected_state(token.root, paths, self.protection)
            changed.update(path for path in paths if token.protected.get(path) != now.get(path))
        return sorted(changed)


class HookInspection(SessionInspection):
    """The seam's inspection for the hook door: a call with no usable snapshot is recorded
    with a note saying so, and judged ``WARN`` when the policy judges effects."""

    inspector: HookInspector

    def __init__(self, inspector: HookInspector, policy: Policy) -> None:
        super().__init__(inspector, policy)

    def before(self, tool: str, category: str, params: Mapping[str, Any]) -> object:
        """At pre, a snapshot when ``category`` can change files; at post, what pre kept."""
        if self.inspector.post:
            return self.inspector.kept_for(category)
        return super().before(tool, category, params)

    def after(
        self, token: object, tool: str, category: str, params: Mapping[str, Any], outcome: Outcome
    ) -> CallFindings:
        """:meth:`SessionInspection.after`, plus the note of effects that cannot be known."""
        if isinstance(token, WorkspaceSnapshot):
            over = self.inspector.take_after(token)
            if over is not None:
                token = over
        seen = super().after(
            token if isinstance(token, WorkspaceSnapshot) else None,
            tool,
            category,
            params,
            outcome,
        )
        if isinstance(token, Unseen):
            seen = seen.merged(self._unseen(token, tool, category))
        partial = unlearned(self.inspector.learned, self.policy, tool, category)
        seen = seen if partial is None else seen.merged(partial)
        if not self.inspector.post:
            return seen
        where, seed = self.inspector.where, self.inspector.spans_seed
        if where is not None and seed is not None:
            hand_on(Path(where[0]), where[1], self.inspector, seed)
        watch, stamp = self.inspector.install_watch, self.inspector.install_before
        if watch is not None and stamp is not None:
            seen = seen.merged(watch.after(stamp, tool, category, params, outcome))
        if self.inspector.modules_before is not None:
            modules = self.inspector.module_watch
            seen = seen.merged(
                modules.after(self.inspector.modules_before, tool, category, params, outcome)
            )
        changed, allowed = window_changes(
            self.inspector.host_settings,
            (tool, params),
            asked=self.inspector.asked,
            where=self.inspector.where,
        )
        if changed:
            seen = seen.merged(self._protected_changed({"hostSettings": changed}, tool, category))
        if allowed is not None:
            seen = seen.merged(_allowed_findings(allowed))
        permissions = self.inspector.permission_change((tool, params))
        if permissions is None:
            return seen
        if permissions.unexplained:
            files = [
                p for p in PROJECT_SETTINGS if os.path.exists(os.path.join(self.inspector.root, p))
            ]
            effects = {"protected": files, **permissions.effects(PERMISSIONS_EFFECTS_KEY)}
            return seen.merged(self._protected_changed(effects, tool, category))
        return seen.merged(_allowed_findings(permissions, PERMISSIONS_EFFECTS_KEY))

    def _unseen(self, token: Unseen, tool: str, category: str) -> CallFindings:
        note: dict[str, Any] = {"unknown": token.reason}
        if token.over_limit:
            note["incomplete"] = True
            note["entryLimit"] = token.limit
        alert = EFFECTS_INCOMPLETE if token.over_limit else EFFECTS_UNAVAILABLE
        unknown = CallFindings((alert,), note)
        if self.policy.effect_rules:
            unknown = CallFindings(
                (alert,), note, "WARN", f"effects unknown: {token.reason}", "effect"
            )
        changed = self.inspector.protected_changes(token)
        if not changed:
            return unknown
        return unknown.merged(self._protected_changed({"protected": changed}, tool, category))

    def _protected_changed(self, effects: dict[str, Any], tool: str, category: str) -> CallFindings:
        """A protected file changed (``effects`` names it), judged by the policy."""
        judgement = self.policy.effect_rules.judge(
            (PROTECTED_FILE_CHANGED,), tool=tool, category=category
        )
        found = CallFindings((PROTECTED_FILE_CHANGED,), effects)
        if judgement is not None and judgement.verdict is not None:
            reason = f"rule {judgement.rule_id}: {judgement.reason}"
            found = CallFindings(found.alerts, found.effects, judgement.verdict, reason, "effect")
        return found


def _allowed_findings(change: Change, key: str | None = None) -> CallFindings:
    """Permission entries (``allowedTools``, or with ``key`` the project settings'
    ``permissions``) a call's window saw added (or removed): recorded; WARN for an entry naming
    the call that no prompt the door saw explains (one nothing explains FAILs as a changed host
    setting)."""
    effects = change.effects() if key is None else change.effects(key)
    if change.unprompted and not change.unexplained:
        reason = "the host allows for good what this call's prompt, unseen by the hooks, may"
        reason += f" have offered, or the call wrote it: {', '.join(change.unprompted)}"
        return CallFindings((HOST_PERMISSION_ADDED,), effects, "WARN", reason, "effect")
    return CallFindings((), effects)


__all__ = [
    "DEFAULT_ENTRY_LIMIT",
    "EFFECTS_UNAVAILABLE",
    "PENDING_KEY",
    "HookInspection",
    "HookInspector",
    "Unseen",
    "protected_candidates",
    "protected_state",
    "store_inside",
    "workspace_root",
]
