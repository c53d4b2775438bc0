"""The ``Bash`` tool: a real subprocess in the workspace, with a timeout and captured output.

Bash cannot be confined by path the way the file tools are: a command may name any file. It runs
with the workspace root as working directory and as ``HOME`` (so ``~`` stays inside), with a small
environment of its own rather than the test process's (no tokens or ``PYTEST_*`` variables leak
in), and what it may do is decided by the policy before it runs. ``PATH`` starts with the
directory of the running Python, so ``python`` and ``pytest`` are the ones of the test run.

Each command runs in its own process group. When the command ends, or its timeout expires, the
whole group is killed, so neither a hung command nor a background process outlives the call.
A caller may also stop a running command (``cancel``, a ``threading.Event``): its group gets
``SIGTERM``, then ``SIGKILL`` after :data:`CANCEL_GRACE_S`, and the call ends as an error that
carries the output so far.

A process can leave the group (``setsid``, a daemon's double fork) and drop its environment
(``env -i``). On Linux nothing it does that way outlives the call either: the command runs under
a supervisor that is a child subreaper (:mod:`~pytest_harness_audit.tools.descendants`), so
every process the command starts stays below it however it detaches, and the supervisor freezes
and kills all of them when the command ends, is stopped or times out, before the call returns.
Each call ends only what its own command started: a concurrent call's processes, and processes
the caller started otherwise (MCP servers, test workers), re-parent elsewhere and are never
touched. A command that kills or stops its own supervisor is caught by the backstop: the
calling process is a subreaper too, and sweeps its new orphans after such an unclean end (the
call then ends as killed by ``SIGKILL``, or as timed out). Each command's environment also
carries a mark of its own (:data:`CALL_MARK`), and processes still carrying it are killed at
the end too. What the command asks another, older process to start (a service manager, ``at``)
is not its descendant and is not followed. Off Linux only the group is killed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_harness_audit.tools.descendants import ContainmentError, Supervisor, contained
from pytest_harness_audit.tools.outcome import ToolFailure
from pytest_harness_audit.tools.params import ToolParams

BASH = "/bin/bash"
"""The shell every command runs in (``/bin/bash -c <command>``)."""
DEFAULT_TIMEOUT_MS = 120_000
"""Timeout of a ``Bash`` call without ``timeout``."""
MAX_TIMEOUT_MS = 600_000
"""The largest ``timeout`` a ``Bash`` call may ask for."""
MAX_OUTPUT_CHARS = 30_000
"""Captured output beyond this many characters is cut, with a note saying how much there was."""
CANCEL_GRACE_S = 0.5
"""Seconds a cancelled command's process group has between ``SIGTERM`` and ``SIGKILL``."""
SUPERVISOR_GRACE_S = 5.0
"""Seconds a command's supervisor has to end its tree when asked, before its group is killed."""
CALL_MARK = "HARNESS_AUDIT_BASH_CALL"
#: The error of a command that exited with a status other than 0 (then ``: `` its last line).
_FAILED = "Bash: command failed with exit code "
"""The environment variable that marks the processes of one ``Bash`` call (a random value)."""
_PROC = Path("/proc")


