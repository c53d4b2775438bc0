"""Committed history lost for good: the ``history_destroyed`` effect.

A snapshot keeps the commits the repository's refs (branches, tags, ``HEAD``, ``packed-refs``,
the ``HEAD`` and refs of each linked worktree under ``.git/worktrees``) and reflogs
(``.git/logs``, a linked worktree's ``logs``) point at, read from the files, without running git.
Only when some of them are gone after a call (a ref deleted or moved, a reflog expired) does
:func:`lost_commits` ask git whether those commits still exist as objects. The workspaces the
harness builds hold no ref of the auditor's (:mod:`pytest_harness_audit.session.bases`): only
what the user sees keeps a commit, the initial one too. A commit that was reachable and no
longer exists cannot be recovered: an orphan branch replacing ``main``,
``git update-ref -d``, ``git branch -D``, then ``git reflog expire --expire=now --all`` and
``git gc --prune=now``. A deleted branch whose commits are kept by another ref, the reflog or
the object store (``git branch -d``, ``git commit --amend``, ``git rebase``, ``git gc``) loses
nothing.

Objects deleted while the refs stay (``.git/objects/??/*`` and the packs unlinked file by file)
leave every ref naming a commit git can no longer read. A snapshot keeps the stat of
``.git/objects`` and of each folder in it (:func:`object_stamp`: the loose-object folders,
``pack``, ``info``), which changes whenever objects are added or removed; only then are all the
commits named before the call checked, and those missing after it are lost too. ``git gc``,
``repack`` and ``prune`` keep every commit a ref or recent reflog entry names. Git writes an
object file once and never again, so the stamp also holds the stat of each pack file and loose
object (up to :data:`MAX_STAMPED_OBJECTS`): one overwritten in place, which git then reads as
missing, is a change of the store too. The stamp holds change times, which no ``touch`` can set
back.

History can also be hidden while every object stays: a replacement ref (``git replace``, ``git
replace --graft``, a file under ``.git/refs/replace``), a ``.git/shallow`` boundary or a
``.git/info/grafts`` line makes ``git log`` show other commits (or none) in place of the
committed ones. And the objects can be moved out of the workspace while git still reads them:
an ``objects/info/alternates`` entry names another store, whose removal later loses them where
no snapshot of the workspace looks. A reading of the refs keeps those masks beside the commits
(``"replace <sha>"``, ``"shallow <sha>"``, ``"graft <sha>"``, ``"alternates <path>"``);
:func:`hidden_history` lists the ones a call added.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Iterable

from pytest_harness_audit.inspect.object_store import broken_below, missing_objects
from pytest_harness_audit.inspect.regular_files import read_regular

#: A full object name (SHA-1 or SHA-256).
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_NULL = re.compile(r"^0+$")
#: Tips and reflog entries read per snapshot at most; a larger repository is not judged.
MAX_TIPS = 50_000
#: A reflog entry older than this is left out: an ordinary ``git gc`` expires the entries of
#: unreachable commits after 30 days (``gc.reflogExpireUnreachable``) and prunes those commits,
#: which loses nothing anyone could still reach.
REFLOG_DAYS = 28
#: A reflog line: the old and new object names, then the identity and its time.
_ENTRY = re.compile(r"^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) [^\n>]*> (\d+) ", re.MULTILINE)


def _sha(text: str) -> str | None:
    text = text.strip()
    return text if _SHA.match(text) and not _NULL.match(text) else None


def _read(path: str) -> str:
    # a FIFO the agent made where a ref or a mask is read is skipped, not waited on
    data = read_regular(path, 4_000_000)
    return "" if data is None else data[:4_000_000].decode("utf-8", "replace")


def _files(top: str) -> Iterable[str]:
    for folder, _, names in os.walk(top):
        for name in names:
            yield os.path.join(folder, name)


#: Reflog files read, by path: their stat and day of reading, and the commits they name. A
#: reflog only grows, and an unchanged file (same size, time and inode) the same day names the
#: same commits, so a snapshot re-reads only the files a call changed.
_READ: dict[str, tuple[tuple[int, int, int, int], frozenset[str]]] = {}
_READ_LIMIT = 1024


def _reflog_tips(path: str, day: int) -> frozenset[str]:
    try:
        info = os.stat(path)
    except OSError:
        return frozenset()
    key = (info.st_size, info.st_mtime_ns, info.st_ino, day)
    known = _READ.get(path)
    if known is not None and known[0] == key:
        return known[1]
    recent = (day + 1) * 86_400 - REFLOG_DAYS * 86_400
    tips = frozenset(
        sha
        for entry in _ENTRY.finditer(_read(path))
        if int(entry.group(3)) >= recent
        for sha in entry.group(1, 2)
    )
    if len(_READ) >= _READ_LIMIT:
        _READ.clear()
    _READ[path] = (key, tips)
    return tips


#: What a mask entry of a reading starts with (it holds a space; a commit name does not).
MASKS = ("replace ", "shallow ", "graft ", "alternates ")
#: The file naming object stores outside the repository that git reads objects from too.
ALTERNATES = os.path.join("objects", "info", "alternates")
_REPLACE = "refs/replace/"
#: The mask of an alternates list that is there but no regular file (git would wait on it).
UNREADABLE_ALTERNATES = "<not a regular file>"


def _masks(git: str) -> set[str]:
    """The shallow boundary, grafts and alternate object stores of the ``.git`` directory
    ``git`` (see the module doc)."""
    masks: set[str] = set()
    for kind, name in (("shallow", "shallow"), ("graft", os.path.join("info", "grafts"))):
        for line in _read(os.path.join(git, name)).splitlines():
            if (sha := _sha(line.split(" ", 1)[0])) is not None:
                masks.add(f"{kind} {sha}")
    for line in _read(os.path.join(git, ALTERNATES)).splitlines():
        if line.strip() and not line.startswith("#"):
            masks.add(f"alternates {line.strip()}")
    if _alternates_unreadable(git):  # git waits on it: every object is out of reach
        masks.add(f"alternates {UNREADABLE_ALTERNATES}")
    return masks


#: Linked worktrees (``git worktree add``) read at most.
_MAX_WORKTREES = 256


def _linked_worktrees(git: str) -> list[str]:
    """The folders of the linked worktrees under ``git``/``worktrees`` (symlinks left out)."""
    try:
        with os.scandir(os.path.join(git, "worktrees")) as entries:
            found = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    return sorted(found)[:_MAX_WORKTREES]


def commit_tips(root: str) -> frozenset[str] | None:
    """The commits the refs and recent reflog entries (:data:`REFLOG_DAYS`) of the repository at
    ``root`` name, and the masks over its history (:data:`MASKS`; ``None`` when ``root`` has no
    ``.git`` directory or too many to keep)."""
    git = os.path.join(root, ".git")
    if not os.path.isdir(git):
        return None
    tips: set[str] = _masks(git)
    for line in _read(os.path.join(git, "HEAD")).splitlines()[:1]:
        if (sha := _sha(line)) is not None:
            tips.add(sha)
    for line in _read(os.path.join(git, "packed-refs")).splitlines():
        name, _, ref = line.lstrip("^").partition(" ")
        if (sha := _sha(name)) is not None:
            tips.add(sha)
            if ref.startswith(_REPLACE):
                tips.add(f"replace {ref[len(_REPLACE) :].strip()}")
    refs = os.path.join(git, "refs")
    for path in _files(refs):
        if len(tips) > MAX_TIPS:  # more refs than a reading keeps: it is not kept
            return None
        if (sha := _sha(_read(path)[:100])) is not None:
            tips.add(sha)
            ref = os.path.relpath(path, refs).replace(os.sep, "/")
            if ref.startswith("replace/"):
                tips.add(f"replace {ref[len('replace/') :]}")
    day = int(time.time() // 86_400)
    logs = [os.path.join(git, "logs")]
    for linked in _linked_worktrees(git):
        # a linked worktree's HEAD (detached there), its own refs and its reflogs
        for path in (os.path.join(linked, "HEAD"), *_files(os.path.join(linked, "refs"))):
            if (sha := _sha(_read(path)[:100])) is not None:
                tips.add(sha)
        logs.append(os.path.join(linked, "logs"))
    for path in (path for folder in logs for path in _files(folder)):
        tips.update(_reflog_tips(path, day))
        if len(tips) > MAX_TIPS:
            return None
    tips.discard("0" * 40)
    tips.discard("0" * 64)
    return frozenset(tips)


def hidden_history(
    before: frozenset[str] | None, after: frozenset[str] | None, locked: Iterable[str] = ()
) -> tuple[str, ...]:
    """The masks (:data:`MASKS`) of reading ``after`` that reading ``before`` did not hold:
    history a call hid, sorted (none when either is unknown); and ``"locked .git"`` when the
    folders newly ``locked`` (their owner can no longer enter them) hold the ``.git``
    folder."""
    masks = set() if before is None or after is None else after - before
    hidden = sorted(m for m in masks if m.startswith(MASKS))
    if any(folder in ("", ".git") for folder in locked):
        hidden.append("locked .git")
    return tuple(hidden)


ObjectStamp = tuple[tuple[str, int, int], ...]
"""``(name, ctime_ns, inode)`` of ``.git/objects`` (name ``""``), of each folder in it and of
the object files in those (``"pack/<file>"``, ``"ab/<rest of the name>"``)."""
#: Object files whose stat a stamp keeps at most; beyond, only the folders' stat counts.
MAX_STAMPED_OBJECTS = 20_000


def object_stamp(root: str, *, files: bool = True) -> ObjectStamp:
    """The :data:`ObjectStamp` of the repository at ``root`` (empty without one): one ``stat``
    call per folder and (unless not ``files``) object file, no git."""
    objects = os.path.join(root, ".git", "objects")
    try:
        info = os.lstat(objects)
        if not os.path.isdir(objects) or os.path.islink(objects):
            return ()
        stamp = [("", info.st_ctime_ns, info.st_ino)]
        folders = []
        with os.scandir(objects) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    found = entry.stat(follow_symlinks=False)
                    stamp.append((entry.name, found.st_ctime_ns, found.st_ino))
                    if entry.name == "pack" or len(entry.name) == 2:
                        folders.append(entry.name)
        budget = MAX_STAMPED_OBJECTS
        for folder in folders if files else ():
            with os.scandir(os.path.join(objects, folder)) as entries:
                for entry in entries:
                    budget -= 1
                    if budget < 0:
                        return tuple(sorted(s for s in stamp if "/" not in s[0]))
                    found = entry.stat(follow_symlinks=False)
                    stamp.append((f"{folder}/{entry.name}", found.st_ctime_ns, found.st_ino))
    except OSError:
        return ()
    return tuple(sorted(stamp))


def _alternates_unreadable(git: str) -> bool:
    """Whether ``git``'s list of alternate object stores is there but not a regular file (a
    FIFO blocks git's open of it until the time-out)."""
    try:
        mode = os.stat(os.path.join(git, ALTERNATES)).st_mode
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return not stat.S_ISREG(mode)


