"""The auditor's installation watched by the kernel (Linux ``inotify``): one watcher a process.

A stat stamp of the installation (:meth:`.install_watch.InstallWatch.stamp`) is some 1,300
system calls, before and after every call that can change files. An :class:`InstallEvents`
watches what the stamp keeps once, and afterwards reads the kernel's queue of change events: a
call that changed nothing costs one empty read before it and one after. The kernel queues the
events of a system call before the call returns, so every change an act made is queued by the
time the act is over. Watched (each path as the stamp spells it):

* every directory of the package tree but ``__pycache__`` folders, and each watched folder
  (``site-packages``, the standard library, the environment's folder, the interpreter's folder):
  its direct entries created, removed, moved, written or given new attributes;
* the inode of every file the stamp keeps (the package's files, the files directly in a watched
  folder, a package's ``__init__.py`` or a distribution's ``entry_points.txt``, the files watched
  by name), so a write through a hard link kept anywhere is seen, as its change time is by a stamp;
* the folder holding each such inner file, and each folder up to ``/`` from a watched folder, the
  package and a file watched by name, for the creation, removal or move of the one entry on the
  way (an inner file that is not there yet, a folder renamed away with a copy put in its place);
* each file of a loaded module and its cache file (:mod:`.install_modules`), by inode and by its
  name in its folder (a cache file also by its ``__pycache__`` folder's name in the folder
  above): one watch a folder, whatever the number of modules in it;
* each folder on ``sys.path``, for its start-up entries only (``*.pth``, ``sitecustomize``,
  ``usercustomize``).

Events named ``__pycache__`` are dropped in a folder whose every entry counts (any interpreter
writes them when it imports); inside one only the cache files of loaded modules are watched.
Every event is kept in order, as the path it names, in a journal: a call notes the journal's
length before (:meth:`InstallEvents.mark`) and reads what came after
(:meth:`InstallEvents.since`). A change of the tree's shape (an entry created, removed or moved,
a watched inode gone) has the watches set again. When the kernel's queue overflowed, or watches
could not be set again, the journal holds a mark that something was lost: a call across it learns
nothing from the events (``None``) and compares stamps instead (see :mod:`.install_watch`).

Not seen here, but seen by a stamp: a change made while the watches are being set again after a
change of shape, in a folder new since then (the change of shape itself is in the journal);
writes through ``mmap`` by a process that keeps the file open after the call (the kernel reports
none until the file is closed, which is reported to the call then running). The watcher is
``None`` (stamps are taken instead) where inotify is missing, when the installation needs more
than :data:`MAX_WATCHES` watches or the kernel refuses one.
"""

from __future__ import annotations

import ctypes
import errno
import os
import threading
import weakref
from collections.abc import Iterable
from typing import Any

from pytest_harness_audit.gate.install_modules import is_startup
from pytest_harness_audit.inspect.inotify import (
    IN_ATTRIB,
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_DELETE,
    IN_DELETE_SELF,
    IN_DONT_FOLLOW,
    IN_IGNORED,
    IN_MODIFY,
    IN_MOVE_SELF,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    IN_Q_OVERFLOW,
    close_later,
    inotify_libc,
    read_events,
)

#: Watches one process keeps at most; more and every call takes stamps.
MAX_WATCHES = 16_384
#: Journal entries kept; a call across more changes than this compares stamps.
MAX_JOURNAL = 10_000
#: The file in a folder of another package that is watched too: a package's start, and a
#: distribution's (``*.dist-info``) plugins.
INNER = ("__init__.py", "entry_points.txt")
#: The journal's mark of events lost (no path is empty).
LOST = ""

_SHAPE = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
_GONE = IN_DELETE_SELF | IN_MOVE_SELF
# one mask for folders and files alike: adding a watch again replaces its mask
_MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | _SHAPE | _GONE
_CACHE = "__pycache__"

