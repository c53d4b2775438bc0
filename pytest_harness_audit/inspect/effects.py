"""What a call did to the workspace: a stat snapshot before, one after, and their difference.

A :class:`WorkspaceSnapshot` is one walk of the workspace (``os.scandir``, symlinks not
followed) keeping ``path → (size, time_ns, inode, mode)`` for every file and symlink (the time:
the later of the modification and change times, :func:`.lost_content.stat_key`), and the
set of directories. Of a ``.git`` directory only the directory itself and its key entries are
kept (:data:`GIT_FILES`, :data:`GIT_DIRS`): deleting the repository is a deleted directory,
while ``git add``, ``commit`` or ``checkout`` (which rewrite ``.git/index`` and ``.git/HEAD``
and add objects) have no effect. Nothing is read or hashed, except the few files written in
the last :data:`RACY_NS` before the snapshot: the file system's clock ticks coarsely, so a
second write of the same size within one tick would leave the same stat; those files get a
content digest, compared again when their stat has not changed ("racy git").

Protected files are the persona files (``SOUL.md``, ``SOUL_EVIL.md``, ``IDENTITY.md``, in any
directory and case), the files git or Python run code from and the coding agent host's settings
(:mod:`.exec_config`: ``.git/hooks/*``, ``.git/config`` by its command keys, ``site-packages``
start-up files, ``.claude/settings*.json``, ``.mcp.json``), the files the host's settings name
as programs it runs itself (:mod:`.host_programs`) and any ``protect:`` globs (policy
glob semantics); a symlink a protected path runs through, too (:mod:`.linked_dirs`). A hard
link to a protected file counts as it (``ln SOUL.md p2.md``, then a write to ``p2.md``);
:meth:`WorkspaceSnapshot.protected_alias` tells a gate the same before anything runs.

Memory files (``MEMORY.md``, ``memory/**/*.md`` …, as the policy names them) a call created,
modified or deleted are in :attr:`Effects.memory`, however their name was written.

The git-tracked paths come from :mod:`.tracked`, so :attr:`Effects.tracked_deleted` can tell
tracked deletions from scratch files. A tracked file still there that the index no longer lists
and git ignores was dropped from the project's view (:mod:`.dropped`): deleted too.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_harness_audit.inspect import lost_content
from pytest_harness_audit.inspect.digests import MAX_DIGEST_BYTES as MAX_DIGEST_BYTES
from pytest_harness_audit.inspect.digests import content_digest as content_digest
from pytest_harness_audit.inspect.digests import fingerprinted as _fingerprinted
from pytest_harness_audit.inspect.digests import protected_digest as protected_digest
from pytest_harness_audit.inspect.dropped import dropped_dirs, dropped_files, staged_removals
from pytest_harness_audit.inspect.effect_set import RECORD_LIMIT as RECORD_LIMIT
from pytest_harness_audit.inspect.effect_set import Effects as Effects
from pytest_harness_audit.inspect.exec_config import (
    NO_COMMANDS,
    NO_SETTINGS,
    git_config_fingerprint,
    is_protected_by_kind,
    settings_fingerprint,
)
from pytest_harness_audit.inspect.history import (
    ObjectStamp,
    commit_tips,
    hidden_history,
    lost_commits,
    object_stamp,
    objects_removed,
)
from pytest_harness_audit.inspect.host_programs import host_programs
from pytest_harness_audit.inspect.linked_dirs import linked_memory, linked_protected
from pytest_harness_audit.inspect.out_of_view import out_of_view
from pytest_harness_audit.inspect.replaced import replaced_files
from pytest_harness_audit.inspect.tracked import tracked_paths as tracked_paths
from pytest_harness_audit.inspect.tree_walk import GIT_DIRS as GIT_DIRS
from pytest_harness_audit.inspect.tree_walk import GIT_FILES as GIT_FILES
from pytest_harness_audit.inspect.tree_walk import GIT_HOOKS as GIT_HOOKS
from pytest_harness_audit.inspect.tree_walk import MAX_ENTRIES as MAX_ENTRIES
from pytest_harness_audit.inspect.tree_walk import Stat as Stat
from pytest_harness_audit.inspect.tree_walk import git_entries as git_entries
from pytest_harness_audit.inspect.tree_walk import walk as walk
from pytest_harness_audit.policy.glob import translate_glob
from pytest_harness_audit.policy.sensitive import is_memory_path

_GIT_BUSY = frozenset({"index", "HEAD"})
#: File names of the persona files (compared in lower case, in any directory).
PERSONA_NAMES = frozenset({"soul.md", "soul_evil.md", "identity.md"})
#: Files modified this recently before a snapshot also get a content digest.
RACY_NS = 50_000_000


class Protection:
    """Which relative paths are protected: persona names, exec-config files and the host's
    settings (``exec_config=False`` drops these two), plus ``protect`` globs.
    ``permissions_apart``: the host settings' ``permissions`` do not count (a door that judges
    them by what a change adds, as the hook door does). ``programs``: the workspace files the
    host's settings name as programs it runs itself (:func:`.host_programs.host_programs`)."""

    def __init__(
        self,
        globs: Sequence[str] = (),
        *,
        persona: bool = True,
        exec_config: bool = True,
        permissions_apart: bool = False,
        programs: Iterable[str] = (),
    ) -> None:
        self.globs = tuple(globs)
        self.programs = frozenset(programs)
        self.persona = persona
        self.exec_config = exec_config
        self.permissions_apart = permissions_apart
        #: Whether the host settings' ``permissions`` are left out of their digest.
        self.apart = permissions_apart and exec_config
        regexes = [translate_glob(glob).regex for glob in self.globs]
        self._regex = re.compile("|".join(f"(?:{r})" for r in regexes)) if regexes else None

    def __call__(self, relative: str) -> bool:
        """Whether ``relative`` (a posix path inside the workspace) is protected by name."""
        if self.persona and relative.rsplit("/", 1)[-1].lower() in PERSONA_NAMES:
            return True
        if relative in self.programs or (self.exec_config and is_protected_by_kind(relative)):
            return True
        return self._regex is not None and self._regex.fullmatch(relative) is not None


