"""Stopping a running ``Bash`` call (``ToolBox.run(..., cancel=event)``): the whole process group
ends — background children, ``nohup`` and ``SIGTERM``-ignoring ones included, and on Linux
processes that left the group with ``setsid`` — and the outcome is an error carrying the output
so far."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from pytest_harness_audit.tools import ToolBox

_LINUX = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _dead_soon(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def _cancel_once(marker: Path, cancel: threading.Event) -> threading.Thread:
    """Set ``cancel`` as soon as the command has written ``marker``."""

    def watch() -> None:
        deadline = time.monotonic() + 20
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)  # let the command write the whole line
        cancel.set()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    "spawn",
    [
        pytest.param("sleep 30 &", id="background"),
        pytest.param("nohup sleep 30 >/dev/null 2>&1 &", id="nohup"),
        pytest.param("(trap '' TERM HUP; sleep 30) &", id="ignores-sigterm"),
        pytest.param("setsid sleep 30 &", id="setsid", marks=_LINUX),
        pytest.param("setsid bash -c 'sleep 30 & wait' &", id="setsid-grandchild", marks=_LINUX),
    ],
)
def test_cancel_ends_the_whole_process_group(root: Path, spawn: str) -> None:
    toolbox = ToolBox(root)
    cancel = threading.Event()
    command = f"echo partial; {spawn} echo $! > child.pid; echo $$ > shell.pid; sleep 30"
    watcher = _cancel_once(root / "shell.pid", cancel)
    outcome = toolbox.run("Bash", {"command": command}, cancel=cancel)
    watcher.join()
    assert outcome.status == "error"
    assert outcome.error_message == "Bash: command stopped, its process group was ended"
    assert outcome.output == "partial\n"
    assert _dead_soon(int((root / "child.pid").read_text()))
    assert _dead_soon(int((root / "shell.pid").read_text()))


def test_a_shell_that_ignores_sigterm_is_killed_after_the_grace(root: Path) -> None:
    toolbox = ToolBox(root)
    cancel = threading.Event()
    command = "trap '' TERM; echo $$ > shell.pid; while true; do sleep 0.1; done"
    watcher = _cancel_once(root / "shell.pid", cancel)
    outcome = toolbox.run("Bash", {"command": command}, cancel=cancel)
    watcher.join()
    assert outcome.error_message == "Bash: command stopped, its process group was ended"
    assert _dead_soon(int((root / "shell.pid").read_text()))


def test_cancel_set_before_the_call_runs_nothing(root: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    outcome = ToolBox(root).run("Bash", {"command": "touch ran"}, cancel=cancel)
    assert outcome.error_message == "Bash: command cancelled before it started"
    assert not (root / "ran").exists()


def test_an_unset_cancel_changes_nothing(root: Path) -> None:
    outcome = ToolBox(root).run("Bash", {"command": "echo ok; exit 0"}, cancel=threading.Event())
    assert (outcome.status, outcome.output) == ("success", "ok\n")


def test_other_tools_take_the_cancel_and_run_to_their_end(root: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    outcome = ToolBox(root).run("Write", {"file_path": "a.txt", "content": "x"}, cancel=cancel)
    assert outcome.status == "success"
    assert (root / "a.txt").read_text() == "x"


@_LINUX
def test_a_finished_command_leaves_no_setsid_escapee_behind(root: Path) -> None:
    toolbox = ToolBox(root)
    command = "setsid bash -c 'echo $$ > escapee.pid; sleep 30' >/dev/null 2>&1 < /dev/null &"
    outcome = toolbox.run("Bash", {"command": f"{command} sleep 0.3; echo done"})
    assert (outcome.status, outcome.output) == ("success", "done\n")
    assert _dead_soon(int((root / "escapee.pid").read_text()))


@_LINUX
def test_each_call_has_a_mark_of_its_own(root: Path) -> None:
    toolbox = ToolBox(root)
    first = toolbox.run("Bash", {"command": "echo $HARNESS_AUDIT_BASH_CALL"}).output
    second = toolbox.run("Bash", {"command": "echo $HARNESS_AUDIT_BASH_CALL"}).output
    assert len(first.strip()) == 16 and first != second


@pytest.mark.slow
def test_a_process_of_another_call_is_not_touched(root: Path) -> None:
    # a long call running beside a short one: the short one's end must not kill the long one's
    toolbox = ToolBox(root)
    results: list[object] = []
    long_call = threading.Thread(
        target=lambda: results.append(
            toolbox.run("Bash", {"command": "echo $$ > long.pid; sleep 1; echo survived"})
        )
    )
    long_call.start()
    deadline = time.monotonic() + 20
    while not (root / "long.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert toolbox.run("Bash", {"command": "true"}).status == "success"
    long_call.join()
    [outcome] = results
    assert getattr(outcome, "output", None) == "survived\n"
