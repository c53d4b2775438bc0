"""The commits a workspace's refs and reflogs name, re-read only when the kernel saw them change.

:func:`~.history.commit_tips` reads ``HEAD``, ``packed-refs``, every file under ``.git/refs``
and every reflog under ``.git/logs``: a few dozen files, before and after every call. A
:class:`HistoryWatch` shares its :class:`~.watch.LiveTree`'s inotify descriptor, watches every
directory under ``.git/refs`` and ``.git/logs`` (the tree itself watches ``.git``, which holds
``HEAD`` and ``packed-refs``), and keeps the last reading until an event says one of them
changed: a ref written (git writes ``x.lock`` and renames it), a reflog appended to, a folder
added or removed, ``.git`` itself replaced, the kernel's queue overflowing, or the day turning
(the reading keeps reflog entries of the last :data:`~.history.REFLOG_DAYS` days).

Where the watch cannot be kept (``.git`` is not a plain directory, or its refs span more than
:data:`MAX_HISTORY_WATCHES` folders) the commits are read at every snapshot, as without a live
tree.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from pytest_harness_audit.inspect.history import commit_tips

#: Folders under ``.git/refs`` and ``.git/logs`` watched at most; more are read every time.
MAX_HISTORY_WATCHES = 1024
#: The entries of ``.git`` whose change changes the commits it names.
HISTORY_ENTRIES = frozenset({"HEAD", "packed-refs", "refs", "logs"})

_IN_ISDIR = 0x40000000
_IN_IGNORED = 0x8000
_IN_CREATE = 0x100
_IN_MOVED_TO = 0x80


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

    def owns(self, wd: int) -> bool:
        """Whether the watch descriptor ``wd`` is one of this watch's folders."""
        return wd in self._watches

    def restart(self) -> None:
        """Drop every folder watch and watch ``.git/refs`` and ``.git/logs`` afresh."""
        self.stop()
        self._stale = True
        git = os.path.join(self.root, ".git")
        if os.path.islink(git) or not os.path.isdir(git):
            return
        self._watching = True
        for top in ("refs", "logs"):
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
        """An event in a watched folder: the reading is stale; a new folder is watched too."""
        self._stale = True
        folder = self._watches.get(wd)
        if mask & _IN_IGNORED:
            self._watches.pop(wd, None)
            return
        if folder is not None and name and mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO):
            self._watch_tree(f"{folder}/{name}")

    def git_event(self, name: str, mask: int) -> None:
        """An event naming ``name`` inside ``.git`` itself."""
        if name not in HISTORY_ENTRIES:
            return
        self._stale = True
        if name in ("refs", "logs") and mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO):
            self._watch_tree(name)

    def invalidate(self) -> None:
        """Read the commits afresh at the next :meth:`tips`."""
        self._stale = True

    def tips(self) -> frozenset[str] | None:
        """:func:`~.history.commit_tips` of ``root``, re-read only when something changed."""
        day = int(time.time() // 86_400)
        if self._stale or not self._watching or day != self._day:
            self._tips = commit_tips(self.root)
            self._day = day
            self._stale = False
        return self._tips
