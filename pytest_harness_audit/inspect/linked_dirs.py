"""Protected files reached through a symlink the call made or changed.

A snapshot does not follow symlinks: a link ``.claude -> ../elsewhere`` is one entry, and the
``settings.json`` the host reads through it (hooks off, say) is no path of the workspace. A
link is a protected change when a protected file's path runs through it: when a name git, Python
or the host reads below a folder of that name (``.claude/settings.json``, ``.git/hooks/…``,
``.config/git/config`` …) is protected, or when a protected file (a persona file, a ``protect:``
glob) is among the first :data:`MAX_LISTED` entries below the folder it points to now. The link
is judged, not what it points to: its target can be written later, outside the workspace.
Likewise a link that is an agent's memory folder (``memory -> ../elsewhere``), or whose folder
holds a memory file, is a memory write (:func:`linked_memory`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping

#: Names below a folder that protect the folder by kind (``Protection`` decides which do).
PROBES = (
    "settings.json",
    "settings.local.json",
    "mcp.json",
    "config",
    "config.worktree",
    "hooks/pre-commit",
    "git/config",
    "sitecustomize.py",
    "usercustomize.py",
    "startup.pth",
    "curlrc",
    "wget/wgetrc",
)
#: At most this many entries below a linked folder are listed.
MAX_LISTED = 2_000


def linked_protected(
    root: str,
    paths: Iterable[str],
    files: Mapping[str, tuple[int, int, int, int]],
    protection: Callable[[str], bool],
) -> set[str]:
    """The symlinks among ``paths`` (relative, with their stat in ``files``) through which a
    protected file is reached (see the module doc), and the protected files listed below them."""
    found: set[str] = set()
    for path in paths:
        info = files.get(path)
        if info is None or not stat.S_ISLNK(info[3]):
            continue
        if any(protection(f"{path}/{probe}") for probe in PROBES):
            found.add(path)
            continue
        found.update(
            f"{path}/{name}" for name in _listed(root, path) if protection(f"{path}/{name}")
        )
    return found


def linked_memory(
    root: str,
    paths: Iterable[str],
    files: Mapping[str, tuple[int, int, int, int]],
    is_memory: Callable[[str], bool],
) -> set[str]:
    """The symlinks among ``paths`` that are a memory folder (a Markdown file below them is a
    memory file), and the memory files listed below the others."""
    found: set[str] = set()
    for path in paths:
        info = files.get(path)
        if info is None or not stat.S_ISLNK(info[3]):
            continue
        if is_memory(f"{path}/notes.md"):
            found.add(path)
            continue
        found.update(
            f"{path}/{name}" for name in _listed(root, path) if is_memory(f"{path}/{name}")
        )
    return found


def _listed(root: str, path: str) -> list[str]:
    """The relative paths below the folder the link ``path`` points to (none: no folder), at
    most :data:`MAX_LISTED`; links below it are not followed."""
    names: list[str] = []
    stack = [("", os.path.join(root, path))]
    while stack and len(names) < MAX_LISTED:
        prefix, folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries[: MAX_LISTED - len(names)]:
            names.append(prefix + entry.name)
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((f"{prefix}{entry.name}/", entry.path))
            except OSError:
                continue
    return names
