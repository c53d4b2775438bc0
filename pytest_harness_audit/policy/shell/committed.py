"""The credential files a workspace's repository commits, as git commands that print or copy
committed files read them (:mod:`.git_copies`).

The files git's index names (a plain version 2 or 3 index of the workspace's own ``.git``
folder) are what the next commit holds and, but for a file removed since, what the history
holds: those that look like credentials
(:func:`~pytest_harness_audit.policy.sensitive.is_credential_path`) are the committed secrets. A
workspace with no repository of its own commits nothing the reading can know; an index it cannot
read (version 4, too large, a ``.git`` file pointing elsewhere) leaves the work tree's credential
files as the candidates, as ``git archive`` reads them.
"""

from __future__ import annotations

import os
import posixpath
from typing import Final

from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.sensitive import is_credential_path
from pytest_harness_audit.policy.shell.context import Context

#: Most bytes of an index read, and most entries of a work tree walked instead.
_MAX_INDEX: Final = 4 * 1024 * 1024
_MAX_WALKED: Final = 20_000
#: The committed credential files of the indexes read, by path: the index's signature (inode,
#: size, modification and change times) and the files.
_KNOWN: Final[dict[str, tuple[tuple[int, int, int, int], tuple[str, ...]]]] = {}
_MAX_KNOWN: Final = 64
#: Folders of the work tree no commit of the workspace holds secrets in (and that can be huge).
_SKIPPED: Final = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache"})


def committed_credentials(ctx: Context, folder: str, pathspecs: list[str]) -> list[str]:
    """The committed credential files under ``pathspecs`` (relative to ``folder``, git's
    ``-C``; none: every file), as paths from where the command runs."""
    root = ctx.workspace_root
    if not root:
        return []
    real_root = os.path.realpath(root)
    names = _index_credentials(real_root)
    if names is None:
        names = _walked_credentials(real_root)
        if names is None:
            ctx.unknown("git reads the committed files of a work tree too large to look at")
            return []
    here = ctx.real_path(".") or real_root
    base = os.path.normpath(os.path.join(here, folder)) if folder else here
    found: list[str] = []
    for name in names:
        full = os.path.join(real_root, name)
        if _selected(os.path.relpath(full, base), name, pathspecs):
            found.append(os.path.relpath(full, here))
    return found


def repository_copies(ctx: Context, folders: list[str]) -> list[str]:
    """The committed credential files a copy of ``folders`` takes with the repository: the
    workspace's ``.git`` (or its ``objects``) named. A copy of the whole workspace reads the
    credential files of its work tree (:mod:`.tree_reads`), not its history."""
    root = ctx.workspace_root
    if not root:
        return []
    real_root = os.path.realpath(root)
    git_dir = os.path.join(real_root, ".git")
    for folder in folders:
        real = ctx.workspace_folder(folder)
        if real is None:
            continue
        real = os.path.normpath(real)
        objects = os.path.join(git_dir, "objects")
        if real in (git_dir, objects) or real.startswith(objects + os.sep):
            return committed_credentials(ctx, "", [])
    return []


def _index_credentials(real_root: str) -> list[str] | None:
    """The credential files git's index names; ``[]`` with no repository (or no index yet),
    ``None`` when the index cannot be read plainly."""
    git_dir = os.path.join(real_root, ".git")
    if not os.path.lexists(git_dir):
        return []
    if not os.path.isdir(git_dir):
        return None  # a `.git` file: the repository is elsewhere
    path = os.path.join(git_dir, "index")
    try:
        status = os.stat(path)
        signature = (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
        known = _KNOWN.get(path)
        if known is not None and known[0] == signature:
            return list(known[1])
        with open(path, "rb") as handle:
            data = handle.read(_MAX_INDEX + 1)
    except FileNotFoundError:
        return []
    except OSError:
        return None
    names = index_names(data) if len(data) <= _MAX_INDEX else None
    if names is None:
        return None
    found = [name for name in names if is_credential_path(name)]
    if len(_KNOWN) >= _MAX_KNOWN:
        _KNOWN.clear()
    _KNOWN[path] = (signature, tuple(found))
    return found


def index_names(data: bytes) -> list[str] | None:
    """The paths of a version 2 or 3 index's entries; ``None`` for another format."""
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    if version not in (2, 3):
        return None
    count = int.from_bytes(data[8:12], "big")
    names: list[str] = []
    at = 12
    for _ in range(count):
        if at + 62 > len(data):
            return None
        flags = int.from_bytes(data[at + 60 : at + 62], "big")
        start = at + 62 + (2 if version == 3 and flags & 0x4000 else 0)
        end = data.find(b"\0", start)
        if end < 0:
            return None
        names.append(data[start:end].decode("utf-8", "surrogateescape"))
        at += (end - at + 8) & ~7  # each entry is padded with 1 to 8 NULs to a multiple of 8
    return names


def _walked_credentials(real_root: str) -> list[str] | None:
    """The work tree's credential files (paths from its top); ``None``: too many entries."""
    found: list[str] = []
    budget = _MAX_WALKED
    for current, folders, files in os.walk(real_root):
        budget -= len(folders) + len(files)
        if budget < 0:
            return None
        folders[:] = sorted(f for f in folders if f not in _SKIPPED)
        relative = os.path.relpath(current, real_root)
        for name in files:
            path = name if relative == "." else posixpath.join(relative, name)
            if is_credential_path(path):
                found.append(path)
    return sorted(found)


def _selected(relative: str, top: str, pathspecs: list[str]) -> bool:
    """Whether a file (``relative`` to where git runs, ``top`` from the repository's top) is
    under one of ``pathspecs`` (none, or only exclusions: every file is)."""
    chosen = False
    for spec in pathspecs:
        path = relative
        if spec.startswith((":!", ":^", ":(exclude", ":(exc")):
            continue  # an exclusion only narrows: left out, the file counts (as read)
        chosen = True
        if spec.startswith(":("):
            magic, _, spec = spec[2:].partition(")")
            path = top if "top" in magic else relative
            if "icase" in magic:
                spec, path = spec.lower(), path.lower()
        elif spec.startswith(":/"):
            spec, path = spec[2:], top
        spec = posixpath.normpath(spec) if spec else "."
        if spec == ".":
            if path != ".." and not path.startswith("../"):
                return True  # every file under where git runs
            continue
        if path == spec or path.startswith(spec.rstrip("/") + "/"):
            return True
        if wildcards.fnmatchcase(path, spec) or wildcards.fnmatchcase(
            path, spec.rstrip("/") + "/*"
        ):
            return True
    return not chosen


__all__ = ["committed_credentials", "index_names", "repository_copies"]
