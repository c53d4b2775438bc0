"""The owner's uncommitted work thrown away file by file: the ``discarded`` effect.

``git reset --hard`` and ``git checkout -- .`` are denied by their text. The same loss written
file by file — a reverse patch of ``git diff`` (``git diff | git apply -R``, ``patch -R``),
``git checkout -- $(git ls-files -m)``, a loop of ``git show HEAD:$f > $f``, a program writing
the committed text back — is to a stat snapshot only files modified. Content tells it apart:

* when the session's workspace is first snapshotted, :func:`uncommitted_files` asks git which
  tracked files carry uncommitted changes (``git status``: the work tree's content differs from
  the index, or the index from ``HEAD``) and keeps the object id of each one's content;
* after a call, :func:`discarded_files` looks at those among the files it modified: one whose
  content is now git's own copy (its blob in ``HEAD`` or in the index) lost the owner's change,
  unless git still holds that change: in the index, in ``HEAD``, in a commit a ref or reflog
  names now that none named before the call (``git stash``, a commit on another branch, ``git
  commit -am``), or in one such commit kept from an earlier call and still named.

A change held so is only put away: :class:`UncommittedWork` remembers where (the commits, at
most :data:`MAX_NEW_COMMITS` a file, and :data:`INDEX`). After every later call, a file that
lost one of those places — no ref or reflog names the commit any more (``git stash drop`` or
``clear``, ``git update-ref -d refs/stash``, a branch deleted and the reflogs expired), or the
index changed — is looked at again whatever the call modified: held nowhere now while its
content is git's copy, the owner's change is thrown away by that call. The history's own
reading (:mod:`.history`) judges commits destroyed, not unnamed: a stash dropped is a commit
that still exists until ``git gc`` prunes it, and the agent's own stash or branch may be let
go; only this module knows the commit held the owner's work.

A file the agent itself changed during the session was clean at its start: undoing that edit
discards nothing. ``git commit -am`` keeps the owner's change in ``HEAD``; ``git add`` and
``git reset -- f`` change the index only; an edit to other text is a modification.

Bounds: at most :data:`MAX_FILES` files are kept (the first by path, until
:data:`MAX_TOTAL_BYTES` are read), each of at most :data:`MAX_BYTES` and a regular file (a
symlink, a larger file, a file deleted in the work tree are left out); a workspace whose
``.git`` is no folder (a linked worktree's, a submodule's) is not asked; and the blob ids are
of the bytes as they are, so a repository whose filters or end-of-line conversion make the work
tree's text differ from git's is not judged. The work carried from one process to another
(:meth:`UncommittedWork.to_json`, :meth:`UncommittedWork.resume`) is held to the same bounds.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import threading
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, NamedTuple

from pytest_harness_audit.inspect.effect_set import Effects
from pytest_harness_audit.inspect.git_env import without_filters
from pytest_harness_audit.inspect.regular_files import read_regular
from pytest_harness_audit.inspect.tracked import GIT_ENV, filter_listing

#: Files with uncommitted changes kept per session at most (the first, by path).
MAX_FILES = 2000
#: A file larger than this is left out (its content is read once at the start, once after).
MAX_BYTES = 4 << 20
#: Bytes read at the session's start at most, all files together (the rest are left out).
MAX_TOTAL_BYTES = 64 << 20
#: Commits a call newly named that are looked in for the owner's change, at most; and commits
#: kept per file as holding it.
MAX_NEW_COMMITS = 32
#: What :attr:`Judged.held` names the index by, beside commits.
INDEX = ":"
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_TIMEOUT_S = 30


def _git(
    root: str, args: list[str], data: bytes | None = None, env: Mapping[str, str] = GIT_ENV
) -> bytes | None:
    """The output of ``git ARGS`` run in ``root`` (``None`` when it failed)."""
    try:
        done = subprocess.run(
            ["git", *args],
            input=data,
            cwd=root,
            env={**os.environ, **env},
            capture_output=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def object_format(root: str) -> str:
    """The hash of the repository at ``root``'s object names: ``sha1`` or ``sha256``."""
    found = _git(root, ["rev-parse", "--show-object-format"])
    return "sha256" if found is not None and found.strip() == b"sha256" else "sha1"


