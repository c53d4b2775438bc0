"""The git-tracked paths of a workspace, from ``git ls-files -s -z``, run once per state of the
index (cached by the index file's stat), and those git records as executable (mode 100755)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections import OrderedDict
from typing import Protocol, TypeVar

from pytest_harness_audit.inspect.dropped import dropped_files
from pytest_harness_audit.inspect.git_env import GIT_ISOLATION_ENV, without_filters
from pytest_harness_audit.inspect.out_of_view import untracked_in_view

#: The environment of every git command run here (:mod:`.git_env`): no global or system
#: configuration, no program the repository's configuration names.
GIT_ENV = GIT_ISOLATION_ENV


_Listing = tuple[frozenset[str] | None, frozenset[str]]
"""The tracked paths (``None``: no repository) and the executable ones among them."""


class _TrackedCache:
    """``git ls-files`` per workspace, kept while the index file's stat stays the same."""

    def __init__(self, size: int = 64) -> None:
        self._entries: OrderedDict[str, tuple[tuple[int, int, int], _Listing]] = OrderedDict()
        self._size = size

    def tracked(self, root: str) -> _Listing:
        try:
            info = os.stat(os.path.join(root, ".git", "index"))
        except OSError:
            if not os.path.isdir(os.path.join(root, ".git")):
                return None, frozenset()
            return frozenset(), frozenset()
        key = (info.st_mtime_ns, info.st_size, info.st_ino)
        cached = self._entries.get(root)
        if cached is not None and cached[0] == key:
            self._entries.move_to_end(root)
            return cached[1]
        listing = _ls_files(root)
        self._entries[root] = (key, listing)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return listing


def _ls_files(root: str) -> _Listing:
    try:
        done = subprocess.run(
            ["git", "ls-files", "-s", "-z"],
            cwd=root,
            env={**os.environ, **GIT_ENV},
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None, frozenset()
    if done.returncode != 0:
        return None, frozenset()
    paths: set[str] = set()
    executables: set[str] = set()
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, tab, path = entry.partition("\t")  # "<mode> <object> <stage>\t<path>"
        if not tab:
            continue
        paths.add(path)
        if meta.startswith("100755 "):
            executables.add(path)
    return frozenset(paths), frozenset(executables)


_TRACKED = _TrackedCache()


def tracked_paths(root: str) -> frozenset[str] | None:
    """The git-tracked paths of the workspace at ``root`` (``None`` when it is no repository),
    from ``git ls-files``, run again only when the index file changed."""
    return _TRACKED.tracked(root)[0]


def tracked_executables(root: str) -> frozenset[str]:
    """The tracked paths of the workspace at ``root`` that git records as executable (mode
    ``100755``), read with :func:`tracked_paths`."""
    return _TRACKED.tracked(root)[1]


class Listed(Protocol):
    """What :class:`KnownTracked` extends: a snapshot's tracked paths (``None``: not asked),
    its files and the tracked files it found dropped from view (:mod:`.dropped`)."""

    root: str
    files: dict[str, tuple[int, int, int, int]]
    tracked: frozenset[str] | None
    dropped: frozenset[str] | None
    in_view: frozenset[str]


_Snapshot = TypeVar("_Snapshot", bound=Listed)


class KnownTracked:
    """Every path the snapshots of one session found tracked. git's listing is the index as
    the agent left it: moved away, emptied by ``git rm -r -q --cached .``, or unreadable to
    git once ``HEAD`` or the configuration is spoiled. The files it no longer lists are the
    owner's files still, not scratch files whose loss would count for less, so a snapshot
    counts them as tracked (:meth:`extend`). Thread-safe."""

    def __init__(self) -> None:
        self._paths: frozenset[str] = frozenset()
        self._in_view: frozenset[str] | None = None
        self._lock = threading.Lock()

    def extend(self, snapshot: _Snapshot) -> _Snapshot:
        """``snapshot``, its tracked paths (when it asked git for them) with every path an
        earlier snapshot found tracked; what it found is kept for the later ones. Those the
        index no longer lists that are still there and ignored are its ``dropped`` files; its
        ``in_view``: the untracked paths git showed at the first snapshot that asked it."""
        indexed = snapshot.tracked
        if indexed is None and not self._paths:
            return snapshot
        first = self._in_view is None and indexed is not None
        shown = untracked_in_view(snapshot.root) if first else None
        with self._lock:
            self._paths |= indexed or frozenset()
            known = self._paths
            if self._in_view is None and shown is not None:
                self._in_view = shown
            snapshot.in_view = self._in_view or frozenset()
        snapshot.tracked = (indexed or frozenset()) | known
        if indexed is not None:
            snapshot.dropped = dropped_files(snapshot.root, known - indexed, snapshot.files)
        return snapshot


#: A file changed this recently may be "racily clean" to git: its index entry is not trusted.
_RACY_NS = 2_000_000_000


def filter_listing(root: str) -> str:
    """The repository's filter driver settings (``git config -z --get-regexp``), ``""`` when
    git cannot tell."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            ["git", "config", "-z", "--get-regexp", r"^filter[.]"],
            cwd=root,
            env={**os.environ, **GIT_ENV},
            capture_output=True,
            timeout=30,
            check=False,
        )
        return done.stdout.decode("utf-8", "surrogateescape")
    return ""


def refresh_index(root: str, files: list[str]) -> None:
    """Bring the index's stat data of ``root``'s tracked files up to date, so that git trusts
    it and does not open ``files`` to compare their content.

    A repository copied or checked out just now has index entries whose stat data (change time,
    or a modification time as recent as the index) git cannot trust: its next ``git status`` or
    ``git diff`` reads each such file again. ``files`` changed within the last two seconds are
    given a modification time two seconds older first, so that the refreshed index is not racy
    for them either. Nothing happens where ``root`` is no git work tree (its ``.git`` a folder,
    or a file naming one: a linked worktree's, a submodule's).
    """
    if not os.path.lexists(os.path.join(root, ".git")):
        return
    now = time.time_ns()
    for relative in files:
        path = os.path.join(root, relative)
        try:
            info = os.stat(path, follow_symlinks=False)
            if info.st_mtime_ns > now - _RACY_NS:
                os.utime(
                    path, ns=(info.st_atime_ns, info.st_mtime_ns - _RACY_NS), follow_symlinks=False
                )
        except OSError:
            continue
    # refreshing hashes a stat-dirty file through its filter driver's clean program
    env = {**os.environ, **without_filters(filter_listing(root))}
    env.pop("GIT_OPTIONAL_LOCKS", None)
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            ["git", "update-index", "-q", "--refresh"],
            cwd=root,
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