Spec = tuple[str, tuple[str, ...], tuple[str, ...], frozenset[str], frozenset[str]]
"""What one watch covers: the package folder, the folders whose entries count, the files, the
files of the modules loaded (and their cache files), the folders whose start-up entries count
(:mod:`.install_modules`)."""
Stamp = dict[str, tuple[int, int, int, int] | None]
"""Path → ``(inode, change time ns, size, mode)`` (``None``: nothing there)."""


def inner_file(folder: str) -> str:
    """The file of the folder ``folder`` (an entry of a watched folder) that is watched."""
    return os.path.join(folder, INNER[folder.endswith(".dist-info")])


class _Plan:
    """Every path to watch for some specs, and what an event at each reports."""

    def __init__(self) -> None:
        self.entries: set[str] = set()  # folders whose every entry counts
        self.named: dict[str, dict[str, set[str]]] = {}  # folder → entry → paths it reports
        self.files: set[str] = set()  # files watched by inode
        self.startup: set[str] = set()  # folders whose start-up entries count
        self.over = False  # more than MAX_WATCHES paths (the walk stopped)

    @property
    def size(self) -> int:
        """The watches planned (a folder or file named twice is watched once)."""
        if self.over:
            return MAX_WATCHES + 1
        return len(self.entries | self.named.keys() | self.startup) + len(self.files)

    def _name(self, folder: str, name: str, reports: str) -> None:
        self.named.setdefault(folder, {}).setdefault(name, set()).add(reports)

    def _up(self, root: str) -> None:
        """Each folder above ``root`` (as spelled and as resolved), for the entry on the way."""
        for spelled in dict.fromkeys((root, os.path.realpath(root))):
            child, parent = spelled, os.path.dirname(spelled)
            while parent != child:
                self._name(parent, os.path.basename(child), root)
                child, parent = parent, os.path.dirname(parent)

    def _loaded(self, modules: Iterable[str], roots: Iterable[str]) -> None:
        """A loaded module's file and cache file: by inode, by name in its folder, and each
        folder on the way by name in the one above, up to the watched folder it lies in (a
        package folder renamed away with a changed copy put in its place)."""
        tops = set(roots)
        tops.update([os.path.realpath(root) for root in tops])
        for path in modules:
            folder, name = os.path.split(path)
            self._name(folder, name, path)
            self.files.add(path)
            child, parent = folder, os.path.dirname(folder)
            while child not in tops and parent != child:
                self._name(parent, os.path.basename(child), path)
                child, parent = parent, os.path.dirname(parent)

    def add(self, spec: Spec) -> None:
        """Plan the watches of ``spec``, as :meth:`~.install_watch.InstallWatch.stamp` walks."""
        package, folders, files, modules, startup = spec
        self._loaded(modules, (package, *folders))
        self.startup.update(startup)
        size = 0  # (a bound on the walk: the spec's own paths, counted loosely)
        self._up(package)
        for folder, dirs, names in os.walk(package):
            dirs[:] = [d for d in dirs if d != _CACHE]
            self.entries.add(folder)
            self.files.update(os.path.join(folder, name) for name in names)
            size += 1 + len(names)
            if size > MAX_WATCHES:
                self.over = True
                return
        for path in files:
            self._up(path)
            self.files.add(path)
        for folder in folders:
            self._up(folder)
            self.entries.add(folder)
            try:
                found = list(os.scandir(folder))
            except OSError:
                continue
            for entry in found:
                if entry.name == _CACHE:
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if not is_dir:
                    self.files.add(entry.path)
                    continue
                inner = inner_file(entry.path)
                self._name(entry.path, os.path.basename(inner), inner)
                self.files.add(inner)
            size += len(found) * 2
            if size > MAX_WATCHES:
                self.over = True
                return


