"""Hard links to protected files, seen before a write runs.

A hard link is a second name of the same file: ``cp -l .git/config notes.cfg`` (or
``os.link`` in inline code) and a later Write of ``notes.cfg`` change ``.git/config``, though no
rule about ``.git/config`` reads ``notes.cfg``. :func:`linked_params` finds the parameters of a
call that name such a link (an existing file with more than one link whose inode is a protected
file's: a persona file, a file git or Python runs code from, the host's settings, a ``protect:``
file) and gives the parameters with the protected file's name in their place, for the policy to
judge the call as the write of that file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from typing import Any

from pytest_harness_audit.inspect.effects import WorkspaceSnapshot

#: Parameter values longer than this are no paths.
_MAX_PATH = 4096
#: Parameters that hold what is written, not where.
_CONTENT_KEYS = frozenset({"content", "new_string", "old_string", "new_source", "text", "edits"})


def linked_params(
    root: str, params: Mapping[str, Any], snapshot: Callable[[], WorkspaceSnapshot]
) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """``(params with each link's protected file in its place, ((link, protected file), …))``;
    the links are empty (and ``snapshot`` is never taken) when no parameter names a file of
    the workspace that has more than one link."""
    linked: list[tuple[str, str]] = []
    taken: WorkspaceSnapshot | None = None
    changed: dict[str, Any] = {}
    for key, value in params.items():
        if key in _CONTENT_KEYS or not isinstance(value, str) or not value:
            continue
        if len(value) > _MAX_PATH or "\n" in value:
            continue
        path = os.path.join(root, value)
        try:
            info = os.lstat(path)
        except (OSError, ValueError):
            continue
        if info.st_nlink < 2 or not stat.S_ISREG(info.st_mode):
            continue
        if taken is None:
            taken = snapshot()
        relative = os.path.relpath(path, root).replace(os.sep, "/")
        protected = taken.protected_alias(value)
        if protected is None:  # a link the snapshot has not seen: its inode decides
            protected = taken.protected_inodes.get(info.st_ino)
        if protected is not None and protected != relative:
            changed[key] = protected
            linked.append((value, protected))
    return {**params, **changed}, tuple(linked)