class Journal(Protocol):
    """Where a snapshot came from, when that source logs which paths changed (a live tree)."""

    def paths_between(self, start: int, stop: int) -> set[str] | None:
        """Every path changed from version ``start`` to ``stop``; ``None`` when unknown."""


@dataclass
class WorkspaceSnapshot:
    """The stat of every file of a workspace at one moment (see the module doc)."""

    root: str
    files: dict[str, Stat]
    dirs: frozenset[str]
    protection: Protection
    protected_inodes: dict[int, str]
    tracked: frozenset[str] | None
    digests: dict[str, bytes | None] = field(default_factory=dict)
    complete: bool = True
    journal: Journal | None = None
    version: int = 0
    #: Content digests of the protected files (few): a protected file counts as changed when
    #: its content changes, not its times (``touch``), even at the same size and mtime.
    protected_digests: dict[str, bytes | None] = field(default_factory=dict)
    #: What changed since the session's previous call ended (set by the inspector that took it).
    between: Effects | None = None
    #: The credential-read span opened for the call (:meth:`.CredentialReadWatch.reset`).
    reads_span: int | None = None
    #: The commits the refs and reflogs name (:func:`~.history.commit_tips`), read when
    #: the snapshot is made unless given.
    history: frozenset[str] | None = None
    #: The object store's stat (:func:`~.history.object_stamp`), taken when the snapshot is
    #: made unless given (empty: no repository, or not known).
    objects: ObjectStamp | None = None
    #: Folders (``""``: the workspace) their owner cannot list or enter (:mod:`.lost_content`).
    locked: frozenset[str] = frozenset()
    #: Files a snapshot of the session found tracked, still here, no longer in the index and
    #: ignored by git (:mod:`.dropped`); ``None``: not worked out (git's listing not asked).
    dropped: frozenset[str] | None = None
    #: The untracked paths git showed when the session started (``dir/``: a folder of them).
    in_view: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.history is None:
            self.history = commit_tips(self.root)
        if self.objects is None:
            self.objects = object_stamp(self.root)
        if not self.protected_digests:
            self.protected_digests = {
                path: protected_digest(self.root, path, self.protection.apart)
                for path in self.protected_inodes.values()
            }

    @classmethod
    def take(
        cls,
        root: str | os.PathLike[str],
        *,
        protect: Sequence[str] = (),
        persona: bool = True,
        protection: Protection | None = None,
        tracked: bool = True,
        skip: str | None = None,
        limit: int | None = None,
        partial: bool = True,
    ) -> WorkspaceSnapshot:
        """Walk ``root`` now. ``tracked=False`` skips asking git for the tracked paths, unless
        the walk stops at ``limit`` (then up to :data:`MAX_ENTRIES` tracked files are stat-ed
        even so, so that none is lost unseen; with ``partial=False``, for a door that drops a
        stopped walk's snapshot, neither); ``skip`` and ``limit`` are :func:`walk`'s."""
        base = os.fspath(root)
        if protection is None:
            protection = Protection(protect, persona=persona, programs=host_programs(base))
        taken_ns = time.time_ns()
        locked: set[str] = set()
        limit = MAX_ENTRIES if limit is None else limit
        files, dirs, complete = walk(base, skip=skip, limit=limit, locked=locked)
        asked = (tracked or not complete) if partial else (tracked and complete)
        listed = tracked_paths(base) if asked else None
        if not complete and listed:  # the walk stopped: the tracked files are looked at still
            rest = (p for p in listed if p not in files)
            lost_content.stat_paths(base, rest, files, skip, MAX_ENTRIES)
        racy_from = taken_ns - RACY_NS
        digests = {
            path: content_digest(os.path.join(base, path))
            for path, info in files.items()
            if info[1] >= racy_from and stat.S_ISREG(info[3])
        }
        inodes: dict[int, str] = {}
        for path, info in files.items():
            if protection(path):
                inodes.setdefault(info[2], path)
        return cls(
            base,
            files,
            frozenset(dirs),
            protection,
            inodes,
            listed if tracked else None,
            digests,
            complete,
            locked=frozenset(locked),
            dropped=frozenset() if tracked and listed is not None else None,
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form, for a door whose before and after run in different processes
        (the host hook's pre and post steps). It holds paths, stats and content digests (of
        racy and protected files), no file content."""
        return {
            "version": 1,
            "root": self.root,
            "files": [[path, *info] for path, info in self.files.items()],
            "dirs": sorted(self.dirs),
            "protectedInodes": [[inode, path] for inode, path in self.protected_inodes.items()],
            "tracked": None if self.tracked is None else sorted(self.tracked),
            "digests": {p: None if d is None else d.hex() for p, d in self.digests.items()},
            "complete": self.complete,
            "protectedDigests": {
                p: None if d is None else d.hex() for p, d in self.protected_digests.items()
            },
            "history": None if self.history is None else sorted(self.history),
            "objects": [list(entry) for entry in self.objects or ()],
            "locked": sorted(self.locked),
            "dropped": None if self.dropped is None else sorted(self.dropped),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], protection: Protection) -> WorkspaceSnapshot:
        """The snapshot :meth:`to_json` gave (``ValueError`` for anything else), with the
        protected files' digests as they were when it was taken."""
        try:
            if data["version"] != 1:
                raise ValueError(f"unknown snapshot version {data['version']!r}")
            files = {str(e[0]): (int(e[1]), int(e[2]), int(e[3]), int(e[4])) for e in data["files"]}
            tracked, history = data["tracked"], data.get("history")
            return cls(
                str(data["root"]),
                files,
                frozenset(str(d) for d in data["dirs"]),
                protection,
                {int(inode): str(path) for inode, path in data["protectedInodes"]},
                None if tracked is None else frozenset(str(p) for p in tracked),
                _digests(data["digests"]),
                bool(data["complete"]),
                protected_digests=_digests(data["protectedDigests"]),
                history=frozenset(str(sha) for sha in history or ()),
                objects=tuple((str(n), int(m), int(i)) for n, m, i in data.get("objects") or ()),
                locked=frozenset(str(d) for d in data.get("locked") or ()),
                dropped=_paths_or_none(data.get("dropped")),
            )
        except (KeyError, TypeError, IndexError, AttributeError) as exc:
            raise ValueError(f"not a workspace snapshot: {exc!r}") from None

    def protected_alias(self, path: str | os.PathLike[str]) -> str | None:
        """The protected file ``path`` is (by its name, or as a hard link to one), else ``None``.

        ``path`` is relative to the workspace or absolute inside it.
        """
        relative = os.path.relpath(os.path.join(self.root, os.fspath(path)), self.root)
        relative = relative.replace(os.sep, "/")
        if relative.startswith("../"):
            return None
        if self.protection(relative):
            return relative
        info = self.files.get(relative)
        return self.protected_inodes.get(info[2]) if info is not None else None


def _paths_or_none(data: Any) -> frozenset[str] | None:
    return None if data is None else frozenset(str(path) for path in data)


def _digests(data: Mapping[str, Any]) -> dict[str, bytes | None]:
    return {str(p): None if d is None else bytes.fromhex(d) for p, d in data.items()}


def diff(before: WorkspaceSnapshot, after: WorkspaceSnapshot) -> Effects:
    """The effects of whatever ran between ``before`` and ``after`` (of the same workspace)."""
    complete = before.complete and after.complete
    moved_objects = bool(before.objects) and before.objects != after.objects
    lost_history = lost_commits(
        after.root,
        before.history,
        after.history,
        objects_changed=moved_objects,
        objects_gone=moved_objects and objects_removed(before.objects, after.objects),
    )
    hidden = hidden_history(before.history, after.history, after.locked - before.locked)
    old, new = before.files, after.files
    dropped = newly_dropped(before, after)
    same = before.locked == after.locked and not dropped
    if old is new and before.dirs is after.dirs and same:  # a live tree's shared state
        return Effects(complete=complete, history_destroyed=lost_history, history_hidden=hidden)
    unchanged = old == new and before.dirs == after.dirs and same and not before.digests
    if unchanged and not any(_by_protected_content(before, after, [], [])):
        return Effects(complete=complete, history_destroyed=lost_history, history_hidden=hidden)
    hint = None
    if before.journal is not None and before.journal is after.journal:
        hint = before.journal.paths_between(before.version, after.version)
    if hint is not None:  # only the paths the journal names can differ
        deleted = sorted(path for path in hint if path in old and path not in new)
        created = sorted(path for path in hint if path in new and path not in old)
        modified = [path for path in hint if path in old and path in new and old[path] != new[path]]
    else:
        deleted = sorted(old.keys() - new.keys())
        created = sorted(new.keys() - old.keys())
        modified = [path for path in old.keys() & new.keys() if old[path] != new[path]]
    for path, digest in before.digests.items():
        unchanged = digest is not None and path in new and old.get(path) == new[path]
        if unchanged and content_digest(os.path.join(after.root, path)) != digest:
            modified.append(path)
    modified, configs = _by_protected_content(before, after, modified, created)
    modified = [path for path in modified if not _git_busywork(path)]
    modified.sort()
    protected: set[str] = set(configs)
    protection = before.protection
    for path in (*deleted, *created, *modified):
        fingerprinted = _fingerprinted(path, protection.apart) is not None
        if protection(path) and not fingerprinted:
            protected.add(path)
        for info in (old.get(path), new.get(path)):
            if info is not None and info[2] in before.protected_inodes:
                target = before.protected_inodes[info[2]]
                if target != path or not fingerprinted:  # judged by its fingerprint
                    protected.add(target)
    protected |= linked_protected(after.root, (*created, *modified), new, protection)
    gone, tracked = {old[path][2]: path for path in deleted}, before.tracked or frozenset()
    moves = [(gone[new[path][2]], path) for path in created if new[path][2] in gone]
    changed = (*deleted, *created, *modified)
    renamed, moved_away = out_of_view(after.root, moves, tracked, changed, before.in_view)
    moved = {source for source, _ in renamed}  # a file moved within the work's view is not lost
    lost = sorted({*(path for path in deleted if path not in moved), *dropped})
    memory = sorted(p for p in (*deleted, *created, *modified) if is_memory_path(p))
    memory += sorted(linked_memory(after.root, (*created, *modified), new, is_memory_path))
    replaced, unreachable = replaced_files(after.root, old, new, modified, tracked)
    emptied, unreadable = lost_content.lost_files(
        after.root, old, new, modified, tracked, after.locked - before.locked, renamed, after.locked
    )
    return Effects(
        deleted=tuple(lost),
        modified=tuple(modified),
        created=tuple(created),
        protected=tuple(sorted(protected)),
        deleted_dirs=tuple(
            sorted(
                {
                    *lost_content.lost_dirs(before.dirs - after.dirs, lost, moved),
                    *dropped_dirs(dropped, lost, tracked),
                }
            )
        ),
        dropped=tuple(sorted(dropped)),
        renamed=tuple(sorted(renamed)),
        hidden=moved_away,
        tracked_deleted=tuple(path for path in lost if path in tracked),
        complete=complete,
        memory=tuple(memory),
        emptied=tuple(sorted({*emptied, *unreachable})),
        unreadable=unreadable,
        history_destroyed=lost_history,
        history_hidden=hidden,
        replaced=replaced,
    )


def newly_dropped(before: WorkspaceSnapshot, after: WorkspaceSnapshot) -> frozenset[str]:
    """The files dropped from view (:mod:`.dropped`) after ``before`` and not before it. An
    ``after`` that did not ask git (the hook door's post) asks now: for the index's listing
    when the index changed, else for the files of ``HEAD`` it lacks (those it lacked before)."""
    now = after.dropped
    if now is None:
        if before.tracked is None:
            return frozenset()
        index = ".git/index"
        if before.files.get(index) != after.files.get(index):
            listed = tracked_paths(after.root)
            unindexed = frozenset() if listed is None else before.tracked - listed
        else:
            unindexed = staged_removals(after.root) & before.tracked
        now = dropped_files(after.root, unindexed, after.files)
    return now - (before.dropped or frozenset())


def _git_busywork(path: str) -> bool:
    """``.git/index`` or ``.git/HEAD`` rewritten: what ``git status``, ``add``, ``commit`` and
    ``checkout`` do (their deletion still counts; ``.git/config`` changing is recorded)."""
    name = path.rsplit("/", 1)[-1]
    return name in _GIT_BUSY and path.rsplit("/", 2)[-2:-1] == [".git"]


def _by_protected_content(
    before: WorkspaceSnapshot,
    after: WorkspaceSnapshot,
    modified: list[str],
    created: Sequence[str],
) -> tuple[list[str], list[str]]:
    """``modified`` with protected files judged by content: a touched one drops out, one
    rewritten at the same size and times comes in; and the repository configurations whose
    command keys changed (or that were created with some). A configuration whose command keys
    stayed the same is left as its stat says (``git config user.name`` modifies it)."""
    changed = set(modified)
    configs: list[str] = []
    protection = before.protection
    for path in created:
        kind = _fingerprinted(path, protection.apart)
        if kind is not None:
            empty = NO_COMMANDS if kind is git_config_fingerprint else NO_SETTINGS
            if protected_digest(after.root, path, protection.apart) != empty:
                configs.append(path)
    for path, digest in before.protected_digests.items():
        if path not in after.files or path not in before.files:
            kind = _fingerprinted(path, protection.apart)
            if kind is settings_fingerprint and path in before.files and digest != NO_SETTINGS:
                configs.append(path)  # deleted with settings that count (hooks …)
            continue  # deleted or created: judged as such
        now = protected_digest(after.root, path, protection.apart)
        if _fingerprinted(path, protection.apart) is not None:
            if now != digest:
                changed.add(path)
                configs.append(path)
            continue
        same_mode = before.files[path][3] == after.files[path][3]
        if now == digest and same_mode:
            changed.discard(path)  # only its times moved (``touch``)
        elif digest is not None:
            changed.add(path)
    return list(changed), configs