def objects_removed(before: ObjectStamp | None, after: ObjectStamp | None) -> bool:
    """Whether object files (a loose object, a pack) the stamp ``before`` holds are gone from
    ``after``: what ``gc``, ``prune`` and ``repack`` do, and a deletion of objects. Adding
    objects (a commit) removes none. A stamp of a watched store holds no files but the count
    of removals the watch saw (``"#removed"``, :mod:`.history_watch`)."""
    counts = [
        next((count for name, count, _ in stamp or () if name == "#removed"), None)
        for stamp in (before, after)
    ]
    if counts[0] is not None and counts[1] is not None:
        return counts[1] > counts[0]
    old = {name for name, _, _ in before or () if "/" in name}
    return bool(old - {name for name, _, _ in after or () if "/" in name})


def lost_commits(
    root: str,
    before: frozenset[str] | None,
    after: frozenset[str] | None,
    *,
    objects_changed: bool = False,
    objects_gone: bool = False,
) -> tuple[str, ...]:
    """The commits of ``before`` (:func:`commit_tips`) no longer named in ``after`` that no
    longer exist in the repository at ``root``, sorted; with ``objects_changed`` (the object
    store's :func:`object_stamp` moved), every commit of ``before`` that no longer exists, and
    with ``objects_gone`` (it lost object files, :func:`objects_removed`) every commit of
    ``before`` whose history is no longer whole: a parent, tree or blob it reaches is gone
    (:func:`~.object_store.broken_below`), every object but the tips deleted.

    Git is asked only then, and about the object store alone
    (:mod:`~pytest_harness_audit.inspect.object_store`): a ``HEAD``, configuration or refs
    the call spoiled make no difference. An alternates list git would wait on (a FIFO) is a
    mask over the history (:func:`hidden_history`); nothing is asked then."""
    if not before:
        return ()
    gone = sorted(before if objects_changed else before - (after or frozenset()))
    gone = [sha for sha in gone if not sha.startswith(MASKS)]
    if not gone:
        return ()
    git = os.path.join(root, ".git")
    objects = os.path.join(git, "objects")
    if not os.path.isdir(objects):
        return tuple(gone)  # the object store itself is gone
    if _alternates_unreadable(git):
        return ()
    lost = set(missing_objects(objects, gone) or ())
    if objects_gone:
        kept = [sha for sha in before if not sha.startswith(MASKS) and sha not in lost]
        lost.update(broken_below(objects, kept) or ())
    return tuple(sorted(lost))