class InstallEvents:
    """The kernel's watch of the installations of this process's watches (see the module doc).
    Thread-safe; made by :func:`shared_events`."""

    def __init__(self, libc: Any, fd: int) -> None:
        self._libc = libc
        self._fd = fd
        self.pid = os.getpid()
        self._lock = threading.RLock()
        self._specs: weakref.WeakKeyDictionary[object, Spec] = weakref.WeakKeyDictionary()
        self._armed: frozenset[Spec] = frozenset()
        # wd → what an event there reports: (folder, None) every entry but __pycache__;
        # (folder, {entry: paths}) the entries named, their creation, removal or move only
        self._dirs: dict[int, list[tuple[str, dict[str, set[str]] | None]]] = {}
        self._files: dict[int, list[str]] = {}  # wd → the files at that inode
        self._startup: dict[int, list[str]] = {}  # wd → folders whose start-up entries count
        self._journal: list[str] = []
        #: Per spec: a stamp of what it covers, with the journal's version it was taken at.
        self.baselines: dict[Spec, tuple[int, Stamp]] = {}
        self._start = 0  # the version of self._journal[0]
        self.alive = True
        self._short = False  # a watch was refused for want of watches or memory
        self._finalizer = weakref.finalize(self, close_later, fd)

    def close(self) -> None:
        """Stop watching (the kernel drops every watch with the descriptor)."""
        with self._lock:
            self.alive = False
            self._finalizer()

    # -- watching ----------------------------------------------------------------------------

    def watch(self, owner: object, spec: Spec) -> bool:
        """Watch what ``spec`` covers for ``owner`` (kept while ``owner`` lives; a new spec
        replaces its last); ``False`` when the watches cannot be kept (take stamps)."""
        with self._lock:
            if self._specs.get(owner) == spec and self.alive:
                return True
            self._specs[owner] = spec
            if spec not in self._armed and self.alive:
                self._pump()
                self._arm()
            return self.alive

    def forget(self, owner: object) -> None:
        """Stop watching for ``owner`` (its watches go at the next setting of the watches)."""
        with self._lock:
            self._specs.pop(owner, None)

    def _add(self, path: str, follow: bool) -> int:
        flags = _MASK if follow else _MASK | IN_DONT_FOLLOW
        wd = int(self._libc.inotify_add_watch(self._fd, os.fsencode(path), flags))
        # a path that is not there (or not to be read) is refused; its creation is seen above
        # it. No watches or memory left leaves a watch out: take stamps from then on
        if wd < 0 and ctypes.get_errno() in (errno.ENOSPC, errno.ENOMEM):
            self._short = True
        return wd

    def _arm(self) -> None:
        """Set every watch the live specs need; drop those no longer needed."""
        specs = frozenset(self._specs.values())
        plan = _Plan()
        for spec in specs:
            plan.add(spec)
        if plan.size > MAX_WATCHES:
            self._fail()
            return
        dirs: dict[int, list[tuple[str, dict[str, set[str]] | None]]] = {}
        files: dict[int, list[str]] = {}
        for folder in plan.entries:
            wd = self._add(folder, True)
            if wd >= 0:
                dirs.setdefault(wd, []).append((folder, None))
        for folder, names in plan.named.items():
            wd = self._add(folder, True)
            if wd >= 0:
                dirs.setdefault(wd, []).append((folder, names))
        for path in plan.files:
            wd = self._add(path, False)
            if wd >= 0:
                files.setdefault(wd, []).append(path)
        startup: dict[int, list[str]] = {}
        for folder in plan.startup:
            wd = self._add(folder, True)
            if wd >= 0:
                startup.setdefault(wd, []).append(folder)
        kept = dirs.keys() | files.keys() | startup.keys()
        if self._short or len(kept) > MAX_WATCHES:
            self._fail()
            return
        for wd in (self._dirs.keys() | self._files.keys() | self._startup.keys()) - kept:
            self._libc.inotify_rm_watch(self._fd, wd)
        self._dirs, self._files, self._startup, self._armed = dirs, files, startup, specs
        for gone in self.baselines.keys() - specs:
            del self.baselines[gone]

    def _fail(self) -> None:
        self._journal.append(LOST)
        self.close()
        refuse_events()

    # -- reading -----------------------------------------------------------------------------

    def _pump(self) -> None:
        """Read the queued events into the journal; set the watches again after a change of
        the tree's shape."""
        if not self.alive:
            return
        events = read_events(self._fd)
        if not events:
            return
        rearm = False
        journal = self._journal
        for wd, mask, name in events:
            if mask & IN_Q_OVERFLOW:
                journal.append(LOST)
                rearm = True
                continue
            watched = wd in self._files or wd in self._dirs or wd in self._startup
            if mask & IN_IGNORED:
                rearm = rearm or watched  # an inode watched is gone
                continue
            for path in self._files.get(wd, ()):
                journal.append(path)
                rearm = rearm or bool(mask & _GONE)
            for folder, names in self._dirs.get(wd, ()):
                if not name:  # the folder itself
                    if mask & _GONE:
                        rearm = True
                        journal.extend((folder,) if names is None else _all(names.values()))
                    elif names is None and mask & IN_ATTRIB:
                        journal.append(folder)
                elif names is None:
                    if name != _CACHE:
                        journal.append(os.path.join(folder, name))
                        rearm = rearm or bool(mask & _SHAPE)
                elif mask & _SHAPE and name in names:
                    journal.extend(names[name])
                    rearm = True
            if name and is_startup(name):
                journal.extend(os.path.join(folder, name) for folder in self._startup.get(wd, ()))
        if rearm:
            self._arm()
        if len(journal) > MAX_JOURNAL:
            self._start += len(journal)
            journal.clear()

    def mark(self) -> int:
        """The journal's version now (the events queued so far read in)."""
        with self._lock:
            self._pump()
            return self._start + len(self._journal)

    def since(self, version: int) -> list[str] | None:
        """The paths changed from ``version`` on (the events queued so far read in), in order;
        ``None`` when some are not known (lost, forgotten, or the watches could not be kept)."""
        with self._lock:
            self._pump()
            if version < self._start:
                return None
            changed = self._journal[version - self._start :]
            return None if not self.alive or LOST in changed else changed


