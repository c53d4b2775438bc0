"""An audit store's lock file held by a process the agent started.

A hook is a fresh process for every event; each opens the session's chain under its lock. A
process that takes that lock and keeps it (started by an allowed call, by a name only the run
knows) used to hang every later hook; the host kills a hook that hangs and then runs the call,
so even a call the gate would deny ran. The wait for the lock now ends with ``ChainError``, which
``hook pre`` answers with exit 2: the call is refused.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.audit import locking
from pytest_harness_audit.audit.errors import ChainError
from tests.hooks.hook_processes import host_env

HOOK = [sys.executable, "-m", "pytest_harness_audit"]


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    """A lock file another open file description holds exclusively (as another process would)."""
    path = tmp_path / "S.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield path
    os.close(fd)


def test_an_exclusive_lock_held_too_long_fails(held: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locking, "LOCK_TIMEOUT_S", 0.2)
    fd = locking.open_lock_file(held)
    try:
        with pytest.raises(ChainError, match="held by another process"), locking.exclusive(fd):
            pass
    finally:
        os.close(fd)


def test_a_shared_lock_held_too_long_fails(held: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locking, "LOCK_TIMEOUT_S", 0.2)
    with pytest.raises(ChainError, match=str(held)), locking.shared_lock(held):
        pass


def test_a_brief_holder_is_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "S.lock"
    fd = locking.open_lock_file(path)
    other = os.open(path, os.O_RDWR)
    fcntl.flock(other, fcntl.LOCK_EX)
    releaser = threading.Timer(0.3, fcntl.flock, (other, fcntl.LOCK_UN))  # as an append lets go
    releaser.start()
    try:
        with locking.exclusive(fd):
            pass
    finally:
        releaser.join()
        os.close(other)
        os.close(fd)


@pytest.mark.slow
def test_the_hook_door_refuses_while_the_lock_is_held(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "state"

    def hook(event: str, payload: dict[str, object]) -> tuple[int, str]:
        done = subprocess.run(
            [*HOOK, "--storage", str(store), "hook", event, "--preset", "safety"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env=host_env(),
            timeout=locking.LOCK_TIMEOUT_S + 40,
        )
        return done.returncode, done.stderr

    base = {"session_id": "S", "cwd": str(project)}
    code, err = hook("session-start", {**base, "hook_event_name": "SessionStart"})
    assert code == 0, err
    fd = os.open(store / "audit" / "S.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # what the agent's background process does
    try:
        pre = {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_use_id": "t1",
            "tool_name": "Bash",
            "tool_input": {"command": "rm -rf app"},
        }
        code, err = hook("pre", pre)
    finally:
        os.close(fd)
    assert code == 2 and "held by another process" in err  # refused, where it used to hang


def test_an_open_writer_appends_no_longer_than_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A long-running writer (the harness, the proxy) appends under the same lock: a holder
    # that never lets go ends the append with ChainError instead of hanging the session.
    from pytest_harness_audit.audit import AuditChain, RecordDraft

    monkeypatch.setattr(locking, "LOCK_TIMEOUT_S", 0.2)
    with AuditChain(tmp_path, "S") as chain:
        chain.append(RecordDraft(tool="Read", category="file_read", target="a.txt"))
        (lock_path,) = tmp_path.rglob("S.lock")
        other = os.open(lock_path, os.O_RDWR)
        fcntl.flock(other, fcntl.LOCK_EX)
        try:
            with pytest.raises(ChainError, match="held by another process"):
                chain.append(RecordDraft(tool="Read", category="file_read", target="b.txt"))
        finally:
            os.close(other)
        chain.append(RecordDraft(tool="Read", category="file_read", target="c.txt"))
        assert chain.record_count == 2
