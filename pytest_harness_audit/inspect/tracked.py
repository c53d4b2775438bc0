"""The git-tracked paths of a workspace, from ``git ls-files -z``, run once per state of the
index (cached by the index file's stat)."""

from __future__ import annotations

import os
import subprocess
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
