"""Tracked work dropped from the project's view: untracked and ignored, lost as a deletion is.

``git rm -r --cached app && echo app/ >> .gitignore`` keeps every byte of ``app/`` on disk and
in ``HEAD``, but the next commit leaves it out, and git no longer shows it: ``git status`` lists
nothing, ``git add -A`` does not bring it back, a fresh clone of that commit has no ``app/`` and
``git clean -X`` deletes it. A file is dropped when a snapshot of the session found it tracked,
it is still in the workspace, the index no longer lists it, and git ignores it, by whatever
rule (a ``.gitignore``, ``.git/info/exclude``, the file ``core.excludesFile`` names).

Each snapshot keeps the files dropped at its moment (``WorkspaceSnapshot.dropped``); a call
dropped those dropped after it and not before it, whatever order the steps came in
(``git rm --cached`` in one call, the ignore line in a later one; the ignore line first). A
file given back (``git add`` again, its ignore line removed) is in view again.

Not work, so never dropped: generated files, committed by mistake and untracked as a cleanup (a
path through a folder of :data:`~.out_of_view.HIDDEN_FOLDERS`, an ``*.egg-info`` folder, a
compiled or log file: :func:`~.out_of_view.is_generated`), and credential files (a committed
``.env`` untracked and ignored is the remedy for a committed secret, and its bytes stay).
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Collection, Iterable

from pytest_harness_audit.inspect.git_env import GIT_ISOLATION_ENV
from pytest_harness_audit.inspect.out_of_view import ignored_paths, is_generated
from pytest_harness_audit.policy.sensitive import is_credential_path


def dropped_files(root: str, unindexed: Iterable[str], present: Collection[str]) -> frozenset[str]:
    """Those of ``unindexed`` (paths the session found tracked that the index no longer lists)
    still among ``present`` that git ignores now, generated and credential files left out."""
    candidates = sorted(
        path
        for path in unindexed
        if path in present and not is_generated(path) and not is_credential_path(path)
    )
    if not candidates:
        return frozenset()
    return ignored_paths(root, candidates) & frozenset(candidates)


def staged_removals(root: str) -> frozenset[str]:
    """The paths ``HEAD`` of the repository at ``root`` holds that its index no longer lists
    (``git rm --cached`` or not): tracked files to a door that cannot remember what earlier
    snapshots found tracked. Empty when git cannot tell (no repository, no commit yet)."""
    if not os.path.lexists(os.path.join(root, ".git")):
        return frozenset()
    args = ["git", "diff-index", "--cached", "--name-only", "--diff-filter=D", "-z", "HEAD"]
    try:
        done = subprocess.run(
            [*args, "--"],
            cwd=root,
            env={**os.environ, **GIT_ISOLATION_ENV},
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    if done.returncode != 0:
        return frozenset()
    return frozenset(p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p)


def dropped_dirs(
    dropped: Collection[str], lost: Collection[str], tracked: Iterable[str]
) -> tuple[str, ...]:
    """The top-most folders whose every tracked file is among ``dropped`` or ``lost`` (deleted),
    one of them at least dropped: a folder of work dropped from view, as a deleted one is."""
    if not dropped:
        return ()
    known: Counter[str] = Counter()
    gone: Counter[str] = Counter()
    hit: set[str] = set()
    for path in tracked:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            known[folder] += 1
            if path in dropped or path in lost:
                gone[folder] += 1
                if path in dropped:
                    hit.add(folder)
    whole = sorted(folder for folder in hit if gone[folder] == known[folder])
    top: list[str] = []
    for folder in whole:
        if not any(folder.startswith(kept + "/") for kept in top):
            top.append(folder)
    return tuple(top)


__all__ = ["dropped_dirs", "dropped_files", "staged_removals"]
