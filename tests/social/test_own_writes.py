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