def _all(groups: Iterable[set[str]]) -> list[str]:
    return sorted(path for group in groups for path in group)


_LOCK = threading.Lock()
_SHARED: InstallEvents | None = None
_REFUSED_PID = -1  # the process where the watcher could not be made or kept


def shared_events() -> InstallEvents | None:
    """The process's watcher of the installation, made at the first use (``None``: take
    stamps, see the module doc). A process made by ``fork`` makes its own."""
    global _SHARED, _REFUSED_PID
    watcher = _SHARED
    pid = os.getpid()
    if watcher is not None and watcher.pid == pid and watcher.alive:
        return watcher
    with _LOCK:
        watcher = _SHARED
        if watcher is not None and watcher.pid == pid and watcher.alive:
            return watcher
        if pid == _REFUSED_PID:
            return None
        libc = inotify_libc()
        fd = -1 if libc is None else int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        if fd < 0:
            _REFUSED_PID = pid
            return None
        _SHARED = InstallEvents(libc, fd)
        return _SHARED


def forget_watch(owner: object) -> None:
    """Stop watching for ``owner`` in this process's watcher, if there is one (none is made)."""
    watcher = _SHARED
    if watcher is not None and watcher.pid == os.getpid():
        watcher.forget(owner)


def refuse_events() -> None:
    """Take stamps from now on in this process (the watcher could not be kept)."""
    global _REFUSED_PID
    with _LOCK:
        _REFUSED_PID = os.getpid()


__all__ = [
    "INNER",
    "LOST",
    "MAX_JOURNAL",
    "MAX_WATCHES",
    "InstallEvents",
    "Spec",
    "Stamp",
    "forget_watch",
    "inner_file",
    "refuse_events",
    "shared_events",
]
