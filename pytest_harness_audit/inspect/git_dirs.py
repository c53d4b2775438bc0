"""The git directories outside a workspace that its git commands use.

A workspace's ``.git`` is usually a folder, and a snapshot keeps its key entries. It may instead
be a file, ``gitdir: DIR``: a linked worktree (``git worktree add``: ``DIR`` is
``<main>/.git/worktrees/<name>``, whose ``commondir`` names ``<main>/.git``), a checkout made
with ``--separate-git-dir``, or a submodule's checkout. Git then reads its configuration, hooks
and submodules' git directories there, outside the workspace, where no snapshot looks, and a
hook planted in ``<main>/.git/hooks`` runs at the worktree's next commit.
"""

from __future__ import annotations

import os

#: Most bytes read of a ``.git`` file or a ``commondir`` file (each holds one path).
_POINTER_BYTES = 4096


def _pointer(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_POINTER_BYTES)
    except OSError:
        return None
    text = data.decode("utf-8", "surrogateescape").strip().split("\n", 1)[0].strip()
    return text or None


def linked_git_dirs(root: str | os.PathLike[str]) -> tuple[str, ...]:
    """The git directory a ``.git`` file at ``root`` names and the common one it names in turn
    (``commondir``), absolute and without repeats; empty when ``.git`` is no such file."""
    top = os.path.abspath(os.fspath(root))
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git) or not os.path.isfile(dot_git):
        return ()
    pointer = _pointer(dot_git)
    if pointer is None or not pointer.startswith("gitdir:"):
        return ()
    git_dir = os.path.normpath(os.path.join(top, pointer[len("gitdir:") :].strip()))
    found = [git_dir]
    common = _pointer(os.path.join(git_dir, "commondir"))
    if common is not None:
        common_dir = os.path.normpath(os.path.join(git_dir, common))
        if common_dir != git_dir:
            found.append(common_dir)
    return tuple(found)


__all__ = ["linked_git_dirs"]
