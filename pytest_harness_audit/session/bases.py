"""Where a workspace's changes count from, kept where the agent's git does not reach.

Every workspace :func:`.workspace.create_workspace` makes is a copy of a seed: a repository the
process keeps outside every workspace, whose one commit is the workspace's initial commit. The
workspace itself holds no ref of the auditor's, so its history is the agent's and the user's
alone: a branch deleted, its reflog expired and its commits pruned (``git gc --prune=now``)
loses the initial commit as it would in any repository, and ``history_destroyed`` says so
(:mod:`pytest_harness_audit.inspect.history`). No ref in it moves or removes the base either.

The base is recorded here instead, by the workspace's path: the commit and the seed whose object
store holds it, its tree and its blobs. :func:`.workspace.changed_files` and
:func:`.workspace.diff` read the base's objects from that store alone (:func:`store_env`), so
no ref, alternate or object the agent writes in the workspace changes what they compare with,
and a base pruned from the workspace is still compared with. A change made to a seed during a
call is judged by :mod:`.seed_watch`; a seed gone (the cache drops one found changed) ends a
comparison with a :class:`~.workspace.WorkspaceError`, never an empty diff.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Base:
    """A workspace's initial ``commit`` and the ``seed`` folder whose repository holds it."""

    commit: str
    seed: str

    @property
    def objects(self) -> str:
        """The seed's object store."""
        return os.path.join(self.seed, ".git", "objects")


_BASES: dict[str, Base] = {}
_LOCK = threading.Lock()


def _key(root: str | os.PathLike[str]) -> str:
    return os.path.realpath(root)


def record(root: str | os.PathLike[str], base: Base) -> None:
    """Keep ``base`` as the base of the workspace at ``root`` (made now)."""
    with _LOCK:
        _BASES[_key(root)] = base


def recorded(root: str | os.PathLike[str] | None) -> Base | None:
    """The base recorded for the workspace at ``root``, else ``None`` (a repository this
    process did not make)."""
    if root is None:
        return None
    with _LOCK:
        return _BASES.get(_key(root))


def store_env(base: Base) -> dict[str, str] | None:
    """The environment entries of a git that reads objects from ``base``'s seed alone;
    ``None`` when the seed's store is gone."""
    if not os.path.isdir(base.objects) or os.path.islink(base.objects):
        return None
    return {
        "GIT_OBJECT_DIRECTORY": base.objects,
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": "",
    }


__all__ = ["Base", "record", "recorded", "store_env"]
