"""A new inotify instance while the user's are used up: the garbage is collected and the
instance asked for again (a session nobody closed keeps its watchers' until then)."""

from __future__ import annotations

import ctypes
import errno

import pytest

from pytest_harness_audit.inspect import inotify


class _Libc:
    """A C library whose first ``refusals`` instances are refused with ``EMFILE``."""

    def __init__(self, refusals: int, code: int = errno.EMFILE) -> None:
        self.refusals = refusals
        self.code = code
        self.asked = 0

    def inotify_init1(self, flags: int) -> int:
        self.asked += 1
        if self.asked <= self.refusals:
            ctypes.set_errno(self.code)
            return -1
        ctypes.set_errno(0)
        return 42


def test_used_up_instances_are_asked_for_again_after_the_garbage_goes() -> None:
    libc = _Libc(refusals=3)
    assert inotify.new_instance(libc) == 42
    assert libc.asked == 4


def test_it_gives_up_after_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inotify, "INSTANCE_WAIT_SECONDS", 0.1)
    libc = _Libc(refusals=10**6)
    assert inotify.new_instance(libc) == -1
    assert 1 < libc.asked < 100


def test_another_error_is_not_waited_for() -> None:
    libc = _Libc(refusals=5, code=errno.ENOMEM)
    assert inotify.new_instance(libc) == -1
    assert libc.asked == 1
