"""The commits a workspace's refs and reflogs name, re-read only when the kernel saw them change.

:func:`~.history.commit_tips` reads ``HEAD``, ``packed-refs``, ``shallow``, every file under
``.git/refs``, every reflog under ``.git/logs``, each linked worktree's ``HEAD``, refs and
reflogs under ``.git/worktrees`` and ``.git/info/grafts``: a few dozen files, before and after
every call. A :class:`HistoryWatch` shares its :class:`~.watch.LiveTree`'s inotify descriptor,
watches every directory under ``.git/refs``, ``.git/logs``, ``.git/info`` and
``.git/worktrees`` (the tree itself watches ``.git``, which holds ``HEAD``, ``packed-refs`` and
``shallow``; ``.git/objects/info/alternates`` is stat-ed each time), and keeps the last
reading until an event says one of them changed: a ref written (git writes ``x.lock`` and
renames it), a reflog appended to, a folder added or removed, ``.git`` itself replaced, the
kernel's queue overflowing, or the day turning (the reading keeps reflog entries of the last
:data:`~.history.REFLOG_DAYS` days).

It watches the folders of ``.git/objects`` too, and counts their events: the object store's
stamp (:meth:`HistoryWatch.objects`) is then the folders' stat and that count, where a stat
walk stats every object file (an object written in place changes no folder).

Where the watch cannot be kept (``.git`` is not a plain directory, or its refs span more than
:data:`MAX_HISTORY_WATCHES` folders) the commits are read at every snapshot, as without a live
tree.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from pytest_harness_audit.inspect.history import ALTERNATES, ObjectStamp, commit_tips, object_stamp
from pytest_harness_audit.inspect.inotify import (
    IN_CREATE,
    IN_DELETE,
    IN_IGNORED,
    IN_ISDIR,
    IN_MOVED_FROM,
    IN_MOVED_TO,
)

#: Folders under ``.git/refs`` and ``.git/logs`` watched at most; more are read every time.
MAX_HISTORY_WATCHES = 1024
#: The entries of ``.git`` whose change changes the commits it names.
HISTORY_ENTRIES = frozenset(
    {"HEAD", "packed-refs", "refs", "logs", "shallow", "info", "objects", "worktrees"}
)
#: The folders of ``.git`` watched with every folder under them.
_TREES = ("refs", "logs", "info", "objects", "worktrees")


class HistoryWatch:
    """The commit tips of the repository at ``root``, kept current by the tree's events."""

    def __init__(
        self, root: str, libc: Any, fd: int, mask: int, taken: Callable[[], set[int]]
    ) -> None:
        self.root = root
        self._taken = taken  # the descriptors the tree holds: a folder here must not share one
        self._libc = libc
        self._fd = fd
        self._mask = mask
        self._watches: dict[int, str] = {}  # wd → folder under .git ("refs/heads")
        self._watching = False
        self._stale = True
        self._day = -1
        self._tips: frozenset[str] | None = None
        self._alternates: tuple[int, int, int] | None = None
        self._object_events = 0  # events in the object store's folders seen so far
        self._object_removals = 0  # of them, entries removed or moved away (not git's temp files)
        # the folders' stamp, and the count of events it was taken at
        self._folders: tuple[int, ObjectStamp] | None = None

    def owns(self, wd: int) -> bool:
        """Whether the watch descriptor ``wd`` is one of this watch's folders."""
        return wd in self._watches

    def restart(self) -> None:
        """Drop every folder watch and watch ``.git/refs``, ``.git/logs``, ``.git/info``,
        ``.git/worktrees`` and ``.git/objects`` afresh."""
        self.stop()
        self._stale = True
        self._object_events += 1  # what changed meanwhile is not known
        self._object_removals += 1
        git = os.path.join(self.root, ".git")
        if os.path.islink(git) or not os.path.isdir(git):
            return
        self._watching = True
        for top in _TREES:
            self._watch_tree(top)

    def stop(self) -> None:
        """Stop watching; the commits are read at every snapshot until :meth:`restart`."""
        for wd in self._watches:
            self._libc.inotify_rm_watch(self._fd, wd)
        self._watches.clear()
        self._watching = False
        self._stale = True

    def _watch_tree(self, folder: str) -> None:
        base = os.path.join(self.root, ".git", folder)
        if not os.path.isdir(base) or os.path.islink(base):
            return
        for current, subfolders, _ in os.walk(base):
            relative = os.path.relpath(current, os.path.join(self.root, ".git"))
            if len(self._watches) >= MAX_HISTORY_WATCHES:
                self.stop()
                return
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(current), self._mask)
            if wd < 0:
                continue  # vanished meanwhile: its removal was (or will be) an event
            if wd not in self._watches and wd in self._taken():
                self.stop()  # a folder the tree watches too: trust no kept reading
                return
            self._watches[wd] = relative  # (a folder moved within keeps its inode: renamed)
            subfolders[:] = [s for s in subfolders if not os.path.islink(os.path.join(current, s))]

    def folder_event(self, wd: int, mask: int, name: str) -> None:
        """An event in a watched folder: the reading is stale (the object store changed, for a
        folder of it); a new folder is watched too."""
        folder = self._watches.get(wd)
        if folder is not None and (folder + "/").startswith("objects/"):
            self._object_events += 1
            if mask & (IN_DELETE | IN_MOVED_FROM) and not name.startswith(("tmp_", ".tmp")):
                self._object_removals += 1
        else:
            self._stale = True
        if mask & IN_IGNORED:
            self._watches.pop(wd, None)
            return
        if folder is not None and name and mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
            self._watch_tree(f"{folder}/{name}")

    def git_event(self, name: str, mask: int) -> None:
        """An event naming ``name`` inside ``.git`` itself."""
        if name not in HISTORY_ENTRIES:
            return
        self._stale = True
        self._object_events += name == "objects"
        self._object_removals += name == "objects" and bool(mask & (IN_DELETE | IN_MOVED_FROM))
        if name in _TREES and mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
            self._watch_tree(name)

    def invalidate(self) -> None:
        """Read the commits afresh at the next :meth:`tips`."""
        self._stale = True

    def tips(self) -> frozenset[str] | None:
        """:func:`~.history.commit_tips` of ``root``, re-read only when something changed."""
        day = int(time.time() // 86_400)
        alternates = _stat(os.path.join(self.root, ".git", ALTERNATES))  # in no watched folder
        if self._stale or not self._watching or day != self._day or alternates != self._alternates:
            self._tips = commit_tips(self.root)
            self._day = day
            self._alternates = alternates
            self._stale = False
        return self._tips

    def objects(self) -> ObjectStamp:
        """:func:`~.history.object_stamp` of ``root``; while its folders are watched, that of
        the folders alone (taken again only after an event in them), the count of events in
        them (an object file written in place is one) and of the entries removed from them (a
        deletion, a move away; not git's own temporary files), so no object file is stat-ed."""
        if not self._watching:
            return object_stamp(self.root)
        events = self._object_events
        if self._folders is None or self._folders[0] != events:
            # a folder's stat changes only with an event in it (its own mode included)
            self._folders = (events, object_stamp(self.root, files=False))
        return (*self._folders[1], ("#events", events, 0), ("#removed", self._object_removals, 0))


def _stat(path: str) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_ctime_ns, info.st_ino
