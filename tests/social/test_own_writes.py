"""The post store's own writes told from anyone else's, window by window."""

from __future__ import annotations

from pathlib import Path

from pytest_harness_audit.social.own_writes import close_window, open_window, own_write
from pytest_harness_audit.social.store import DATABASE_NAME, PostStore


def _store(tmp_path: Path) -> PostStore:
    return PostStore(tmp_path / "social")


def _post(store: PostStore, text: str) -> None:
    with store.transaction() as connection:
        connection.execute(
            "INSERT INTO items (created_ms, kind, operation_id, body) VALUES (1, 'k', NULL, ?)",
            (text,),
        )


def _forge(database: Path) -> None:
    with open(database, "ab") as handle:
        handle.write(b"forged")


def test_own_writes_alone_change_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    window = open_window(store.path)
    _post(store, "one")
    _post(store, "two")
    assert close_window(store.path, window) == []
    store.close()


def test_a_foreign_change_is_seen_although_the_store_wrote_after_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    window = open_window(store.path)
    _forge(store.path)
    _post(store, "a send in the same window")
    assert close_window(store.path, window) == [str(store.path)]
    store.close()


def test_a_foreign_change_marks_every_open_window(tmp_path: Path) -> None:
    store = _store(tmp_path)
    outer = open_window(store.path)
    _post(store, "before")
    inner = open_window(store.path)
    _forge(store.path)
    assert close_window(store.path, inner) == [str(store.path)]
    assert close_window(store.path, outer) == [str(store.path)]
    store.close()


def test_a_change_before_a_window_opened_is_not_its_own(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _forge(store.path)  # no window was open: nothing was being watched
    window = open_window(store.path)
    assert close_window(store.path, window) == []
    store.close()


def test_a_deleted_database_is_a_change(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _post(store, "one")
    window = open_window(store.path)
    store.path.unlink()
    assert close_window(store.path, window) == [str(store.path)]
    store.close()


def test_closing_the_store_is_an_own_write(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _post(store, "one")
    window = open_window(store.path)
    store.close()  # folds the write-ahead log back in and removes it
    assert close_window(store.path, window) == []


def test_an_own_write_that_raises_is_still_bracketed(tmp_path: Path) -> None:
    database = tmp_path / DATABASE_NAME
    window = open_window(database)
    try:
        with own_write(database):
            database.write_bytes(b"made by the store")
            raise RuntimeError("the transaction failed")
    except RuntimeError:
        pass
    assert close_window(database, window) == []


def test_a_change_made_while_the_store_waits_for_the_write_lock_is_not_its_own(
    tmp_path: Path,
) -> None:
    """Another connection holds the write lock, forges a row and commits while the store's
    transaction waits for the lock: the wait is no part of the store's own write."""
    import sqlite3
    import threading
    import time

    store = _store(tmp_path)
    _post(store, "before")
    other = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute(
        "INSERT INTO items (created_ms, kind, operation_id, body) VALUES (1, 'k', NULL, 'forged')"
    )
    window = open_window(store.path)  # the lock is held, nothing committed yet

    def release() -> None:
        time.sleep(0.3)  # the store is waiting for the lock by now
        other.execute("COMMIT")

    releaser = threading.Thread(target=release)
    releaser.start()
    _post(store, "a send that waited")
    releaser.join()
    other.close()
    assert f"{store.path}-wal" in close_window(store.path, window)  # the forged commit's log
    store.close()
