"""Regular files replaced by something else: a symlink, a FIFO, a socket or a device.

``ln -sf /dev/null app/x.py`` leaves a path that still exists, with another type: a change of
that file whatever the new type is. When what is there now holds nothing to read — a link to
``/dev/null``, to an empty file, to a folder or to nothing (dangling), or a FIFO, socket or
device in the file's place — the file's content is gone as a deleted file's is: a tracked file
that had content is then listed as emptied, like one truncated to nothing. Nothing here opens a
file (a FIFO would block): the answer comes from ``lstat`` and ``stat`` alone.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping

#: ``(size, mtime_ns, inode, mode)``, as a snapshot keeps it.
_Stat = tuple[int, int, int, int]


def _content_gone(path: str, mode: int) -> bool:
    """Whether nothing of a file's content can be read at ``path`` (of type ``mode``)."""
    if not stat.S_ISLNK(mode):
        return True  # a FIFO, socket or device has no content of its own
    try:
        target = os.stat(path)  # follows the link
    except (OSError, ValueError):
        return True  # dangling, a loop or unreachable
    return not stat.S_ISREG(target.st_mode) or target.st_size == 0


def replaced_files(
    root: str,
    old: Mapping[str, _Stat],
    new: Mapping[str, _Stat],
    modified: Iterable[str],
    tracked: frozenset[str],
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(replaced, gone)`` among ``modified``: the paths that were regular files and are now
    of another type, and of those the tracked ones that had content and whose content can no
    longer be read."""
    replaced: list[str] = []
    gone: list[str] = []
    for path in modified:
        before, after = old.get(path), new.get(path)
        if before is None or after is None:
            continue
        if not stat.S_ISREG(before[3]) or stat.S_ISREG(after[3]):
            continue
        replaced.append(path)
        if path in tracked and before[0] > 0 and _content_gone(os.path.join(root, path), after[3]):
            gone.append(path)
    return tuple(sorted(replaced)), tuple(sorted(gone))
