"""Start an upstream server as a child of the fork server (see ``fork_upstream``).

Run as ``python -I -S fork_launch.py SOCKET ARGV...`` in place of ``python ARGV...``: it hands
its standard streams, environment and working directory to the fork server, which forks a
child that runs ``ARGV`` (a script, or ``-m module``) in them; signals it gets are passed on,
and it exits as the child did. It imports only the standard library, so it starts at once.
"""

import contextlib
import json
import os
import signal
import socket
import sys


def main() -> int:
    """Launch, wait, and give the child's exit code."""
    path, argv = sys.argv[1], sys.argv[2:]
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    request = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(), "launcher": os.getpid()}
    socket.send_fds(connection, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
    reader = connection.makefile("r", encoding="utf-8")
    child = int(json.loads(reader.readline())["pid"])

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    line = reader.readline()
    if not line:
        return 1
    code = int(json.loads(line)["code"])
    if code < 0:  # killed by a signal: die by it too
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main())
