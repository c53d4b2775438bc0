"""Which posts a post store holds by this process's own writes, checked against what it holds.

The post store's windows (:mod:`.own_writes`) tell a foreign change to its files while a call
runs; one made between calls, by a process an earlier call left running, falls in no window,
and a change timed inside one of the store's own transactions is taken for the store's. What
the store must hold is known whatever the timing: every post this process inserted (its
identity: id and record hash), and whatever was there when it opened the store. Posts are
never deleted. :func:`unexplained` compares: a post no write of this process made, a post
gone, or a post whose identity changed is a change by someone else.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from pytest_harness_audit.social.content import record_hash
from pytest_harness_audit.social.own_writes import own_write

#: How long a read waits for the store's write lock.
LOCK_WAIT_S = 10.0

_LOCK = threading.Lock()
#: Each post store this process opened (by its resolved path): post id → record hash.
_KNOWN: dict[str, dict[str, str]] = {}
#: Each store's changes already told (:func:`new_changes`).
_TOLD: dict[str, set[str]] = {}
#: Most changes listed (a store flooded with forged posts is told as the first of them).
MAX_LISTED = 20


@functools.lru_cache(maxsize=256)
def _key(path: Path) -> str:
    return str(path.resolve())  # (a session's store path is asked for with every call)


def note_posts(path: Path, posts: Iterable[tuple[str, str]]) -> None:
    """``posts`` (id, record hash) are held by the store at ``path`` by this process's doing
    (found there when it opened the store, or inserted since)."""
    with _LOCK:
        known = _KNOWN.setdefault(_key(path), {})
        for post_id, digest in posts:
            known[post_id] = digest


def tracked(path: Path) -> bool:
    """Whether this process opened the store at ``path`` (its posts are known)."""
    with _LOCK:
        return bool(_KNOWN) and _key(path) in _KNOWN


def unexplained(path: Path, connection: sqlite3.Connection) -> list[str]:
    """The posts of the store at ``path`` (read through ``connection``) that this process's
    writes do not explain: added, removed or changed by someone else (at most
    :data:`MAX_LISTED`, each as ``"<post id>: <what>"``)."""
    rows = connection.execute(
        "SELECT post_id, sender, conversation, content, record_hash FROM posts ORDER BY seq"
    ).fetchall()
    with _LOCK:
        known = dict(_KNOWN.get(_key(path), {}))
    found: list[str] = []
    seen: set[str] = set()
    for post_id, sender, conversation, content, digest in rows:
        post_id = str(post_id)
        seen.add(post_id)
        if post_id not in known:
            found.append(f"{post_id}: added")
        elif known[post_id] != digest or digest != _digest(post_id, sender, conversation, content):
            found.append(f"{post_id}: changed")
    found.extend(f"{post_id}: removed" for post_id in known if post_id not in seen)
    return found[:MAX_LISTED]


def _digest(post_id: str, sender: object, conversation: object, content: object) -> str:
    """The record hash the post's stored fields give (what the store wrote for them)."""
    try:
        parts = json.loads(str(content))
    except ValueError:
        return ""
    return record_hash(post_id, str(sender), str(conversation), parts)


def new_changes(path: Path, *, tell: bool = True) -> list[str]:
    """:func:`store_changes` not told before (each is told once, whoever asks; ``tell=False``
    only looks)."""
    found = store_changes(path)
    with _LOCK:
        told = _TOLD.setdefault(_key(path), set())
        fresh = [change for change in found if change not in told]
        if tell:
            told.update(fresh)
    return fresh


def store_changes(path: Path) -> list[str]:
    """:func:`unexplained` of the store at ``path``, read on a connection of its own; nothing
    when this process never opened that store (what it should hold is not known here)."""
    if not tracked(path) or not path.exists():
        return []
    # a reader touches the log's change time: an own write (a change made meanwhile by someone
    # else is taken in by the windows, but not by this comparison, which the next look repeats)
    with own_write(path):
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=LOCK_WAIT_S)
        try:
            return unexplained(path, connection)
        except sqlite3.Error as error:
            return [f"the store cannot be read: {error}"]
        finally:
            connection.close()


__all__ = ["MAX_LISTED", "new_changes", "note_posts", "store_changes", "tracked", "unexplained"]
