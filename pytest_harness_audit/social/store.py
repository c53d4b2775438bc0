"""The durable post store: one SQLite database (WAL, synchronous FULL) in a given directory.

A post is committed before the send that made it returns, so another connection — or another
process — sees it at once. The store also keeps the local agent's inbound items, the firewall's
retained checks and the idempotent-invocation ledger.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from pytest_harness_audit.social.errors import SocialConfigError
from pytest_harness_audit.social.message_json import canonical_message_json
from pytest_harness_audit.social.own_writes import OwnWrite, own_write
from pytest_harness_audit.social.post_ledger import note_posts

#: Seconds a write waits for another connection's write lock.
LOCK_WAIT_S = 10.0

#: The database file name inside the storage directory.
DATABASE_NAME = "social.sqlite3"

PostKind = Literal["message", "request", "response", "close"]
PostStatus = Literal["stored", "pending"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS posts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    post_id TEXT NOT NULL UNIQUE,
    invocation_id TEXT,
    created_ms INTEGER NOT NULL,
    sender TEXT NOT NULL,
    conversation TEXT NOT NULL,
    address TEXT NOT NULL,
    kind TEXT NOT NULL,
    operation TEXT NOT NULL,
    operation_id TEXT,
    text TEXT,
    content TEXT NOT NULL,
    status TEXT NOT NULL,
    held INTEGER NOT NULL DEFAULT 0,
    record_hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS posts_conversation ON posts (conversation, seq);
CREATE TABLE IF NOT EXISTS items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    created_ms INTEGER NOT NULL,
    kind TEXT NOT NULL,
    operation_id TEXT,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checks (
    check_id TEXT PRIMARY KEY,
    created_ms INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS invocations (
    key TEXT PRIMARY KEY,
    input TEXT NOT NULL,
    state TEXT NOT NULL,
    outcome TEXT,
    updated_ms INTEGER NOT NULL
);
"""


@dataclass(frozen=True)
class Post:
    """One stored post.

    ``conversation`` is the conversation it lives in, seen from the local agent (``agent:<peer>``
    for a direct conversation, the canonical ``group:`` address for a group); ``address`` is the
    canonical address its send named (a gather to a group posts to each member's direct
    conversation under the group's address). ``held`` marks an all_gather answer not yet
    published by the close; ``status`` is ``pending`` for a post queued but not yet delivered.
    """

    seq: int
    post_id: str
    invocation_id: str | None
    created_ms: int
    sender: str
    conversation: str
    address: str
    kind: PostKind
    operation: str
    operation_id: str | None
    text: str | None
    content: tuple[Mapping[str, object], ...]
    status: PostStatus
    held: bool
    record_hash: str


@dataclass(frozen=True)
class InvocationRecord:
    """The ledger row of one idempotency key: its input, state and retained outcome."""

    key: str
    input: str
    state: Literal["pending", "returned", "indeterminate"]
    outcome: Mapping[str, object] | None


class IntentBinder(Protocol):
    """Runs inside the transaction that creates a post, before the post is inserted (it may
    raise to roll the post back); ``lock`` is held from before the transaction to its commit."""

    @property
    def lock(self) -> threading.RLock:
        """The lock held around the whole transaction."""

    def __call__(self, connection: sqlite3.Connection) -> None:
        """Compare, retain, or raise (nothing is then committed)."""


def insert_check(
    connection: sqlite3.Connection, check_id: str, created_ms: int, body: Mapping[str, object]
) -> None:
    """Retain one firewall check in the open transaction of ``connection``."""
    connection.execute(
        "INSERT INTO checks (check_id, created_ms, body) VALUES (?, ?, ?)",
        (check_id, created_ms, json.dumps(body)),
    )