def blob_id(data: bytes, algorithm: str) -> str:
    """The name git gives a blob holding ``data`` (``git hash-object --no-filters``)."""
    digest = hashlib.new(algorithm)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def _content_ids(
    root: str, paths: Iterable[str], algorithm: str, budget: int | None = None
) -> dict[str, str]:
    """The blob id of each of ``paths`` that is a regular file of at most :data:`MAX_BYTES`
    (read without following a link, nor waiting on a FIFO), until ``budget`` bytes are read."""
    ids: dict[str, str] = {}
    for path in paths:
        data = read_regular(os.path.join(root, path), MAX_BYTES, follow=False)
        if data is None or len(data) > MAX_BYTES:
            continue
        if budget is not None:
            budget -= len(data)
            if budget < 0:
                break
        ids[path] = blob_id(data, algorithm)
    return ids


def uncommitted_files(root: str) -> tuple[dict[str, str], str]:
    """``(ids, algorithm)``: the tracked files of the repository at ``root`` whose work-tree
    content differs from the index or the index from ``HEAD``, each with the blob id of its
    work-tree content (see the module doc for what is left out); empty when ``root`` is no
    repository or git cannot tell."""
    if not os.path.isdir(os.path.join(root, ".git")):
        return {}, "sha1"
    env = without_filters(filter_listing(root))  # status cleans stat-dirty files through them
    args = ["status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames"]
    listing = _git(root, [*args, "--ignore-submodules=all"], env=env)
    if listing is None:
        return {}, "sha1"
    changed: list[str] = []
    for entry in listing.decode("utf-8", "surrogateescape").split("\0"):
        status, path = entry[:2], entry[3:]
        if len(entry) > 3 and "D" not in status and "\n" not in path:
            changed.append(path)
    if not changed:
        return {}, "sha1"
    algorithm = object_format(root)
    kept = _content_ids(root, sorted(changed)[:MAX_FILES], algorithm, MAX_TOTAL_BYTES)
    return kept, algorithm


def _copies(root: str, requests: list[str]) -> list[str | None] | None:
    """The id of each blob or commit ``requests`` names (``"HEAD:a.py"``, ``":a.py"``,
    ``"HEAD"``), ``None`` for one git does not have; ``None`` when git cannot be asked."""
    data = "".join(f"{name}\n" for name in requests).encode("utf-8", "surrogateescape")
    out = _git(root, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], data)
    if out is None:
        return None
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    found: list[str | None] = []
    for line in lines[: len(requests)]:
        name, _, kind = line.partition(" ")
        found.append(name if kind in ("blob", "commit") and _SHA.match(name) else None)
    found += [None] * (len(requests) - len(found))
    return found


class Judged(NamedTuple):
    """What :func:`discarded_files` found: the files thrown away, those given back, and where
    git still holds the owner's content of each file whose work tree no longer does: commits,
    and :data:`INDEX` for the index."""

    discarded: tuple[str, ...]
    back: tuple[str, ...]
    held: dict[str, frozenset[str]]


def discarded_files(
    root: str,
    kept: Mapping[str, str],
    modified: Iterable[str],
    algorithm: str,
    new_commits: Iterable[str] = (),
    holders: Mapping[str, Iterable[str]] | None = None,
) -> Judged:
    """Among ``modified``: the files of ``kept`` (path → blob id of the owner's uncommitted
    content) whose content is now git's copy in ``HEAD`` or the index while git holds the
    owner's content nowhere the call left it (the index, ``HEAD``, ``new_commits``: commits
    named after the call and not before, or the file's ``holders``: commits still named that
    held it before); those whose content is the owner's again; and, for each other, the
    commits among ``new_commits``, its ``holders`` and ``HEAD`` that hold the owner's content
    (and :data:`INDEX` when the index does)."""
    paths = sorted(path for path in modified if path in kept)
    if not paths:
        return Judged((), (), {})
    now = _content_ids(root, paths, algorithm)
    back = tuple(path for path in paths if now.get(path) == kept[path])
    changed = [path for path in paths if path in now and now[path] != kept[path]]
    if not changed:
        return Judged((), back, {})
    fresh = _commits(new_commits)
    revs = {path: _commits((holders or {}).get(path, ())) for path in changed}
    revs = {
        path: [*commits, *(c for c in fresh if c not in commits)] for path, commits in revs.items()
    }
    requests = [f"{rev}:{path}" for path in changed for rev in ("HEAD", "", *revs[path])]
    ids = _copies(root, ["HEAD", *requests])
    if ids is None:
        return Judged((), back, {})
    head, start = ids[0], 1
    discarded: list[str] = []
    held: dict[str, frozenset[str]] = {}
    for path in changed:
        found = ids[start : start + 2 + len(revs[path])]
        start += len(found)
        holding = {c for c, i in zip(revs[path], found[2:], strict=True) if i == kept[path]}
        if found[1] == kept[path]:
            holding.add(INDEX)
        if found[0] == kept[path] and head is not None:
            holding.add(head)
        if holding:
            held[path] = frozenset(holding)
        if now[path] in found[:2] and kept[path] not in found:
            discarded.append(path)
    return Judged(tuple(discarded), back, held)


