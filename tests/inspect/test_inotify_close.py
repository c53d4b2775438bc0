"""A watcher's inotify descriptor is closed on a thread of its own: the kernel makes a close of
one that held watches wait some 10 ms, which no session needs to wait for."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from pytest_harness_audit.inspect import inotify
from pytest_harness_audit.inspect.effects import Protection
from pytest_harness_audit.inspect.watch import LiveTree

pytestmark = pytest.mark.skipif(inotify.inotify_libc() is None, reason="needs Linux inotify")


def _watching(folder: Path) -> int:
    libc = inotify.inotify_libc()
    fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
    assert fd >= 0
    assert libc.inotify_add_watch(fd, os.fsencode(folder), inotify.IN_CREATE) >= 0
    return fd


def _is_inotify(fd: int) -> bool:
    try:
        return "inotify" in os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return False


def _closed_soon(fd: int) -> bool:
    deadline = time.monotonic() + 10
    while _is_inotify(fd) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not _is_inotify(fd)


def test_the_owner_does_not_wait_for_the_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fd = _watching(tmp_path)
    release = threading.Event()
    real_close = os.close

    def held_close(number: int) -> None:
        if number == fd:
            release.wait(20)
        real_close(number)

    monkeypatch.setattr(os, "close", held_close)
    started = time.monotonic()
    inotify.close_later(fd)
    assert time.monotonic() - started < 10  # the close itself is held for 20 s
    assert _is_inotify(fd)
    release.set()
    assert _closed_soon(fd)


def test_a_closed_live_tree_s_descriptor_is_closed(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    tree = LiveTree.open(tmp_path, Protection())
    assert tree is not None
    fd = tree._fd
    assert _is_inotify(fd)
    tree.close()
    assert tree.closed
    assert _closed_soon(fd)


def test_a_forked_child_closes_its_own(tmp_path: Path) -> None:
    inotify.close_later(_watching(tmp_path))  # the parent's closer runs
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            fd = _watching(tmp_path)
            inotify.close_later(fd)
            code = 0 if _closed_soon(fd) else 2
        finally:
            os.write(write, bytes([code]))
            os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 1) == b"\0"
    finally:
        os.close(read)
        os.waitpid(pid, 0)