class PostStore:
    """The SQLite store of one endpoint, at ``<directory>/social.sqlite3``."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise SocialConfigError(
                f"storage directory {str(self.directory)!r} cannot be created: {error}"
            ) from error
        self.path = self.directory / DATABASE_NAME
        self._lock = threading.RLock()
        with own_write(self.path):
            self._connection = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=LOCK_WAIT_S
            )
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=FULL")
            self._connection.executescript(_SCHEMA)
            found = self._connection.execute("SELECT post_id, record_hash FROM posts")
            note_posts(self.path, ((str(i), str(h)) for i, h in found.fetchall()))

    def close(self) -> None:
        """Close the connection (the last one to close folds the write-ahead log back in)."""
        with self._lock, own_write(self.path):
            self._connection.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One committed transaction (rolled back if the body raises).

        The own write is bracketed from the attempt that gets the write lock: what anyone
        changed while the store waited for the lock is not its own."""
        with self._lock:
            write = self._begin()
            try:
                try:
                    yield self._connection
                except BaseException:
                    self._connection.execute("ROLLBACK")
                    raise
                self._connection.execute("COMMIT")
            finally:
                write.end()

    def _begin(self) -> OwnWrite:
        """``BEGIN IMMEDIATE`` in an own write, retried without waiting inside one (at most
        :data:`LOCK_WAIT_S` in all) while another connection holds the write lock."""
        deadline = time.monotonic() + LOCK_WAIT_S
        self._connection.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                write = OwnWrite(self.path)
                try:
                    self._connection.execute("BEGIN IMMEDIATE")
                except sqlite3.OperationalError as exc:
                    write.abandon()
                    if "locked" not in str(exc) or time.monotonic() > deadline:
                        raise
                else:
                    return write
                time.sleep(0.005)
        finally:
            self._connection.execute(f"PRAGMA busy_timeout = {int(LOCK_WAIT_S * 1000)}")

    # -- posts ----------------------------------------------------------------------------------

    def add_post(
        self,
        *,
        post_id: str,
        invocation_id: str | None,
        created_ms: int,
        sender: str,
        conversation: str,
        address: str,
        kind: PostKind,
        operation: str,
        operation_id: str | None,
        text: str | None,
        content: list[dict[str, object]],
        status: PostStatus,
        held: bool,
        record_hash: str,
        bind: IntentBinder | None = None,
    ) -> Post:
        """Commit one post; it is durable when this returns. ``bind`` runs first in the same
        transaction (an intent binding: the post and what it binds commit together)."""
        with ExitStack() as stack:
            if bind is not None:
                stack.enter_context(bind.lock)
            stack.enter_context(self._lock)  # held until the post is noted as the store's own
            with self.transaction() as connection:
                if bind is not None:
                    bind(connection)
                cursor = connection.execute(
                    "INSERT INTO posts (post_id, invocation_id, created_ms, sender, conversation,"
                    " address, kind, operation, operation_id, text, content, status, held,"
                    " record_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        post_id,
                        invocation_id,
                        created_ms,
                        sender,
                        conversation,
                        address,
                        kind,
                        operation,
                        operation_id,
                        text,
                        canonical_message_json(content),
                        status,
                        int(held),
                        record_hash,
                    ),
                )
                seq = cursor.lastrowid
            note_posts(self.path, [(post_id, record_hash)])  # committed
        assert seq is not None
        return Post(
            seq,
            post_id,
            invocation_id,
            created_ms,
            sender,
            conversation,
            address,
            kind,
            operation,
            operation_id,
            text,
            tuple(content),
            status,
            held,
            record_hash,
        )

    def set_status(self, post_id: str, status: PostStatus) -> None:
        """Mark a post ``stored`` (delivered) or ``pending``."""
        with self.transaction() as connection:
            connection.execute("UPDATE posts SET status = ? WHERE post_id = ?", (status, post_id))

    def publish_held(self, operation_id: str, post_ids: tuple[str, ...]) -> None:
        """Publish the held answers an all_gather close lists."""
        with self.transaction() as connection:
            connection.executemany(
                "UPDATE posts SET held = 0 WHERE operation_id = ? AND post_id = ?",
                [(operation_id, post_id) for post_id in post_ids],
            )

    def posts(
        self,
        *,
        conversation: str | None = None,
        address: str | None = None,
        sender: str | None = None,
        include_held: bool = False,
    ) -> list[Post]:
        """Stored posts in store order, optionally filtered (held answers only on request)."""
        clauses, values = [], []
        for column, value in (
            ("conversation", conversation),
            ("address", address),
            ("sender", sender),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                values.append(value)
        if not include_held:
            clauses.append("held = 0")
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._lock:
            rows = self._connection.execute(
                "SELECT seq, post_id, invocation_id, created_ms, sender, conversation, address,"
                f" kind, operation, operation_id, text, content, status, held, record_hash"
                f" FROM posts{where} ORDER BY seq",
                values,
            ).fetchall()
        return [_post_of(row) for row in rows]

    # -- inbound items --------------------------------------------------------------------------

    def add_item(self, created_ms: int, body: Mapping[str, object]) -> None:
        """Commit one inbound item of the local agent (``body["kind"]`` names it)."""
        with self.transaction() as connection:
            connection.execute(
                "INSERT INTO items (created_ms, kind, operation_id, body) VALUES (?, ?, ?, ?)",
                (created_ms, str(body["kind"]), body.get("id"), json.dumps(body)),
            )

    def items(self) -> list[dict[str, object]]:
        """Every inbound item, oldest first."""
        with self._lock:
            rows = self._connection.execute("SELECT body FROM items ORDER BY seq").fetchall()
        return [json.loads(row[0]) for row in rows]

    # -- retained checks ------------------------------------------------------------------------

    def add_check(self, check_id: str, created_ms: int, body: Mapping[str, object]) -> None:
        """Retain one firewall check under its id."""
        with self.transaction() as connection:
            insert_check(connection, check_id, created_ms, body)

    def check(self, check_id: str) -> dict[str, object] | None:
        """The retained check ``check_id``, or None."""
        with self._lock:
            row = self._connection.execute(
                "SELECT body FROM checks WHERE check_id = ?", (check_id,)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    # -- idempotent invocations -----------------------------------------------------------------

    def invocation(self, key: str) -> InvocationRecord | None:
        """The ledger row of ``key``, or None when the key was never used."""
        with self._lock:
            row = self._connection.execute(
                "SELECT key, input, state, outcome FROM invocations WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        outcome = None if row[3] is None else json.loads(row[3])
        return InvocationRecord(row[0], row[1], row[2], outcome)

    def begin_invocation(self, key: str, canonical_input: str, now_ms: int) -> None:
        """Record that the send under ``key`` is running."""
        with self.transaction() as connection:
            connection.execute(
                "INSERT INTO invocations (key, input, state, outcome, updated_ms)"
                " VALUES (?, ?, 'pending', NULL, ?)",
                (key, canonical_input, now_ms),
            )

    def finish_invocation(self, key: str, outcome: Mapping[str, object], now_ms: int) -> None:
        """Retain the outcome of the send under ``key``."""
        with self.transaction() as connection:
            connection.execute(
                "UPDATE invocations SET state = 'returned', outcome = ?, updated_ms = ?"
                " WHERE key = ?",
                (json.dumps(outcome), now_ms, key),
            )

    def forget_invocation(self, key: str) -> None:
        """Drop a key whose send created nothing (so a retry is a new, checked invocation)."""
        with self.transaction() as connection:
            connection.execute("DELETE FROM invocations WHERE key = ?", (key,))

    def mark_interrupted(self) -> int:
        """Mark sends left running by an earlier endpoint ``indeterminate``; returns how many."""
        with self.transaction() as connection:
            cursor = connection.execute(
                "UPDATE invocations SET state = 'indeterminate' WHERE state = 'pending'"
            )
            return cursor.rowcount


def _post_of(row: tuple[object, ...]) -> Post:
    (seq, post_id, invocation_id, created_ms, sender, conversation, address, kind, operation,
     operation_id, text, content, status, held, record_hash) = row  # fmt: skip
    return Post(
        int(str(seq)),
        str(post_id),
        None if invocation_id is None else str(invocation_id),
        int(str(created_ms)),
        str(sender),
        str(conversation),
        str(address),
        kind,  # type: ignore[arg-type]
        str(operation),
        None if operation_id is None else str(operation_id),
        None if text is None else str(text),
        tuple(json.loads(str(content))),
        status,  # type: ignore[arg-type]
        bool(held),
        str(record_hash),
    )
