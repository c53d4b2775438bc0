"""The git-tracked paths of a workspace, from ``git ls-files -z``, run once per state of the
index (cached by the index file's stat)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections import OrderedDict

_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
}


class _TrackedCache:
    """``git ls-files`` per workspace, kept while the index file's stat stays the same."""

    def __init__(self, size: int = 64) -> None:
        self._entries: OrderedDict[str, tuple[tuple[int, int, int], frozenset[str] | None]] = (
            OrderedDict()
        )
        self._size = size

    def tracked(self, root: str) -> frozenset[str] | None:
        try:
            info = os.stat(os.path.join(root, ".git", "index"))
        except OSError:
            return None if not os.path.isdir(os.path.join(root, ".git")) else frozenset()
        key = (info.st_mtime_ns, info.st_size, info.st_ino)
        cached = self._entries.get(root)
        if cached is not None and cached[0] == key:
            self._entries.move_to_end(root)
            return cached[1]
        paths = _ls_files(root)
        self._entries[root] = (key, paths)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return paths


def _ls_files(root: str) -> frozenset[str] | None:
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z"],
            cwd=root,
            env={**os.environ, **_GIT_ENV},
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return frozenset(p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p)


_TRACKED = _TrackedCache()


def tracked_paths(root: str) -> frozenset[str] | None:
    """The git-tracked paths of the workspace at ``root`` (``None`` when it is no repository),
    from ``git ls-files``, run again only when the index file changed."""
    return _TRACKED.tracked(root)


#: A file changed this recently may be "racily clean" to git: its index entry is not trusted.
_RACY_NS = 2_000_000_000


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
    env = {**os.environ, **_GIT_ENV}
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
