"""A workspace kept current by the kernel (Linux ``inotify``), so an unchanged one costs nothing.

A stat walk costs one system call per file, before and after every call. A :class:`LiveTree`
walks once, watches every directory (of a ``.git`` directory, the directory itself and its
``hooks`` folder only: its key entries, as a snapshot keeps them) and every protected file's
inode, and afterwards only reads the kernel's queue of change events: when nothing changed,
taking a snapshot is one empty read; when something changed, only the paths named by the events are
stat-ed again (a new directory is walked). The kernel queues the events of a system call
before the call returns, so every change an act made is queued by the time the act is over.

The snapshots it hands out are ordinary :class:`~.effects.WorkspaceSnapshot` objects that share
the live state until the next change (copy on write), so :func:`~.effects.diff` works on them
unchanged. When the queue overflows, the tree is walked again. What a snapshot reads beyond the
stat is kept the same way: a protected file's digest is read again only after an event named
the file (its inode is watched), and the commits the refs and reflogs name only after an event
in ``.git/refs``, ``.git/logs``, ``HEAD`` or ``packed-refs`` (:mod:`~.history_watch`).

Not seen here, but seen by stat walks: writes through a hard link that lives outside the
workspace to a file that is not protected, and writes through ``mmap`` by a process that keeps
the file open after the call (the kernel reports none; the closing of a descriptor opened for
writing is reported, so a call that mapped a file, wrote it and ended is seen).
:meth:`LiveTree.open` returns ``None`` (and the caller walks instead) where inotify is missing,
or when the workspace has more than :data:`MAX_WATCHES` directories.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
import threading
import weakref
from typing import Any

from pytest_harness_audit.inspect.effects import (
    GIT_DIRS,
    GIT_FILES,
    GIT_HOOKS,
    Protection,
    Stat,
    WorkspaceSnapshot,
    git_entries,
    protected_digest,
    tracked_paths,
    walk,
)
from pytest_harness_audit.inspect.history_watch import HistoryWatch
from pytest_harness_audit.inspect.inotify import (
    IN_ATTRIB,
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_DELETE,
    IN_DELETE_SELF,
    IN_DONT_FOLLOW,
    IN_IGNORED,
    IN_ISDIR,
    IN_MODIFY,
    IN_MOVE_SELF,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    IN_ONLYDIR,
    IN_Q_OVERFLOW,
    close_later,
    inotify_libc,
    read_events,
)
from pytest_harness_audit.inspect.lost_content import locked_at, stat_key

#: Workspaces with more directories than this are walked instead of watched.
MAX_WATCHES = 8192
#: Journal entries kept; a diff across more changes than this compares every path.
MAX_JOURNAL = 100_000

# a file written through ``mmap`` reports no modification, but its descriptor's close does
_DIR_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
_FILE_MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW


class _TooLarge(Exception):
    pass


class LiveTree:
    """The files of one workspace, kept current by inotify (see the module doc). Thread-safe."""

    def __init__(self, root: str, protection: Protection, libc: Any, fd: int) -> None:
        self.root = root
        self.protection = protection
        self._libc = libc
        self._fd = fd
        self._lock = threading.RLock()
        self._files: dict[str, Stat] = {}
        self._dirs: set[str] = set()
        self._locked: set[str] = set()  # folders their owner cannot enter ("" the root)
        self._frozen_dirs: frozenset[str] | None = None
        self._shared = False
        self._watches: dict[int, str] = {}  # wd → directory ("" is the root, else "a/b/")
        self._file_watches: dict[int, str] = {}  # wd → protected file
        self._protected: set[str] = set()
        self._log: list[str] = []  # every path set, in order: the journal
        self._log_start = 0  # the version of self._log[0]
        # the digest of each protected file, with the stat it was read at; dropped when an
        # event names the file (its inode is watched, so writes through any link are seen)
        self._digests: dict[str, tuple[Stat, bytes | None]] = {}
        self._history = HistoryWatch(
            self.root, libc, fd, _DIR_MASK, lambda: self._watches.keys() | self._file_watches.keys()
        )
        self._finalizer = weakref.finalize(self, close_later, fd)

    @classmethod
    def open(cls, root: str | os.PathLike[str], protection: Protection) -> LiveTree | None:
        """A live tree of ``root``, or ``None`` when it cannot be watched here."""
        libc = inotify_libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return None
        tree = cls(os.fspath(root), protection, libc, fd)
        try:
            tree._rebuild()
        except (_TooLarge, OSError):
            tree.close()
            return None
        return tree

    def close(self) -> None:
        """Stop watching (the kernel drops every watch with the descriptor)."""
        with self._lock:
            self._finalizer()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return not self._finalizer.alive

    # -- watching ----------------------------------------------------------------------

    def _add_watch(self, relative_dir: str) -> None:
        if len(self._watches) >= MAX_WATCHES:
            raise _TooLarge(relative_dir)
        path = os.path.join(self.root, relative_dir) if relative_dir else self.root
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _DIR_MASK)
        if wd >= 0:
            self._watches[wd] = relative_dir
        elif not relative_dir:
            raise OSError(ctypes.get_errno(), f"cannot watch {path}")
        # a subdirectory that vanished between listing and watching is simply gone

    def _watch_file(self, relative: str) -> None:
        path = os.fsencode(os.path.join(self.root, relative))
        wd = self._libc.inotify_add_watch(self._fd, path, _FILE_MASK)
        if wd >= 0 and wd not in self._watches:
            self._file_watches[wd] = relative

    def _add_tree(self, relative_dir: str) -> None:
        """Watch ``relative_dir`` ("" or "a/b/") and everything under it, then record it."""
        base = os.path.join(self.root, relative_dir) if relative_dir else self.root
        self._add_watch(relative_dir)
        locked: set[str] = set()
        files, dirs, complete = walk(
            base, on_dir=lambda rel: self._add_watch(relative_dir + rel + "/"), locked=locked
        )
        if not complete:
            raise _TooLarge(relative_dir)
        self._locked.update(relative_dir + d if d else relative_dir.rstrip("/") for d in locked)
        for path, info in files.items():
            self._set(relative_dir + path, info)
        for directory in dirs:
            self._dirs.add(relative_dir + directory)
            # a .git directory, its hooks folder and the folders in that
            if directory.rsplit("/", 1)[-1] == ".git" or f"/.git/{GIT_HOOKS}" in f"/{directory}":
                self._add_watch(relative_dir + directory + "/")
        if relative_dir:
            self._dirs.add(relative_dir.rstrip("/"))

    def _add_git(self, relative: str) -> None:
        """A ``.git`` directory appeared at ``relative``: its key entries, and a watch on it."""
        self._unshare()
        files: dict[str, Stat] = {}
        dirs: set[str] = {relative}
        git_entries(os.path.join(self.root, relative), relative, files, dirs)
        for path, info in files.items():
            self._set(path, info)
        self._dirs |= dirs
        self._add_watch(relative + "/")
        for directory in dirs:
            if directory.startswith(f"{relative}/{GIT_HOOKS}"):
                self._add_watch(directory + "/")

    def _git_event(self, directory: str, name: str, mask: int) -> None:
        """An event inside a ``.git`` directory: only its key entries count."""
        relative = directory + name
        if name in GIT_FILES:
            self._restat(relative)
        elif name == GIT_HOOKS:  # the hooks git runs: a folder of files (or a link elsewhere)
            if mask & (IN_DELETE | IN_MOVED_FROM):
                self._drop_tree(relative)
                self._set(relative, None)
            elif mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                self._add_tree(relative + "/")
            elif not mask & IN_ISDIR:
                self._restat(relative)
        elif name in GIT_DIRS and mask & IN_ISDIR:
            self._unshare()
            if mask & (IN_DELETE | IN_MOVED_FROM):
                self._dirs.discard(relative)
            elif mask & (IN_CREATE | IN_MOVED_TO):
                self._dirs.add(relative)

    def _rebuild(self) -> None:
        self._history.stop()
        for wd in (*self._watches, *self._file_watches):
            self._libc.inotify_rm_watch(self._fd, wd)
        self._watches.clear()
        self._file_watches.clear()
        self._unshare()
        self._files.clear()
        self._dirs.clear()
        self._locked.clear()
        self._protected.clear()
        self._log_start += len(self._log) + 1  # every earlier snapshot is now unrelated
        self._log.clear()
        self._drain()  # events of the old watches
        self._digests.clear()
        self._add_tree("")
        self._history.restart()

    # -- state -------------------------------------------------------------------------

    def _unshare(self) -> None:
        if self._shared:
            self._files = dict(self._files)
            self._shared = False
        self._frozen_dirs = None

    def paths_between(self, start: int, stop: int) -> set[str] | None:
        """The paths set from version ``start`` to ``stop`` (``None`` once forgotten)."""
        with self._lock:
            if start < self._log_start:
                return None
            return set(self._log[start - self._log_start : stop - self._log_start])

    def _set(self, relative: str, info: Stat | None) -> None:
        self._unshare()
        self._log.append(relative)
        self._digests.pop(relative, None)
        if info is None:
            self._files.pop(relative, None)
            self._protected.discard(relative)
            return
        self._files[relative] = info
        if self.protection(relative):
            self._protected.add(relative)
            self._watch_file(relative)

    def _restat(self, relative: str) -> None:
        try:
            info = os.lstat(os.path.join(self.root, relative))
        except OSError:
            self._set(relative, None)
            return
        if stat.S_ISDIR(info.st_mode):
            self._set(relative, None)
            return
        self._set(relative, stat_key(info))

    def _drop_tree(self, relative: str) -> None:
        prefix = relative + "/"
        self._unshare()
        for path in [p for p in self._files if p.startswith(prefix)]:
            self._set(path, None)
        self._dirs = {d for d in self._dirs if d != relative and not d.startswith(prefix)}
        self._locked = {d for d in self._locked if d != relative and not d.startswith(prefix)}
        for wd in [wd for wd, d in self._watches.items() if d.startswith(prefix)]:
            self._libc.inotify_rm_watch(self._fd, wd)
            self._watches.pop(wd, None)

    def _relock(self, relative: str) -> None:
        if locked_at(os.path.join(self.root, relative) if relative else self.root):
            self._locked.add(relative)
        else:
            self._locked.discard(relative)

    def _drain(self) -> list[tuple[int, int, str]]:
        return read_events(self._fd)

    def _apply(self, events: list[tuple[int, int, str]]) -> None:
        git_replaced = False
        for wd, mask, name in events:
            if mask & IN_Q_OVERFLOW:
                self._rebuild()
                return
            if self._history.owns(wd):
                self._history.folder_event(wd, mask, name)
                continue
            if wd in self._file_watches:
                if mask & IN_IGNORED:
                    self._file_watches.pop(wd, None)
                else:
                    self._restat(self._file_watches[wd])
                continue
            directory = self._watches.get(wd)
            if directory is None:
                continue
            if mask & IN_IGNORED:
                self._watches.pop(wd, None)
                continue
            if not name:
                if directory == "" and mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                    raise _TooLarge("the workspace itself was removed or moved")
                if mask & IN_ATTRIB:  # the folder's own mode: can its owner still enter it?
                    self._relock(directory.rstrip("/"))
                continue
            if directory == ".git/" or directory.endswith("/.git/"):
                if directory == ".git/":
                    self._history.git_event(name, mask)
                self._git_event(directory, name, mask)
                continue
            git_replaced = git_replaced or (directory == "" and name == ".git")
            relative = directory + name
            if name == ".git" and mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                self._add_git(relative)
            elif mask & IN_ISDIR:
                if mask & (IN_DELETE | IN_MOVED_FROM):
                    self._drop_tree(relative)
                elif mask & (IN_CREATE | IN_MOVED_TO):
                    self._unshare()
                    self._add_tree(relative + "/")
            else:
                self._restat(relative)
        if git_replaced:
            self._history.restart()

    def snapshot(self, *, tracked: bool = True) -> WorkspaceSnapshot | None:
        """The workspace as it is now (changes since the last call applied first); ``None``
        when it has grown too large to watch (the caller walks from then on)."""
        with self._lock:
            if self.closed:
                return None
            events = self._drain()
            if events:
                try:
                    self._apply(events)
                except (_TooLarge, OSError):
                    self.close()
                    return None
            if len(self._log) > MAX_JOURNAL:
                self._log_start += len(self._log)
                self._log.clear()
            self._shared = True
            if self._frozen_dirs is None:
                self._frozen_dirs = frozenset(self._dirs)
            inodes: dict[int, str] = {}
            for path in sorted(self._protected):
                inodes.setdefault(self._files[path][2], path)
            return WorkspaceSnapshot(
                self.root,
                self._files,
                self._frozen_dirs,
                self.protection,
                inodes,
                tracked_paths(self.root) if tracked else None,
                journal=self,
                version=self._log_start + len(self._log),
                protected_digests={path: self._digest(path) for path in inodes.values()},
                history=self._history.tips(),
                objects=self._history.objects(),
                locked=frozenset(self._locked),
            )

    def _digest(self, relative: str) -> bytes | None:
        """:func:`~.effects.protected_digest` of a protected file, read again only after an
        event named it."""
        info = self._files[relative]
        kept = self._digests.get(relative)
        if kept is not None and kept[0] == info:
            return kept[1]
        digest = protected_digest(self.root, relative, self.protection.apart)
        self._digests[relative] = (info, digest)
        return digest


def open_live_tree(root: str | os.PathLike[str], protection: Protection) -> LiveTree | None:
    """:meth:`LiveTree.open`, never raising: ``None`` where the tree cannot be watched."""
    with contextlib.suppress(Exception):
        return LiveTree.open(root, protection)
    return None