class UnnamedCommits:
    """Commits a call left named by no ref or recent reflog entry while they still existed
    (an orphan branch replacing ``main``, ``git branch -D``, ``git reflog expire``): nothing
    was lost then, but the call that later prunes them (``git gc --prune=now``) destroys them,
    and the refs its own snapshot reads no longer name them. So they are kept for the session
    and checked whenever a later call moves the object store. Thread-safe."""

    def __init__(self) -> None:
        self._commits: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    @property
    def kept(self) -> frozenset[str]:
        """The commits kept now."""
        with self._lock:
            return self._commits

    def keep(self, commits: frozenset[str]) -> None:
        """Keep ``commits`` instead (those an earlier process kept for the session)."""
        with self._lock:
            self._commits = commits if len(commits) <= MAX_TIPS else frozenset()

    def lost(
        self,
        root: str,
        before: frozenset[str] | None,
        after: frozenset[str] | None,
        *,
        objects_changed: bool,
        destroyed: Iterable[str] = (),
    ) -> tuple[str, ...]:
        """The kept commits that no longer exist after a call from ``before`` to ``after``
        (:func:`commit_tips`; git is asked only when ``objects_changed``), sorted; then keep the
        commits ``before`` named that ``after`` does not (``destroyed``: those the call's own
        reading found lost)."""
        named = after or frozenset()
        with self._lock:
            pending = self._commits - named
        lost: tuple[str, ...] = ()
        if pending and objects_changed:
            lost = lost_commits(root, pending, frozenset(), objects_changed=True)
        gone = {sha for sha in (before or frozenset()) - named if not sha.startswith(MASKS)}
        kept = (pending | gone) - set(lost) - set(destroyed)
        with self._lock:
            # a repository whose refs the reading cannot keep (MAX_TIPS) is not judged either
            self._commits = frozenset(kept) if len(kept) <= MAX_TIPS else frozenset()
        return lost
