"""Asking git about a workspace's object store alone, whatever the agent did to the rest of it.

Whether a commit still exists is a question about ``.git/objects`` only. Asked in the
repository itself, git reads its ``HEAD``, ``config`` and ``refs`` first, and an agent can
spoil any of them: ``HEAD`` written over with junk (a rewrite of ``.git/HEAD`` is git's
busywork, no effect of its own), ``core.repositoryformatversion = 99`` in ``.git/config``, the
``refs`` folder swapped. git then refuses to run at all, and a check that read a refusal as
"nothing is lost" let the objects be deleted in the same call unseen. So the check runs in a
git directory of the auditor's own, made for the one question and removed after it (no
configuration, no refs, an unborn ``HEAD``), with ``GIT_OBJECT_DIRECTORY`` naming the
workspace's store: only the objects (and the alternate stores they name) are read.

:func:`missing_objects` tells which of some objects no longer exist; :func:`broken_below` which
objects the history of some commits needs are gone (a commit's parents, trees and blobs) while
the commits themselves stay: the store emptied of everything but the tips the refs name.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator

from pytest_harness_audit.inspect.git_env import GIT_ISOLATION_ENV

#: Seconds a check may take; beyond, it tells nothing.
TIMEOUT_S = 10.0
#: Variables of the calling process that would point git elsewhere than the store asked about.
_REDIRECTS = (
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_REPLACE_REF_BASE",
    "GIT_SHALLOW_FILE",
    "GIT_CEILING_DIRECTORIES",
)


@contextlib.contextmanager
def store_environment(objects: str, names: Iterable[str]) -> Iterator[dict[str, str]]:
    """The environment of a git that reads the object store ``objects`` (a ``.git/objects``
    folder) and nothing else of its repository; the object format is told by ``names`` (any
    name of 64 hex digits: SHA-256)."""
    sha256 = any(len(name) == 64 for name in names)
    with tempfile.TemporaryDirectory(prefix="harness-audit-objects-") as private:
        os.mkdir(os.path.join(private, "refs"))
        os.mkdir(os.path.join(private, "objects"))
        with open(os.path.join(private, "HEAD"), "w", encoding="ascii") as head:
            head.write("ref: refs/heads/unborn\n")
        with open(os.path.join(private, "config"), "w", encoding="ascii") as config:
            if sha256:
                config.write("[core]\n\trepositoryformatversion = 1\n")
                config.write("[extensions]\n\tobjectformat = sha256\n")
            else:
                config.write("[core]\n\trepositoryformatversion = 0\n")
        env = {**os.environ, **GIT_ISOLATION_ENV}
        for name in _REDIRECTS:
            env.pop(name, None)
        env.update(
            {
                "GIT_DIR": private,
                "GIT_OBJECT_DIRECTORY": os.path.abspath(objects),
                "GIT_NO_REPLACE_OBJECTS": "1",
            }
        )
        yield env


def _git(
    objects: str, names: list[str], args: list[str]
) -> subprocess.CompletedProcess[str] | None:
    try:
        with store_environment(objects, names) as env:
            return subprocess.run(
                ["git", *args],
                input="".join(f"{name}\n" for name in names),
                capture_output=True,
                text=True,
                env=env,
                cwd=env["GIT_DIR"],
                timeout=TIMEOUT_S,
                check=False,
            )
    except (OSError, subprocess.SubprocessError):
        return None


def missing_objects(objects: str, names: Iterable[str]) -> tuple[str, ...] | None:
    """Those of ``names`` (object names) the store ``objects`` no longer holds, sorted;
    ``None`` when git could not tell."""
    wanted = sorted(set(names))
    if not wanted:
        return ()
    done = _git(objects, wanted, ["cat-file", "--batch-check=%(objectname) %(objecttype)"])
    if done is None or done.returncode != 0:
        return None
    return tuple(
        sorted(
            line.split(" ", 1)[0] for line in done.stdout.splitlines() if line.endswith(" missing")
        )
    )


#: Commits a walk is started from one by one at most, to tell which lost their history.
MAX_WALKED_ALONE = 64


def _partial(objects: str) -> bool:
    """Whether the store may lack objects by design: a partial clone's promisor packs, or a
    shallow repository's boundary (whose parents were never fetched)."""
    git = os.path.dirname(os.path.abspath(objects))
    if os.path.lexists(os.path.join(git, "shallow")):
        return True
    with contextlib.suppress(OSError), os.scandir(os.path.join(objects, "pack")) as entries:
        return any(entry.name.endswith(".promisor") for entry in entries)
    return False


def _walk(objects: str, tips: list[str]) -> tuple[bool, set[str]] | None:
    """``(whole, missing)`` of the history of ``tips``: whether git walked it to its end,
    and the trees and blobs it found missing on the way; ``None`` when git could not run."""
    args = ["rev-list", "--objects", "--no-object-names", "--missing=print", "--stdin"]
    done = _git(objects, tips, args)
    if done is None:
        return None
    missing = {line[1:] for line in done.stdout.splitlines() if line.startswith("?")}
    return done.returncode == 0, missing


def broken_below(objects: str, tips: Iterable[str]) -> tuple[str, ...] | None:
    """Those of ``tips`` (commits the store ``objects`` still holds) whose history is no
    longer whole: a parent commit, a tree or a blob it reaches is gone; sorted. ``None`` when
    git could not tell, or the store may lack objects by design (a partial or shallow clone)."""
    wanted = sorted(set(tips))
    if not wanted or _partial(objects):
        return None if wanted else ()
    walked = _walk(objects, wanted)
    if walked is None:
        return None
    whole, missing = walked
    if whole and not missing:
        return ()
    if len(wanted) > MAX_WALKED_ALONE:
        return tuple(wanted)  # some of them: which, a walk of each would tell
    broken = []
    for tip in wanted:
        alone = _walk(objects, [tip])
        if alone is None or not alone[0] or alone[1]:
            broken.append(tip)
    return tuple(broken)