def bash_environment(root: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a ``Bash`` command sees in the workspace ``root``."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)])
    env = {
        "HOME": str(root),
        "PWD": str(root),
        "PATH": path,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        # Keeps __pycache__ out of the workspace diff.
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if "TMPDIR" in os.environ:
        env["TMPDIR"] = os.environ["TMPDIR"]
    if extra:
        env.update(extra)
    return env


def _kill_group(pgid: int, sig: signal.Signals = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _marked(mark: bytes) -> list[int]:
    """The pids of this user's processes whose environment holds ``mark`` (none without /proc)."""
    pids: list[int] = []
    try:
        entries = os.scandir(_PROC)
    except OSError:
        return pids
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(os.path.join(entry.path, "environ"), "rb") as environ:
                    variables = environ.read().split(b"\0")
            except OSError:
                continue
            if mark in variables:
                pids.append(int(entry.name))
    return pids


def _kill_marked(mark: bytes, rounds: int = 3) -> None:
    """Kill what left the group but still carries the call's mark (what they fork meanwhile
    too: a few rounds)."""
    for _ in range(rounds):
        pids = _marked(mark)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _exited(process: subprocess.Popen[bytes]) -> bool:
    if hasattr(os, "waitid"):
        info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        return info is not None and info.si_pid == process.pid
    return process.poll() is not None


def _wait_for_exit(
    process: subprocess.Popen[bytes],
    timeout_s: float,
    cancel: threading.Event | None = None,
    supervisor: Supervisor | None = None,
) -> bool:
    """Wait until ``process`` exits without reaping it; False when the timeout expires (or
    ``cancel`` is set) first. The exit wakes the wait at once where the process can be watched
    by a descriptor (``pidfd``, Linux); elsewhere, a ``supervisor``'s report does.

    Leaving the exited leader unreaped keeps its process-group id reserved, so killing the group
    afterwards cannot hit an unrelated process that reused the id.
    """
    deadline = time.monotonic() + timeout_s
    exit_fd = _exit_descriptor(process.pid)
    delay = 0.0005
    try:
        while True:
            if _exited(process):
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (cancel is not None and cancel.is_set()):
                return False
            if exit_fd is not None:  # a cancel is looked at as often as the backoff would
                _readable(exit_fd, remaining if cancel is None else min(remaining, _MAX_PAUSE_S))
                continue
            pause = min(delay, remaining)
            if supervisor is not None:
                if supervisor.reported(pause):
                    supervisor, delay = None, 0.0005  # its exit follows the report
                    continue
            elif cancel is not None:
                cancel.wait(pause)
            else:
                time.sleep(pause)
            delay = min(delay * 2, _MAX_PAUSE_S)
    finally:
        if exit_fd is not None:
            os.close(exit_fd)


_MAX_PAUSE_S = 0.05


def _exit_descriptor(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (``None``: none here)."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        fd: int = pidfd_open(pid)
    except OSError:  # an old kernel, a sandbox refusing the call
        return None
    return fd


def _readable(fd: int, timeout_s: float) -> None:
    with contextlib.suppress(OSError, ValueError):
        select.select([fd], [], [], timeout_s)


def _terminate_group(process: subprocess.Popen[bytes], *, supervised: bool) -> None:
    """``SIGTERM`` the command's group; give it :data:`CANCEL_GRACE_S` to end before the
    caller's ``SIGKILL`` (a supervisor ends the tree itself after that grace)."""
    _kill_group(process.pid, signal.SIGTERM)
    if supervised:
        _kill_group(process.pid, signal.SIGCONT)  # a command may have stopped its supervisor
    _wait_for_exit(process, CANCEL_GRACE_S + (SUPERVISOR_GRACE_S if supervised else 0.0))


def _ended(process: subprocess.Popen[bytes], supervisor: Supervisor | None) -> int:
    """The command's return code, its process reaped (and, supervised, its tree ended)."""
    if supervisor is None:
        return process.wait()
    try:
        returncode = supervisor.finish()
    except ContainmentError as exc:
        process.wait()
        raise ToolFailure(f"Bash: cannot start {BASH}: {exc.strerror}") from None
    process.wait()
    return returncode


def _captured(out: Any) -> str:
    total = os.fstat(out.fileno()).st_size
    out.seek(0)
    # UTF-8 needs at most 4 bytes a character.
    data = out.read(MAX_OUTPUT_CHARS * 4)
    text: str = data.decode("utf-8", errors="replace")
    if len(text) > MAX_OUTPUT_CHARS or total > len(data):
        return text[:MAX_OUTPUT_CHARS] + f"\n[output truncated: {total} bytes in all]"
    return text


def _last_line(text: str) -> str:
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()[:200]
    return ""


def run_bash(
    root: Path,
    env: Mapping[str, str],
    params: Mapping[str, Any],
    *,
    cancel: threading.Event | None = None,
) -> str:
    """``Bash(command, timeout=120000, description=None)``: run with ``/bin/bash -c`` in ``root``.

    ``timeout`` is in milliseconds (at most 600000). Output is stdout and stderr interleaved. A
    non-zero exit code, a signal, the timeout or ``cancel`` (set while the command runs) is an
    error outcome that still carries the output.
    """
    args = ToolParams("Bash", params, ("command", "timeout", "description", "run_in_background"))
    command = args.required_str("command")
    timeout_ms = (
        args.optional_int("timeout", minimum=1, maximum=MAX_TIMEOUT_MS) or DEFAULT_TIMEOUT_MS
    )
    args.optional_str("description")
    if args.optional_bool("run_in_background"):
        raise ToolFailure("Bash: run_in_background is not supported in the harness")

    if cancel is not None and cancel.is_set():
        raise ToolFailure("Bash: command cancelled before it started")
    mark = secrets.token_hex(8)
    supervisor = Supervisor([BASH, "-c", command], CANCEL_GRACE_S) if contained() else None
    argv = supervisor.argv if supervisor else [BASH, "-c", command]
    with tempfile.TemporaryFile() as out:

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                argv,
                cwd=root,
                env={**env, CALL_MARK: mark},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=supervisor.pass_fds if supervisor else (),
            )

        try:
            process = supervisor.launch(start) if supervisor else start()
        except OSError as exc:
            if supervisor:
                supervisor.abandon()
            raise ToolFailure(f"Bash: cannot start {BASH}: {exc.strerror or exc}") from None
        try:
            finished = _wait_for_exit(process, timeout_ms / 1000, cancel, supervisor)
            stopped = not finished and cancel is not None and cancel.is_set()
            if stopped:
                _terminate_group(process, supervised=supervisor is not None)
            elif not finished and supervisor:
                supervisor.stop()
                _wait_for_exit(process, SUPERVISOR_GRACE_S)
        finally:
            _kill_group(process.pid)
            _kill_marked(f"{CALL_MARK}={mark}".encode())
            returncode = _ended(process, supervisor)
        output = _captured(out)

    if stopped:
        raise ToolFailure(
            "Bash: command stopped, its process group was ended",
            output=output,
        )
    if not finished:
        raise ToolFailure(
            f"Bash: command timed out after {timeout_ms} ms; its process group was killed",
            output=output,
        )
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        raise ToolFailure(f"Bash: command killed by signal {name}", output=output)
    if returncode != 0:
        last = _last_line(output)
        detail = f": {last}" if last else ""
        raise ToolFailure(f"{_FAILED}{returncode}{detail}", output=output)
    return output


def exit_status(error: str | None) -> int | None:
    """The exit status of a ``Bash`` call whose error message is ``error`` (``None``: it
    succeeded, 0); ``None`` when it did not end by its command's own exit (timed out, stopped,
    killed by a signal)."""
    if error is None:
        return 0
    if not error.startswith(_FAILED):
        return None
    digits = error[len(_FAILED) :].partition(":")[0]
    return int(digits) if digits.isdigit() else None
