"""A hook call whose post step the agent stalls by holding the store's lock.

The call rewrites the persona file (a FAIL by its effects) and leaves a process holding the
session's lock past the post step's wait: the post could not record the call, nor its fault
note (the lock still held), so the session used to end with no trace of the call at all —
verdict PASS. Now the fault is kept beside the session's witness and the next event records it,
and a fault note whose cause is the chain refusing its record (the lock held, the chain changed
behind its writer) is tamper: FAIL. The twin: a post that fails for a reason of its own (a
payload it cannot read) stays the WARN it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit import locking
from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.cli import main
from pytest_harness_audit.readers.verdict import Verdict
from tests.hooks.hook_processes import hook
from tests.hooks.test_hook_continuity import Host

CALL = {
    "tool_name": "Bash",
    "tool_input": {"command": "python3 ../e.py", "description": "run"},
    "tool_use_id": "toolu_01stalled",
}


@contextlib.contextmanager
def _lock_held(host: Host) -> Iterator[None]:
    """The session's lock held by another open file (as a process the call left running)."""
    fd = os.open(next((host.store / "audit").glob("*.lock")), os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(fd)


def _post_in_process(
    host: Host, payload: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """``hook post`` run here (the lock's wait cut short), as the host would run it."""
    for key, value in host.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(locking, "LOCK_TIMEOUT_S", 0.3)
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["--storage", str(host.store), "hook", "post", "--preset", "safety"])
    return code, err.getvalue()


def _notes(host: Host) -> list[dict[str, Any]]:
    return [r for r in host.records() if r["kind"] == "note" and r["tool"] == "PostToolUse"]


@pytest.mark.slow
def test_a_post_stalled_by_the_store_lock_fails_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = Host(tmp_path)
    (host.project / "CLAUDE.md").write_text("be good\n", encoding="utf-8")
    host.start()
    host.bash("echo one")
    assert host.event("PreToolUse", "pre", **CALL)[0] == 0
    (host.project / "CLAUDE.md").write_text("obey me\n", encoding="utf-8")  # what the call did
    response = {"stdout": "", "stderr": "", "interrupted": False}
    payload = {**host.base("PostToolUse"), **CALL, "tool_response": response}
    with _lock_held(host):
        code, err = _post_in_process(host, payload, monkeypatch)
    assert code == 1 and "held by another process" in err, err
    assert "kept for the session's next event" in err
    assert _notes(host) == []  # nothing could be written then
    host.bash("echo after")  # the next event records the kept fault
    host.end()
    notes = _notes(host)
    assert len(notes) == 1, [r["tool"] for r in host.records()]
    assert "tamper_attempt" in notes[0].get("alerts", [])
    assert "recorded at the next event" in notes[0]["result"]["errorMessage"]
    verdict, reasons = host.verdict()
    assert verdict == Verdict.FAIL, reasons
    assert not list(host.witness().parent.glob("*.fault-*"))  # recorded once, then dropped


@pytest.mark.slow
def test_a_post_whose_note_waits_out_the_lock_fails_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock released between the post's two waits: the note is written at once, tamper."""
    host = Host(tmp_path)
    host.start()
    assert host.event("PreToolUse", "pre", **CALL)[0] == 0
    payload = {**host.base("PostToolUse"), **CALL, "tool_response": {"stdout": ""}}
    fd = os.open(next((host.store / "audit").glob("*.lock")), os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    real = locking._acquire

    def release_after_a_wait(*args: Any, **kwargs: Any) -> None:
        try:
            real(*args, **kwargs)
        except ChainError:
            with contextlib.suppress(OSError):
                os.close(fd)  # the holder gives up once the post's first wait is over
            raise

    monkeypatch.setattr(locking, "_acquire", release_after_a_wait)
    code, err = _post_in_process(host, payload, monkeypatch)
    assert code == 1 and "(recorded as a fault)" in err, err
    host.end()
    notes = _notes(host)
    assert len(notes) == 1 and "tamper_attempt" in notes[0].get("alerts", [])
    assert host.verdict()[0] == Verdict.FAIL


def test_a_post_that_cannot_read_its_payload_stays_warn(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    code, _out, err = host.event("PostToolUse", "post", tool_name="Bash", tool_input=3)
    assert code == 1 and "(recorded as a fault)" in err, err
    host.end()
    notes = _notes(host)
    assert len(notes) == 1 and "tamper_attempt" not in notes[0].get("alerts", [])
    assert host.verdict()[0] == Verdict.WARN


@pytest.mark.slow
def test_a_post_held_by_a_fifo_past_its_deadline_fails_the_session(tmp_path: Path) -> None:
    """The session's policy copy in the store swapped for a FIFO while the call's post runs (by
    a process the call left running, put back after): the post hung reading it until the host
    cancelled it, and the call that rewrote the persona file left no record (PASS). Past its
    deadline the post keeps its fault for the next event."""
    host = Host(tmp_path)
    (host.project / "CLAUDE.md").write_text("be good\n", encoding="utf-8")
    host.start()
    host.bash("echo one")
    assert host.event("PreToolUse", "pre", **CALL)[0] == 0
    (host.project / "CLAUDE.md").write_text("obey me\n", encoding="utf-8")  # what the call did
    held = host.store / "policies" / f"{host.session}.json"
    saved = held.read_bytes()
    held.unlink()
    os.mkfifo(held)
    payload = {**host.base("PostToolUse"), **CALL, "tool_response": {"stdout": ""}}
    options = ("--preset", "safety", "--deadline", "3")
    code, _out, err = hook(host.store, "post", payload, *options, env=host.env)
    assert code == 1 and "did not finish within 3 s (kept for the next event)" in err, err
    held.unlink()
    held.write_bytes(saved)
    host.bash("echo after")
    host.end()
    notes = _notes(host)
    assert len(notes) == 1, [r["tool"] for r in host.records()]
    assert "tamper_attempt" in notes[0].get("alerts", [])
    assert "did not finish within 3 s" in notes[0]["result"]["errorMessage"]
    assert host.verdict()[0] == Verdict.FAIL


def _fifo_post(host: Host, *fifos: Path) -> tuple[int, str]:
    """The call's post with each of ``fifos`` made a FIFO (by a process the call left)."""
    for path in fifos:
        path.unlink()
        os.mkfifo(path)
    payload = {**host.base("PostToolUse"), **CALL, "tool_response": {"stdout": ""}}
    options = ("--preset", "safety", "--deadline", "30")
    code, _out, err = hook(host.store, "post", payload, *options, env=host.env)
    return code, err


def _persona_call(host: Host) -> None:
    (host.project / "CLAUDE.md").write_text("be good\n", encoding="utf-8")
    host.start()
    assert host.event("PreToolUse", "pre", **CALL)[0] == 0
    (host.project / "CLAUDE.md").write_text("obey me\n", encoding="utf-8")


@pytest.mark.slow
def test_a_fifo_in_place_of_the_pending_file_is_a_changed_pending_file(tmp_path: Path) -> None:
    """Read as a file the door did not write, at once: the pending file changed (FAIL)."""
    host = Host(tmp_path)
    _persona_call(host)
    code, err = _fifo_post(host, next((host.store / "pending").rglob("*.json")))
    assert code == 0, err
    tools = [r["tool"] for r in host.records()]
    assert "PendingChanged" in tools, tools
    assert host.verdict()[0] == Verdict.FAIL


@pytest.mark.slow
def test_a_fifo_in_place_of_the_witness_hangs_neither_post_nor_verify(tmp_path: Path) -> None:
    """The witness unreadable (a FIFO in its place): a lost chain (``ChainLost``, ``how:
    witnessUnreadable``, FAIL) and the call recorded, its effects unknown; ``audit verify``
    answers."""
    host = Host(tmp_path)
    _persona_call(host)
    code, err = _fifo_post(host, host.witness())
    assert code == 0, err
    tools = [r["tool"] for r in host.records()]
    assert tools == ["SessionStart", "ChainLost", "Bash"], tools
    assert host.records()[1]["continuity"]["how"] == "witnessUnreadable"
    code, out = host.audit("verify")
    assert code == 1 and "CHAIN LOST" in out, out
    assert host.verdict()[0] == Verdict.FAIL
