from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from pytest_harness_audit.tools import ToolBox
from pytest_harness_audit.tools.shell import MAX_OUTPUT_CHARS, exit_status


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child of an exited shell may linger as a zombie until reaped by init.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_until_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not process_alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_success_returns_stdout_and_stderr_interleaved(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Bash", {"command": "echo out; echo err >&2; echo again"})
    assert outcome.status == "success"
    assert outcome.output == "out\nerr\nagain\n"


def test_nonzero_exit_is_an_error_with_code_and_output(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Bash", {"command": "echo working; echo boom >&2; exit 3"})
    assert outcome.status == "error"
    assert outcome.error_message == "Bash: command failed with exit code 3: boom"
    assert outcome.output == "working\nboom\n"


def test_killed_by_signal_is_reported(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Bash", {"command": "kill -TERM $$"})
    assert outcome.error_message == "Bash: command killed by signal SIGTERM"


@pytest.mark.parametrize(
    ("command", "status"),
    [
        ("true", 0),
        ("exit 1", 1),
        ("echo boom >&2; exit 2", 2),
        ("kill -TERM $$", None),  # killed: not the command's own exit
        ("sleep 5", None),  # timed out
    ],
)
def test_the_exit_status_is_told_from_the_outcome(
    toolbox: ToolBox, command: str, status: int | None
) -> None:
    outcome = toolbox.run("Bash", {"command": command, "timeout": 300})
    assert exit_status(outcome.error_message) == status


def test_timeout_kills_the_whole_process_group(toolbox: ToolBox, root: Path) -> None:
    command = "sleep 30 & echo $! > child.pid; echo started; wait"
    started = time.monotonic()
    outcome = toolbox.run("Bash", {"command": command, "timeout": 300})
    assert time.monotonic() - started < 10
    assert outcome.status == "error"
    assert outcome.error_message == (
        "Bash: command timed out after 300 ms; its process group was killed"
    )
    assert outcome.output == "started\n"
    assert wait_until_dead(int((root / "child.pid").read_text()))


def test_background_processes_do_not_outlive_the_call(toolbox: ToolBox, root: Path) -> None:
    outcome = toolbox.run("Bash", {"command": "sleep 30 > /dev/null 2>&1 & echo $! > child.pid"})
    assert outcome.status == "success"
    assert wait_until_dead(int((root / "child.pid").read_text()))


def test_environment_is_the_workspace_not_the_test_process(
    toolbox: ToolBox, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUPER_SECRET_TOKEN", "leak-me")
    fresh = ToolBox(root)
    outcome = fresh.run("Bash", {"command": 'echo "[$SUPER_SECRET_TOKEN]" "$HOME"'})
    assert outcome.output == f"[] {os.path.realpath(root)}\n"


def test_python_on_path_is_the_running_interpreter(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Bash", {"command": "python -c 'import sys; print(sys.prefix)'"})
    assert outcome.output == f"{sys.prefix}\n"


def test_extra_environment_reaches_the_command(root: Path) -> None:
    toolbox = ToolBox(root, bash_env={"GREETING": "hello"})
    assert toolbox.run("Bash", {"command": "echo $GREETING"}).output == "hello\n"


def test_long_output_is_truncated_with_a_note(toolbox: ToolBox) -> None:
    outcome = toolbox.run(
        "Bash", {"command": f"head -c {MAX_OUTPUT_CHARS + 500} /dev/zero | tr '\\0' x"}
    )
    assert outcome.status == "success"
    assert outcome.output.startswith("x" * MAX_OUTPUT_CHARS + "\n[output truncated: ")
    assert outcome.output.endswith(f"{MAX_OUTPUT_CHARS + 500} bytes in all]")


def test_stdin_is_closed(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Bash", {"command": "cat; echo done", "timeout": 5000})
    assert outcome.output == "done\n"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "Bash: parameter 'command' is required"),
        ({"command": ""}, "Bash: parameter 'command' must be a non-empty string (got '')"),
        (
            {"command": "true", "timeout": 0},
            "Bash: parameter 'timeout' must be an integer between 1 and 600000 (got 0)",
        ),
        (
            {"command": "true", "timeout": "5s"},
            "Bash: parameter 'timeout' must be an integer (got '5s')",
        ),
        (
            {"command": "true", "run_in_background": True},
            "Bash: run_in_background is not supported in the harness",
        ),
    ],
)
def test_bad_parameters(toolbox: ToolBox, params: dict[str, object], message: str) -> None:
    assert toolbox.run("Bash", params).error_message == message


def test_description_is_accepted(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Bash", {"command": "true", "description": "Do nothing"})
    assert (outcome.status, outcome.output) == ("success", "")
