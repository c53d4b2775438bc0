"""One stat walk of a workspace: every file and symlink with its stat, and the directories.

Of a ``.git`` directory only the directory itself and its key entries are kept
(:data:`GIT_FILES`, :data:`GIT_DIRS`, the hooks under :data:`GIT_HOOKS`): the rest is git's
business. :mod:`.effects` builds its snapshots on it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable

from pytest_harness_audit.inspect import lost_content
from pytest_harness_audit.inspect.lost_content import stat_key

#: Files of a ``.git`` directory a snapshot keeps (the rest of it is git's business).
GIT_FILES = ("HEAD", "config", "config.worktree", "index", "commondir")
#: Directories of a ``.git`` directory a snapshot keeps (their existence, not their content).
GIT_DIRS = ("refs", "objects")
#: The directory of a ``.git`` directory whose files a snapshot keeps (git runs them).
GIT_HOOKS = "hooks"
#: A walk stops after this many entries; the snapshot then says it is incomplete.
MAX_ENTRIES = 500_000

Stat = tuple[int, int, int, int]
"""``(size, time_ns, inode, mode)`` of one file or symlink."""


def walk(
    base: str,
    on_dir: Callable[[str], None] | None = None,
    *,
    skip: str | None = None,
    limit: int | None = None,
    locked: set[str] | None = None,
) -> tuple[dict[str, Stat], set[str], bool]:
    """``(files, dirs, complete)`` under ``base``: the stat of every file and symlink and the
    set of directories, by relative posix path; of a ``.git`` directory only its key entries
    (:func:`git_entries`). ``on_dir`` is called with each directory (not ``.git``) before it
    is listed; the entry ``skip`` (a relative path, e.g. an audit store inside the
    workspace) is left out. ``complete`` is false when the walk stopped after ``limit``
    entries (default :data:`MAX_ENTRIES`). ``locked`` gets the folders (``""``: ``base``) their
    owner cannot list or enter (:func:`~.lost_content.locked_at`)."""
    limit = MAX_ENTRIES if limit is None else limit
    if locked is not None and lost_content.locked_at(base):
        locked.add("")
    files: dict[str, Stat] = {}
    dirs: set[str] = set()
    stack: list[tuple[str, str]] = [(base, "")]
    seen = 0
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                relative = prefix + entry.name
                if relative == skip:
                    continue
                seen += 1
                if seen > limit:
                    return files, dirs, False
                try:
                    if entry.is_dir(follow_symlinks=False):
                        dirs.add(relative)
                        if locked is not None and lost_content.locked_at(entry.path):
                            locked.add(relative)
                        if entry.name == ".git":  # its hooks count against the limit too
                            seen += git_entries(entry.path, relative, files, dirs, limit - seen)
                            if seen > limit:
                                return files, dirs, False
                            continue
                        if on_dir is not None:
                            on_dir(relative)
                        stack.append((entry.path, relative + "/"))
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                files[relative] = stat_key(info)
    return files, dirs, True


def git_entries(
    path: str, relative: str, files: dict[str, Stat], dirs: set[str], limit: int = 10_000
) -> int:
    """Add the key entries of the ``.git`` directory at ``path`` (``relative`` in the
    workspace): :data:`GIT_FILES` with their stat, :data:`GIT_DIRS` that exist, and the
    :data:`GIT_HOOKS` directory with every file in it (at most ``limit`` entries); return how
    many hook entries it added (one more when there were more)."""
    for name in GIT_FILES:
        try:
            info = os.lstat(os.path.join(path, name))
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode):
            files[f"{relative}/{name}"] = stat_key(info)
    for name in GIT_DIRS:
        if os.path.isdir(os.path.join(path, name)):
            dirs.add(f"{relative}/{name}")
    hooks = os.path.join(path, GIT_HOOKS)
    if os.path.islink(hooks):  # hooks elsewhere: the link itself is a hook file
        with contextlib.suppress(OSError):
            link = os.lstat(hooks)
            files[f"{relative}/{GIT_HOOKS}"] = stat_key(link)
    elif os.path.isdir(hooks):
        found, found_dirs, whole = walk(hooks, limit=max(0, min(limit, 10_000)))
        dirs.add(f"{relative}/{GIT_HOOKS}")
        for name, hook in found.items():
            files[f"{relative}/{GIT_HOOKS}/{name}"] = hook
        dirs.update(f"{relative}/{GIT_HOOKS}/{name}" for name in found_dirs)
        return len(found) + len(found_dirs) + (0 if whole else 1)
    return 0


__all__ = ["GIT_DIRS", "GIT_FILES", "GIT_HOOKS", "MAX_ENTRIES", "Stat", "git_entries", "walk"]
