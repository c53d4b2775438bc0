"""A hook call whose post step the host cancels at the entry's own ``timeout``.

Claude Code ends a hook that runs past its entry's ``timeout`` (``SIGTERM``) and goes on. A
post step held up (here by a FIFO put in place of the session's policy copy, as a process the
call left running can do) and cancelled before its own ``--deadline`` died without a trace:
the call that rewrote the persona file left no record, and the session ended PASS. The step
now keeps its fault as it ends, and the next event records it (WARN: a slow machine can make a
host cancel a step too). ``hook install`` also raises a post entry's own ``timeout`` above the
deadline, so that an installed post meets its deadline first. The twin: a post that finishes
in time records the call as before, with no fault kept.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.readers.verdict import Verdict
from tests.hooks.test_hook_continuity import Host

CALL = {
    "tool_name": "Bash",
    "tool_input": {"command": "python3 ../e.py", "description": "run"},
    "tool_use_id": "toolu_01cancelled",
}


def _post_process(host: Host, payload: dict[str, Any]) -> subprocess.Popen[str]:
    argv = ["--storage", str(host.store), "hook", "post", "--preset", "safety"]
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest_harness_audit", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=host.env,
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps(payload))
    process.stdin.close()
    process.stdin = None  # all written: communicate() only reads
    return process


def _reader_waiting(fifo: Path, process: subprocess.Popen[str]) -> int:
    """A writer's end of ``fifo``, opened once the post step is reading it (and held open, so
    the step stays waiting)."""
    limit = time.monotonic() + 120
    while time.monotonic() < limit:
        assert process.poll() is None, process.communicate()
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader yet (ENXIO)
            time.sleep(0.05)
    raise AssertionError("the post step never read the session's policy copy")


def _persona_call(host: Host) -> dict[str, Any]:
    """A call that rewrote the persona file (FAIL by its effects): its post payload."""
    (host.project / "CLAUDE.md").write_text("be good\n", encoding="utf-8")
    host.start()
    host.bash("echo one")
    assert host.event("PreToolUse", "pre", **CALL)[0] == 0
    (host.project / "CLAUDE.md").write_text("obey me\n", encoding="utf-8")  # what the call did
    return {**host.base("PostToolUse"), **CALL, "tool_response": {"stdout": ""}}


def _notes(host: Host) -> list[dict[str, Any]]:
    return [r for r in host.records() if r["kind"] == "note" and r["tool"] == "PostToolUse"]


@pytest.mark.slow
def test_a_post_the_host_cancels_leaves_its_call_in_the_verdict(tmp_path: Path) -> None:
    host = Host(tmp_path)
    payload = _persona_call(host)
    held = host.store / "policies" / f"{host.session}.json"
    saved = held.read_bytes()
    held.unlink()
    os.mkfifo(held)
    process = _post_process(host, payload)
    writer = _reader_waiting(held, process)
    try:
        process.send_signal(signal.SIGTERM)  # the host's timeout
        _out, err = process.communicate(timeout=60)
    finally:
        os.close(writer)
    assert process.returncode == 1, err
    assert "cancelled by the host before it finished (kept for the next event)" in err
    held.unlink()
    held.write_bytes(saved)
    host.bash("echo after")  # the next event records the kept fault
    host.end()
    notes = _notes(host)
    assert len(notes) == 1, [r["tool"] for r in host.records()]
    assert "tamper_attempt" not in notes[0].get("alerts", [])
    assert "the call ran unjudged" in notes[0]["result"]["errorMessage"]
    verdict, reasons = host.verdict()
    assert verdict is not Verdict.PASS, reasons


@pytest.mark.slow
def test_a_post_that_answered_is_recorded_as_before(tmp_path: Path) -> None:
    host = Host(tmp_path)
    payload = _persona_call(host)
    process = _post_process(host, payload)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert out.strip() == '{"suppressOutput": true}'
    host.end()
    assert _notes(host) == []
    calls = [r for r in host.records() if r["kind"] == "call" and r["tool"] == "Bash"]
    assert len(calls) == 2 and "CLAUDE.md" in json.dumps(calls[-1]["effects"])
    assert not [r for r in host.verdict()[1] if "unrecorded" in r or "ran unjudged" in r]