def _commits(names: Iterable[str]) -> list[str]:
    """The first :data:`MAX_NEW_COMMITS` commit names of ``names``, sorted."""
    return sorted(name for name in names if _SHA.match(name))[:MAX_NEW_COMMITS]


def committed_files(
    root: str, kept: Mapping[str, str], paths: Iterable[str], new_commits: Iterable[str]
) -> dict[str, frozenset[str]]:
    """The files of ``kept`` among ``paths`` whose owner's content (blob id) one of
    ``new_commits`` holds, each with those commits: asked of git alone (no file is read)."""
    commits = _commits(new_commits)
    paths = sorted(path for path in paths if path in kept)
    if not commits or not paths:
        return {}
    ids = _copies(root, [f"{commit}:{path}" for path in paths for commit in commits])
    if ids is None:
        return {}
    held: dict[str, frozenset[str]] = {}
    for index, path in enumerate(paths):
        found = ids[index * len(commits) : (index + 1) * len(commits)]
        holding = frozenset(c for c, i in zip(commits, found, strict=True) if i == kept[path])
        if holding:
            held[path] = holding
    return held


def _stat(path: str) -> tuple[int, int, int] | None:
    """``(size, mtime_ns, inode)`` of ``path`` (``None`` when absent)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


class UncommittedWork:
    """One session's uncommitted changes as it started, and those its calls threw away.
    ``learns=False``: never taken, so nothing is judged discarded. A door whose calls each run
    in a process of their own carries the work between them (:meth:`to_json`, :meth:`resume`;
    the hook door's :mod:`~pytest_harness_audit.doors.hook_uncommitted`)."""

    def __init__(self, *, learns: bool = True) -> None:
        self.learns = learns
        self._lock = threading.Lock()
        self._kept: dict[str, str] | None = None
        self._thrown: dict[str, str] = {}
        #: Kept files whose work tree lost the owner's content while git still holds it (in
        #: commits, or :data:`INDEX`), with where.
        self._held: dict[str, frozenset[str]] = {}
        self._index: tuple[int, int, int] | None = None  # the index's stat when last judged
        self._algorithm = "sha1"

    @property
    def learned(self) -> bool:
        """Whether the session's start was taken (:meth:`learn`)."""
        return self._kept is not None

    def learn(self, root: str) -> None:
        """Take the uncommitted changes of the workspace at ``root`` now, unless taken already:
        at the session's first snapshot, before any call ran."""
        if self._kept is not None or not self.learns:
            return
        kept, algorithm = uncommitted_files(root)
        with self._lock:
            if self._kept is None:
                self._kept, self._algorithm = kept, algorithm

    def judged(
        self,
        root: str,
        effects: Effects,
        before: frozenset[str] | None,
        after: frozenset[str] | None,
    ) -> Effects:
        """``effects`` (of a call, between the refs ``before`` and ``after`` it) with the
        owner's changes it threw away (:attr:`Effects.discarded`, :attr:`Effects.discarded_all`):
        one counts once; one given back (its content the owner's again) counts again if thrown
        away later; a file deleted is judged as a deletion and no longer watched. A change kept
        only in commits (a stash, another branch) or in the index is thrown away by the call
        after which no ref or reflog names any of those commits and the index changed, whatever
        files that call modified."""
        index = _stat(os.path.join(root, ".git", "index"))
        with self._lock:
            kept_now = dict(self._kept or {})
            watched = {**kept_now, **self._thrown}
            held = dict(self._held)
            moved, self._index = index != self._index, index

        def holding(places: frozenset[str]) -> frozenset[str]:
            # where git may still hold a file's change: its commits still named (all of them
            # when the refs are unknown), the index unless it changed
            commits = places - {INDEX} if after is None else places & after
            return commits | (places & {INDEX} if not moved else frozenset())

        # a file that lost one of its holders is looked at again (where else is it held?)
        candidates = {*effects.modified, *(p for p, c in held.items() if holding(c) != c)}
        new = (after or frozenset()) - (before or frozenset())
        if not watched or not (candidates or effects.tracked_deleted or new):
            return effects
        named = {p: holding(c) for p, c in held.items()}
        found = discarded_files(root, watched, candidates, self._algorithm, new, named)
        # the owner's changes committed while the work tree keeps them (``git commit -am``)
        committed = committed_files(root, kept_now, set(kept_now) - candidates, new) if new else {}
        with self._lock:
            kept = self._kept if self._kept is not None else {}
            for path in found.back:
                if path in self._thrown:
                    kept[path] = self._thrown.pop(path)
            fresh = tuple(path for path in found.discarded if path in kept)
            for path in fresh:
                self._thrown[path] = kept.pop(path)
            for path in effects.tracked_deleted:
                kept.pop(path, None)
            for path in candidates:
                self._held.pop(path, None)
            self._held.update((p, c) for p, c in found.held.items() if p in kept)
            for path, commits in committed.items():
                if path in kept:
                    merged = sorted(self._held.get(path, frozenset()) | commits)
                    self._held[path] = frozenset(merged[:MAX_NEW_COMMITS])
            every = bool(fresh) and not kept and len(self._thrown) >= 2
        if not fresh:
            return effects
        return replace(effects, discarded=fresh, discarded_all=every)

    def to_json(self) -> dict[str, Any] | None:
        """What the work holds, for :meth:`resume` in another process (``None``: not taken)."""
        with self._lock:
            if self._kept is None:
                return None
            return {
                "algorithm": self._algorithm,
                "kept": dict(sorted(self._kept.items())),
                "thrown": dict(sorted(self._thrown.items())),
                "held": {path: sorted(places) for path, places in sorted(self._held.items())},
                "index": None if self._index is None else list(self._index),
            }

    def resume(self, data: object) -> None:
        """Take up what :meth:`to_json` gave: ``ValueError`` when ``data`` is no such state or
        is past the bounds (more than :data:`MAX_FILES` files, a file in more than twice
        :data:`MAX_NEW_COMMITS` places)."""
        if not isinstance(data, Mapping):
            raise ValueError("not an object")
        algorithm = data.get("algorithm")
        if algorithm not in ("sha1", "sha256"):
            raise ValueError(f"unknown object format {algorithm!r}")
        kept, thrown = _ids(data.get("kept"), "kept"), _ids(data.get("thrown"), "thrown")
        if len(kept) + len(thrown) > MAX_FILES:
            raise ValueError(f"more than {MAX_FILES} files")
        held = data.get("held")
        if not isinstance(held, Mapping):
            raise ValueError("held: not an object")
        if len(held) > MAX_FILES:
            raise ValueError(f"held: more than {MAX_FILES} files")
        places: dict[str, frozenset[str]] = {}
        for path, where in held.items():
            _check_path(path, "held")
            if (
                not isinstance(where, list)
                or len(where) > 2 * MAX_NEW_COMMITS + 2
                or not all(isinstance(p, str) and (p == INDEX or _SHA.match(p)) for p in where)
            ):
                raise ValueError(f"held: the places of {path!r}")
            places[path] = frozenset(where)
        index = data.get("index")
        if index is not None and not (
            isinstance(index, list)
            and len(index) == 3
            and all(isinstance(n, int) and not isinstance(n, bool) for n in index)
        ):
            raise ValueError("index: not a stat")
        with self._lock:
            self._kept, self._thrown, self._held = kept, thrown, places
            self._index = None if index is None else (index[0], index[1], index[2])
            self._algorithm = str(algorithm)


def _check_path(path: object, name: str) -> None:
    """``ValueError`` unless ``path`` is a path as :func:`uncommitted_files` keeps them."""
    if not isinstance(path, str) or not path or "\n" in path or os.path.isabs(path):
        raise ValueError(f"{name}: not a path: {path!r}")


def _ids(data: object, name: str) -> dict[str, str]:
    """``path → blob id`` as :meth:`UncommittedWork.to_json` keeps it (``ValueError``: not)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{name}: not an object")
    for path, blob in data.items():
        _check_path(path, name)
        if not isinstance(blob, str) or not _SHA.match(blob):
            raise ValueError(f"{name}: not an object id for {path!r}")
    return dict(data)


__all__ = [
    "INDEX",
    "MAX_BYTES",
    "MAX_FILES",
    "Judged",
    "UncommittedWork",
    "blob_id",
    "committed_files",
    "discarded_files",
    "uncommitted_files",
]
