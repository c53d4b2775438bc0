"""Upstream MCP servers (and agents) of the tests started as forks of a server that has
imported the SDK.

A Python upstream or agent (``python script.py …`` or ``python -m module …``) spends most of
its start importing the MCP SDK. ``launched(argv)`` gives the command line that starts it through
``fork_launch.py`` instead: a process that imports nothing, hands its standard streams,
environment and working directory to this module's fork server, and exits as the forked child
does. The child is a process of its own, started from a state where only modules were imported,
and ends when the launcher is killed.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
LAUNCHER = os.path.join(HERE, "fork_launch.py")
#: What the upstreams of the tests import (importing runs no server).
PRELOADED = ("anyio", "mcp.server.mcpserver", "mcp.server.stdio", "mcp_server_git.server")


#: The server's module path without its own additions (``-c``'s ``''`` and this folder).
_BASE_PATH: list[str] = []


def _run_child(request: dict[str, object], fds: list[int]) -> int:
    """In the forked child: take the launcher's streams and run its command line."""
    import io
    import runpy
    import signal
    import threading
    import traceback

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    launcher = int(str(request["launcher"]))

    def end_with_the_launcher() -> None:
        watched = os.pidfd_open(launcher)
        select.select([watched], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=end_with_the_launcher, daemon=True).start()
    os.chdir(str(request["cwd"]))
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8"
    )
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8"
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )
    argv = [str(a) for a in request["argv"]]  # type: ignore[attr-defined]
    code = 0
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            sys.path[:] = [os.getcwd(), *_BASE_PATH]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv
            sys.path[:] = [os.path.dirname(os.path.abspath(argv[0])), *_BASE_PATH]
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:  # as the interpreter reads it
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return code


def serve(path: str) -> None:
    """The fork server's loop: one child per launcher connection; exits when its parent's pipe
    (its standard input) closes."""
    import importlib

    _BASE_PATH[:] = [p for p in sys.path if p not in ("", HERE)]
    for name in PRELOADED:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    waiting: dict[int, socket.socket] = {}
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [], 0.02)
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            break
        if listener in ready:
            connection, _ = listener.accept()
            message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
            # one read may bring part of a long request (a large environment): read to its end
            while not message.endswith(b"\n"):
                more = connection.recv(1 << 20)
                if not more:
                    break
                message += more
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    listener.close()
                    connection.close()
                    code = _run_child(json.loads(message), fds)
                finally:
                    os._exit(code & 0xFF)
            for fd in fds:
                os.close(fd)
            connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            waiting[pid] = connection
        while waiting:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            connection = waiting.pop(pid)
            try:
                code = os.waitstatus_to_exitcode(status)
                connection.sendall(json.dumps({"code": code}).encode() + b"\n")
            except OSError:
                pass
            connection.close()


class _Server:
    """This test process's fork server, started at its first use."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self.path = ""

    def started(self) -> str:
        if self._process is None or self._process.poll() is not None:
            self.path = os.path.join(tempfile.mkdtemp(prefix="fork-up-"), "s")
            code = f"import sys; sys.path.insert(0, {HERE!r}); "
            code += f"import fork_upstream; fork_upstream.serve({self.path!r})"
            self._process = subprocess.Popen(
                [sys.executable, "-c", code],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert self._process.stdout is not None
            assert self._process.stdout.readline().strip() == "ready"
            atexit.register(self.stop)
        return self.path

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait(timeout=30)


_SERVER = _Server()


def launched(argv: list[str]) -> list[str]:
    """``argv`` (``[sys.executable, script-or--m, …]``) as a command line that starts it
    through the fork server; another command line is given back as it is."""
    if (
        len(argv) < 2
        or argv[0] != sys.executable
        or not hasattr(os, "pidfd_open")
        or os.environ.get("HARNESS_AUDIT_TEST_REAL_UPSTREAMS")
    ):
        return list(argv)
    return [sys.executable, "-I", "-S", LAUNCHER, _SERVER.started(), *argv[1:]]
