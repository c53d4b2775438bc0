"""Credential files read while a call ran, seen by the kernel (Linux ``inotify``).

The gate reads a call's text to tell whether it reads a credential file; a program can read one
in ways no text shows (a script, a build step, a test run that loads ``.env``). This watch asks
the kernel instead: each workspace file that holds a known secret is watched by inode for
opens, reads and closes, on an inotify descriptor of its own. :meth:`CredentialReadWatch.reset`
forgets what the auditor read itself since :meth:`~CredentialReadWatch.hold` and opens a span
for a call, :meth:`CredentialReadWatch.take` tells which files were read in it. Spans nest (a
call an agent makes through the test's proxy, inside the agent's run): what is read while
several are open belongs to the one opened last, and an outer span keeps what was read outside
its inner ones, so an agent process that reads a credential file itself and then calls a tool
is still seen. A file read (``IN_ACCESS``), opened and closed (``IN_CLOSE_NOWRITE``, and
``IN_CLOSE_WRITE`` too: a descriptor opened for reading and writing reads the file through
``mmap`` with no ``IN_ACCESS`` at all), or still open when the call ended counts. The inode
is watched, so a read through a hard link or after a rename counts too; a file put in a
watched one's place (deleted and checked out again) counts as read, and its new inode is
watched from then on. When the kernel's queue overflows, every watched file counts as read:
what happened cannot be told.
:meth:`CredentialReadWatch.opens` tells how often each file was opened meanwhile and
:meth:`CredentialReadWatch.unopened` which were read through a descriptor opened before (or
lost to an overflow): what a search's exemption from judgement is checked against.

Git's stored copy of a credential file is watched too, while it is a loose object
(:mod:`.credential_objects`): :meth:`CredentialReadWatch.watch_stored` adds such object files,
:meth:`CredentialReadWatch.stored` tells which credential files' stored copies the last
:meth:`~CredentialReadWatch.take` saw read (they are not among the files it returns: git reads
them for ordinary commands too, so what such a read means is the caller's to judge), and
:meth:`CredentialReadWatch.stored_held` those read through a descriptor opened before.

The auditor keeps copies of a workspace outside it: the seed it was copied from and the shipped
template (:mod:`pytest_harness_audit.session.workspace`). Their credential files are watched too
(``origins``), named by their absolute paths, and so are the packs of a seed's repository,
which holds them too; the auditor's own reads of them (copying a seed
for another session, building one from the template) are counted (:mod:`.own_reads`), and a
read of such a file counts only when it was opened more often during the call than the auditor
opened it (or read through a descriptor opened before).

Not seen: reads between calls (the harness reads credential files itself then), reads through
``mmap`` of a file opened before the call, and files that hold no known secret. Where inotify is
missing, :func:`open_credential_reads` returns ``None``.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import weakref
from collections.abc import Iterable

from pytest_harness_audit.inspect.credential_objects import holding_packs, object_id, packed
from pytest_harness_audit.inspect.effects import Effects
from pytest_harness_audit.inspect.inotify import (
    IN_ACCESS,
    IN_CLOSE_NOWRITE,
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_DONT_FOLLOW,
    IN_IGNORED,
    IN_MOVED_TO,
    IN_ONLYDIR,
    IN_OPEN,
    IN_Q_OVERFLOW,
    close_later,
    inotify_libc,
    read_events,
)
from pytest_harness_audit.inspect.own_reads import OWN_READS
from pytest_harness_audit.inspect.read_spans import Budget, LastTake, Span, route
from pytest_harness_audit.own_opens import own_opens

_MASK = IN_ACCESS | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE | IN_OPEN | IN_DONT_FOLLOW
_FOLDER_MASK = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW
#: At most this many files are watched (a workspace of more credential files is unusual).
MAX_WATCHED = 256


class CredentialReadWatch:
    """Which of a workspace's secret-bearing files were read in a span, from ``reset`` to
    ``take`` (and of their copies in ``origins``, see the module doc)."""

    def __init__(self, root: str, libc: object, fd: int, origins: Iterable[str] = ()) -> None:
        self.root = root
        self.origins = tuple(os.path.abspath(origin) for origin in origins)
        self._own: dict[str, int] = {}  # origin → its copies counted at the last reset
        self._libc = libc
        self._fd = fd
        self._lock = threading.Lock()
        self._paths: dict[str, None] = {}  # every path asked for, in order
        self._watches: dict[int, str] = {}  # wd → path relative to the root
        self._folders: dict[int, dict[str, str]] = {}  # a folder's wd → its names → paths
        self._last = LastTake()  # what the last take of this thread saw (calls run at once)
        self._objects: dict[str, str] = {}  # a loose object file → the credential file it stores
        self._packed: set[str] = set()  # object ids of credential blobs seen packed
        self._ever: dict[int, str] = {}  # every wd ever watched → its path (events outlive it)
        self._inodes: dict[int, tuple[int, int]] = {}  # a watched file's wd → its inode
        self._held_opens: dict[int, int] = {}  # at ``hold``: each wd's opens by the auditor
        self._spans: dict[int, Span] = {}  # the open spans, in the order they opened
        self._span_ids = itertools.count(1)
        self._finalizer = weakref.finalize(self, close_later, fd)

    def watch(self, paths: Iterable[str]) -> None:
        """Watch each of ``paths`` (relative to the root), and its folder for a file put in its
        place; a path that cannot be watched is skipped."""
        for relative in paths:
            if len(self._paths) >= MAX_WATCHED:
                break
            self._paths[relative] = None
        self._rewatch()

    def watch_stored(self, objects: dict[str, str]) -> None:
        """Watch the loose object files ``objects`` (relative to the root), each mapped to the
        credential file whose content it stores. An object file is written once and never put
        in place again: its folder is not watched."""
        for relative, source in objects.items():
            if len(self._paths) < MAX_WATCHED and relative not in self._paths:
                self._objects[relative] = source
                self._paths[relative] = None
        self._rewatch()

    def _rewatch(self) -> None:
        """Watch each path whose inode is not watched (yet, or again: a file deleted and
        written anew, by ``git checkout -f`` say, is another inode holding the same secret)."""
        add_watch = getattr(self._libc, "inotify_add_watch")  # noqa: B009 - a ctypes symbol
        held = set(self._watches.values())
        for relative in self._paths:
            if relative in held:
                continue
            path = os.path.join(self.root, relative)
            wd = add_watch(self._fd, os.fsencode(path), _MASK)
            if wd < 0:
                continue
            self._watches[wd] = self._ever[wd] = relative
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                self._inodes[wd] = (info.st_dev, info.st_ino)
            if relative in self._objects:
                continue
            folder = add_watch(self._fd, os.fsencode(os.path.dirname(path)), _FOLDER_MASK)
            if folder >= 0:
                self._folders.setdefault(folder, {})[os.path.basename(path)] = relative

    @property
    def watched(self) -> tuple[str, ...]:
        """The watched files (not stored objects), sorted."""
        return tuple(sorted({p for p in self._watches.values() if p not in self._objects}))

    @property
    def watched_files(self) -> tuple[str, ...]:
        """Every file asked to be watched: credential files, their copies in the origins
        (absolute) and their stored objects."""
        return tuple(self._paths)

    def watch_copies(self, paths: Iterable[str]) -> None:
        """Watch the copies of ``paths`` (relative to the root) in each origin, and the packs of
        an origin's repository (which commits them) when there are any."""
        paths = list(paths)
        self.watch(os.path.join(origin, path) for path in paths for origin in self.origins)
        for origin in self.origins if paths else ():
            packs = os.path.join(origin, ".git", "objects", "pack")
            try:
                names = sorted(name for name in os.listdir(packs) if name.endswith(".pack"))
            except OSError:
                continue
            self.watch(os.path.join(packs, name) for name in names)

    def hold(self) -> None:
        """The auditor is about to read files itself: what was read until now belongs to the
        span open now (if any); what is read from now until :meth:`reset` or :meth:`release`
        is the auditor's own."""
        with self._lock:
            if self._finalizer.alive:
                self._drain()
                self._held_opens = {wd: own_opens(key) for wd, key in self._inodes.items()}

    def release(self, changed: Effects | None = None) -> None:
        """The auditor's own reading since :meth:`hold` (or :meth:`take`) is over: forget it.

        ``changed``: what changed, which the auditor read (it reads a file again only when it
        changed: a new file may hold a copied secret); those files' events are its own, and so
        are the opens it counted (:mod:`pytest_harness_audit.own_opens`). The rest belong to
        the span open now."""
        with self._lock:
            if self._finalizer.alive:
                self._settle(read_events(self._fd), changed)

    def reset(
        self,
        changed: Effects | None = None,
        budget: Budget = None,
        container: bool = False,
    ) -> int:
        """Forget what the auditor read since :meth:`hold` (``changed`` as for :meth:`release`)
        and open a span (just before a call runs); the span's id for :meth:`take`.

        Spans may nest or overlap (a proxied call inside an agent's run): what is read while
        several are open belongs to the one opened last, so an outer span keeps what was read
        outside its inner ones, and nothing is counted twice. ``budget``: how often the call
        opens each watched file (a search's opens, by path), asked here, before the auditor's
        own reading is forgotten: while several spans are open, an open goes to the latest span
        with budget left for its file, and what is read through it follows it; beyond every
        budget it belongs to the span opened last. A span open while another call's is (a
        ``container``'s, an agent run holding calls, aside) is :meth:`concurrent`."""
        with self._lock, OWN_READS.quiet(self.origins):
            span = next(self._span_ids)
            if self._finalizer.alive:
                allowed = budget(self.watched_files) if budget is not None else None
                self._settle(read_events(self._fd), changed)  # with the opens ``budget`` made
                self._own = {origin: OWN_READS.count(origin) for origin in self.origins}
                opened = Span(dict(self._own), dict(allowed or {}), container=container)
                beside = [s for s in self._spans.values() if not s.container]
                if beside and not container:
                    opened.concurrent = True
                    for other in beside:
                        other.concurrent = True
                self._spans[span] = opened
            return span

    def _settle(self, events: list[tuple[int, int, str]], changed: Effects | None) -> None:
        """Drop the auditor's own events of ``events``; the others go to the span open now.

        Its own: those of the files in ``changed``, and those of a file the
        auditor opened (:mod:`pytest_harness_audit.own_opens`) no less often than the events
        say it was opened; a file opened more often was read by someone else too."""
        if self._spans:
            own = {*changed.created, *changed.modified} if changed is not None else set()
            opened: dict[int, int] = {}
            for wd, mask, _name in events:
                if mask & IN_OPEN:
                    opened[wd] = opened.get(wd, 0) + 1
            for wd, key in self._inodes.items():
                count = opened.get(wd, 0)
                if count and count <= own_opens(key) - self._held_opens.get(wd, 0):
                    own.add(self._ever[wd])
            self._to_current([event for event in events if self._ever.get(event[0]) not in own])
        self._forget_gone(events)
        self._rewatch()

    def _drain(self) -> list[tuple[int, int, str]]:
        """Read the queued events into the span opened last (or return them: none is open)."""
        events = read_events(self._fd)
        self._forget_gone(events)
        if not self._spans:
            return events
        self._to_current(events)
        return []

    def _to_current(self, events: list[tuple[int, int, str]]) -> None:
        """Add ``events`` to the open spans (one is open): :func:`.read_spans.route`."""
        route(list(self._spans.values()), events, self._ever, self._folders)

    def _forget_gone(self, events: list[tuple[int, int, str]]) -> None:
        """Stop counting as watched the inodes ``events`` say are gone."""
        for wd, mask, _name in events:
            if mask & IN_IGNORED:
                self._forget(wd)

    def _forget(self, wd: int) -> None:
        """The inode of ``wd`` is gone: it is no longer watched."""
        self._watches.pop(wd, None)
        self._folders.pop(wd, None)

    def take(self, span: int | None = None) -> tuple[str, ...]:
        """The watched files read in ``span`` (default: the span opened last, or since the last
        ``take`` when none is open), sorted; the span is closed."""
        with self._lock:
            if not self._finalizer.alive:
                self._last.stored, self._last.held = (), frozenset()
                return ()
            with OWN_READS.quiet(self.origins):
                events = self._drain()
                if span is None and self._spans:
                    span = next(reversed(self._spans))
                opened = self._spans.pop(span, None) if span is not None else None
                if opened is not None:
                    events, since = opened.events, opened.own
                else:
                    since = self._own
                self._last.concurrent = opened is not None and opened.concurrent
                own = {o: OWN_READS.count(o) - since.get(o, 0) for o in self.origins}
            try:
                return self._without_own(self._read(events), own)
            finally:
                self._rewatch()

    def _without_own(self, read: tuple[str, ...], own: dict[str, int]) -> tuple[str, ...]:
        """``read`` without the copies the auditor's own copying opened (no more often)."""
        kept: list[str] = []
        for path in read:
            origin = next((o for o in self.origins if path.startswith(o + os.sep)), None)
            if (
                origin is None
                or path in self._last.unopened
                or self._last.opens.get(path, 0) > own[origin]
            ):
                kept.append(path)
        return tuple(kept)

    def _read(self, events: list[tuple[int, int, str]]) -> tuple[str, ...]:
        opened: dict[int, int] = {}
        opens: dict[str, int] = {}
        unopened: set[str] = set()
        read: set[str] = set()
        for wd, mask, name in events:
            if mask & IN_Q_OVERFLOW:
                self._last.opens, self._last.unopened = {}, frozenset(self._paths)
                self._last.stored_opens = {}
                return self._split(set(self._paths), set(self._paths))
            if mask & IN_IGNORED:  # the file is gone: its inode is no longer watched
                self._forget(wd)
                continue
            names = self._folders.get(wd)
            if names is not None:
                if name in names and mask & (IN_CREATE | IN_MOVED_TO):
                    # a file put in a watched one's place: what read it meanwhile is not told
                    read.add(names[name])
                    unopened.add(names[name])
                continue
            relative = self._ever.get(wd)
            if relative is None:
                continue
            if mask & IN_OPEN:
                opened[wd] = opened.get(wd, 0) + 1
                opens[relative] = opens.get(relative, 0) + 1
            if mask & (IN_ACCESS | IN_CLOSE_NOWRITE | IN_CLOSE_WRITE):
                read.add(relative)
                if opened.get(wd, 0) <= 0:  # no open of this span holds it: one from before
                    unopened.add(relative)
            if mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE):
                opened[wd] = opened.get(wd, 0) - 1
        for wd, still_open in opened.items():
            if still_open > 0 and wd in self._watches:
                read.add(self._watches[wd])  # open at the end: its use cannot be told
        self._last.opens = {
            path: count for path, count in opens.items() if path not in self._objects
        }
        self._last.stored_opens = {p: opens.get(p, 0) for p in read if p in self._objects}
        self._last.unopened = frozenset(unopened)
        return self._split(read, unopened)

    def _split(self, read: set[str], unopened: set[str]) -> tuple[str, ...]:
        """The files of ``read``; the credential files whose stored objects it holds are kept
        for :meth:`stored`."""
        objects = self._objects
        self._last.stored = tuple(sorted({objects[path] for path in read if path in objects}))
        self._last.held = frozenset(objects[path] for path in unopened if path in objects)
        return tuple(sorted(path for path in read if path not in objects))

    def stored(self) -> tuple[str, ...]:
        """The credential files whose stored copy (a loose object) the last :meth:`take` saw
        read, sorted."""
        return self._last.stored

    def stored_objects(self, sources: tuple[str, ...]) -> tuple[str, ...]:
        """The watched object files (relative to the root) storing any of ``sources``."""
        return tuple(path for path, source in self._objects.items() if source in sources)

    def stored_effects(self) -> dict[str, list[str]]:
        """Record fields of the credential files whose stored copy the last :meth:`take` saw
        read (``credentialObjectRead``), of those read through a descriptor opened before
        (``credentialObjectHeld``), and of those a pack now holds that none did
        (``credentialObjectPacked``: the call packed them, ``git gc``). A pack holding one is
        watched from then on: any process that opens it may read the blob."""
        stored = self._last.stored
        if not stored:
            return {}
        record = {"credentialObjectRead": list(stored)}
        if self._last.held:
            record["credentialObjectHeld"] = sorted(self._last.held)
        objects = {object_id(path): path for path in self.stored_objects(stored)}
        now_packed = packed(self.root, objects) - self._packed
        if now_packed:
            self._packed |= now_packed
            record["credentialObjectPacked"] = sorted(
                self.stored_sources(objects[oid] for oid in now_packed)
            )
            packs = holding_packs(self.root, now_packed)
            self.watch_stored({pack: self._objects[objects[oid]] for pack, oid in packs.items()})
        return record

    def stored_opens(self) -> dict[str, int]:
        """Each stored object file (relative to the root) the last :meth:`take` saw read, with
        how often it was opened in that span."""
        return dict(self._last.stored_opens)

    def stored_sources(self, objects: Iterable[str]) -> set[str]:
        """The credential files the watched object files ``objects`` store."""
        return {self._objects[path] for path in objects if path in self._objects}

    def stored_held(self) -> frozenset[str]:
        """The credential files of :meth:`stored` whose object was read through a descriptor
        opened before the span (a process an earlier call left running), or lost to an
        overflow."""
        return self._last.held

    def opens(self) -> dict[str, int]:
        """How often each watched file was opened in the span of the last :meth:`take`."""
        return dict(self._last.opens)

    def concurrent(self) -> bool:
        """Whether the span of the last :meth:`take` ran beside another call's (calls made at
        once): which of them opened a file is then only known within a search's budget."""
        return self._last.concurrent

    def unopened(self) -> frozenset[str]:
        """The files the last :meth:`take` saw read or closed through a descriptor opened
        before its span (a process that kept it open), put in place anew during it, or every
        file after an overflow."""
        return self._last.unopened

    def close(self) -> None:
        """Stop watching."""
        with self._lock:
            self._finalizer()


def open_credential_reads(
    root: str, paths: Iterable[str], origins: Iterable[str] = ()
) -> CredentialReadWatch | None:
    """A watch of ``paths`` (relative to ``root``) and of their copies in ``origins`` (absolute
    folders), or ``None`` when inotify is missing here or none of them can be watched."""
    libc = inotify_libc()
    if libc is None:
        return None
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        return None
    watch = CredentialReadWatch(root, libc, fd, origins)
    paths = list(paths)
    watch.watch(paths)
    watch.watch_copies(paths)
    if not watch.watched:
        watch.close()
        return None
    return watch
