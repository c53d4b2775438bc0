"""Waiting for a command's process: the same answers whether its exit can be watched by a
descriptor (``pidfd``) or only polled for."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from pytest_harness_audit.tools import shell


@pytest.fixture(params=["descriptor", "polled"])
def watched(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "descriptor" and not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd here")
    if request.param == "polled":
        monkeypatch.setattr(shell, "_exit_descriptor", lambda pid: None)
    return str(request.param)


def _start(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code])


def test_an_exit_ends_the_wait_and_leaves_the_process_to_reap(watched: str) -> None:
    process = _start("pass")
    assert shell._wait_for_exit(process, 30.0)
    assert process.returncode is None  # not reaped: its group id stays reserved
    assert process.wait() == 0


def test_a_timeout_ends_the_wait_first(watched: str) -> None:
    process = _start("import time; time.sleep(30)")
    try:
        assert not shell._wait_for_exit(process, 0.2)
    finally:
        process.kill()
        process.wait()


def test_a_cancel_set_meanwhile_ends_the_wait(watched: str) -> None:
    process = _start("import time; time.sleep(30)")
    cancel = threading.Event()
    timer = threading.Timer(0.2, cancel.set)
    timer.start()
    try:
        assert not shell._wait_for_exit(process, 30.0, cancel)
        assert cancel.is_set()
    finally:
        timer.cancel()
        process.kill()
        process.wait()


def test_a_process_that_cannot_be_watched_is_polled(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(pid: int) -> int:
        raise PermissionError(1, "not permitted")

    monkeypatch.setattr(os, "pidfd_open", refused, raising=False)
    assert shell._exit_descriptor(os.getpid()) is None
    process = _start("pass")
    assert shell._wait_for_exit(process, 30.0)
    process.wait()
