"""Contain a command's whole process tree on Linux: nothing it starts outlives it.

A process group alone does not hold a command: a process may leave it (``setsid``), fork twice so
that its parent dies, and drop its environment (``env -i``), and then nothing links it to the
command that started it. Linux keeps one link: an orphan is re-parented to its nearest ancestor
that is a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``), not to ``init``.

So a contained command does not run as a child of the calling process but under a small
supervisor (this file, run as a script by the same Python with only the standard library):

* the supervisor makes itself a child subreaper, then starts the command. Whatever the command
  starts stays the supervisor's descendant however it detaches; its orphans become its children;
* when the command ends, or on a stop request (``SIGUSR1``: at once; ``SIGTERM``: after a grace
  for the command to end), the supervisor freezes (``SIGSTOP``) every descendant and every
  process of its own session or group, again until no new one appears (so a process that forks
  fast is caught too, within bounds), then kills (``SIGKILL``) and reaps them all;
* it then writes one record to a pipe only the caller holds — ``ok <wait status>`` — and exits
  0. Anything else (killed, stopped until the caller's deadline, a record missing or malformed,
  the tree not ended within bounds) is an unclean end.

Attribution is exact between concurrent calls: each call's orphans re-parent to that call's
supervisor, never to the calling process while the supervisor lives, so one call's end never
touches another call's processes, nor any process the caller started otherwise (MCP servers,
test workers).

The calling process is made a child subreaper too, as a backstop for an unclean end (a command
that kills its own supervisor hands its orphans to the caller instead of ``init``). Only then
does the caller sweep: it ends its children that started after the supervisor, were not its
children before the call, and are no supervisor of a call in flight — and their descendants —
plus every process left in the supervisor's session or group. That sweep cannot tell an orphan
from a process another thread of the caller started meanwhile, so it runs only after an unclean
end. Orphans of the caller's other subprocess trees that re-parent to it are not reaped here.

Off Linux, and on Linux without ``/proc`` (or when this module is no file to run), nothing of
this applies: :func:`contained` is off and callers keep their process-group kill. On Linux a
caller that cannot become a subreaper runs nothing (:class:`ContainmentError`).
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import threading
import time

TYPE_CHECKING = False

if TYPE_CHECKING:  # the supervisor starts with as few imports as it can
    from collections.abc import Callable, Iterable, Sequence
    from typing import Protocol, TypeVar

    class _HasPid(Protocol):
        @property
        def pid(self) -> int: ...

    _Started = TypeVar("_Started", bound=_HasPid)

PR_SET_CHILD_SUBREAPER = 36
"""The ``prctl`` option that makes a process the reaper of its descendants' orphans."""
_PROC = "/proc"
_SCRIPT = os.path.abspath(__file__)
#: How the supervisor starts: this file imported as a module of its own, so its compiled form
#: is read from the bytecode cache instead of compiling the source at every call (its folder
#: last on the path, so no module beside it can stand in for one of the standard library).
_BOOT = (
    "import sys; sys.path.append(sys.argv.pop(1)); import descendants; "
    "sys.exit(descendants.supervise(sys.argv[1:]))"
)
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_WAKE = {signal.SIGCHLD, signal.SIGUSR1, *_STOP_SIGNALS}
_NOT_STARTED = 127
_ROUNDS = 200
_END_WITHIN_S = 3.0
_reaper_pid = 0
_reaper_lock = threading.Lock()
_in_flight: set[int] = set()


class Proc:
    """One line of ``/proc/<pid>/stat``: who a process is, whose child, in which group, since
    when (clock ticks since boot), in which state (``Z``: a zombie)."""

    __slots__ = ("pgid", "pid", "ppid", "sid", "start", "state")

    def __init__(self, pid: int, stat: bytes) -> None:
        # The command name (field 2) may hold spaces and parentheses: split after the last ")".
        fields = stat[stat.rindex(b")") + 2 :].split()
        self.pid = pid
        self.state = fields[0].decode("ascii", "replace")
        self.ppid, self.pgid, self.sid, self.start = (int(fields[i]) for i in (1, 2, 3, 19))


def _stat(pid: int | str) -> bytes:
    fd = os.open(f"{_PROC}/{pid}/stat", os.O_RDONLY)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def become_subreaper() -> bool:
    """Make this process a child subreaper; whether it is one (never on other systems)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def processes() -> dict[int, Proc]:
    """Every process ``/proc`` shows, by pid (empty without ``/proc``)."""
    table: dict[int, Proc] = {}
    try:
        names = os.listdir(_PROC)
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            table[int(name)] = Proc(int(name), _stat(name))
        except (OSError, ValueError, IndexError):
            continue
    return table


def descendants(table: dict[int, Proc], roots: Iterable[int]) -> set[int]:
    """``roots`` and every process below them in ``table``."""
    children: dict[int, list[int]] = {}
    for proc in table.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    found: set[int] = set()
    stack = list(roots)
    while stack:
        pid = stack.pop()
        if pid in found:
            continue
        found.add(pid)
        stack.extend(children.get(pid, ()))
    return found


def _signal(pids: Iterable[int], sig: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            continue


def end_tree(find: Callable[[], set[int]], quiet: Callable[[], bool]) -> bool:
    """Freeze, then kill, what ``find`` names (live pids) until it names nothing and ``quiet``
    says nothing died while it looked; whether that happened within bounds.

    A scan of ``/proc`` is not atomic: a process that forks and dies while it runs hides its
    child. Its death shows as a zombie to reap, so an empty scan counts only when ``quiet``.
    """
    frozen: set[int] = set()
    deadline = time.monotonic() + _END_WITHIN_S
    for _ in range(_ROUNDS):
        new = find() - frozen
        if not new or time.monotonic() > deadline:
            break
        _signal(new, signal.SIGSTOP)
        frozen |= new
    for _ in range(_ROUNDS):
        _signal(frozen, signal.SIGKILL)
        frozen = find()
        if not frozen and quiet():
            return True
        if time.monotonic() > deadline:
            return False
    return False


def _started_at(pid: int) -> int:
    """When ``pid`` started (clock ticks since boot; 0 when it cannot be read)."""
    try:
        return Proc(pid, _stat(pid)).start
    except (OSError, ValueError, IndexError):
        return 0


def _live(table: dict[int, Proc], pids: set[int]) -> set[int]:
    return {pid for pid in pids if pid in table and table[pid].state != "Z"}


# -- the supervisor ----------------------------------------------------------------------------


def _tree_of(me: int) -> set[int]:
    table = processes()
    roots = {p.pid for p in table.values() if p.sid == me or p.pgid == me}
    return _live(table, descendants(table, roots | {me})) - {me}


def _reap(child: int, status: list[int]) -> int:
    """Reap every zombie child (``child``'s status into ``status``); how many there were."""
    reaped = 0
    while True:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped += 1
        if pid == child:
            status.append(wait_status)


def supervise(argv: Sequence[str]) -> int:
    """Run as the supervisor (see the module doc): ``argv`` is the status pipe's descriptor,
    the grace in seconds, ``--`` and the command."""
    status_fd, grace_s, command = int(argv[0]), float(argv[1]), list(argv[3:])
    os.set_inheritable(status_fd, False)
    me = os.getpid()

    def report(record: str) -> None:
        os.write(status_fd, record.encode() + b"\n")

    if not become_subreaper():
        report(f"error {ctypes.get_errno() or 1}")
        return _NOT_STARTED
    signal.pthread_sigmask(signal.SIG_BLOCK, _WAKE)
    try:
        child = os.posix_spawnp(
            command[0],
            command,
            dict(os.environ),
            setsigmask=(),
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
        )
    except OSError as exc:
        report(f"error {exc.errno or 1}")
        return _NOT_STARTED
    status: list[int] = []
    deadline: float | None = None
    while True:
        _reap(child, status)
        if status:
            break
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        info = signal.sigtimedwait(_WAKE, 3600.0 if wait is None else wait)
        if info is None and deadline is not None:
            break
        if info is not None and info.si_signo == signal.SIGUSR1:
            break
        if info is not None and info.si_signo in _STOP_SIGNALS and deadline is None:
            deadline = time.monotonic() + grace_s

    def left() -> set[int]:
        _reap(child, status)
        return _tree_of(me)

    ended = end_tree(left, lambda: _reap(child, status) == 0)
    _reap(child, status)
    report(f"ok {status[0]}" if ended and status else "unclean")
    return 0


# -- the caller's side -------------------------------------------------------------------------


def _caller_is_subreaper() -> bool:
    global _reaper_pid
    with _reaper_lock:
        if _reaper_pid != os.getpid() and become_subreaper():
            _reaper_pid = os.getpid()
        return _reaper_pid == os.getpid()


def contained() -> bool:
    """Whether commands run contained here: on Linux with ``/proc`` (this module a file)."""
    return (
        sys.platform.startswith("linux")
        and bool(sys.executable)
        and os.path.isfile(_SCRIPT)
        and os.path.exists(f"{_PROC}/self/stat")
    )


class ContainmentError(OSError):
    """The command could not be started contained (``errno``, ``strerror`` say why)."""

    def __init__(self, errno: int, what: str = "") -> None:
        super().__init__(errno, f"{what}{os.strerror(errno)}")


class Supervisor:
    """The caller's handle on one contained command: its argv to start, then its end.

    Start :attr:`argv` through :meth:`launch` (with ``pass_fds=pass_fds`` and
    ``start_new_session=True``), ask it to :meth:`stop` if need be, and call :meth:`finish` once
    the process exited (before reaping it), or :meth:`abandon` when it did not start.
    """

    def __init__(self, command: Sequence[str], grace_s: float) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        self.argv = [
            sys.executable, "-I", "-S", "-c", _BOOT, os.path.dirname(_SCRIPT),
            str(self._write), repr(grace_s), "--",
        ]  # fmt: skip
        self.argv += list(command)
        self.pass_fds = (self._write,)
        self._pid = 0
        self._start = 0
        self._before: set[int] = set()

    def launch(self, start: Callable[[], _Started]) -> _Started:
        """Run ``start`` (which starts :attr:`argv`); note the supervisor it started.

        This process is made a child subreaper first (:class:`ContainmentError` when it cannot
        be one). Its children are noted just before, and the supervisor is registered as in
        flight before another call's sweep can see it.
        """
        if not _caller_is_subreaper():
            os.close(self._write)
            raise ContainmentError(ctypes.get_errno() or 1, "cannot become a child subreaper: ")
        me = os.getpid()
        with _reaper_lock:
            self._before = {p.pid for p in processes().values() if p.ppid == me}
            try:
                process = start()
            finally:
                os.close(self._write)
            self._pid = process.pid
            _in_flight.add(process.pid)
        self._start = _started_at(process.pid)
        return process

    def reported(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the supervisor's report (or its end); whether it came."""
        try:
            return bool(select.select([self._read], [], [], timeout_s)[0])
        except (OSError, ValueError):
            return True

    def abandon(self) -> None:
        """Release what :meth:`launch` held when ``start`` failed."""
        os.close(self._read)

    def stop(self) -> None:
        """Ask the supervisor to end the command's tree now (resumed first: a command may have
        stopped it)."""
        if self._pid:
            _signal((self._pid,), signal.SIGUSR1)
            _signal((self._pid,), signal.SIGCONT)

    def finish(self, exit_code: int | None = None) -> int:
        """The command's return code (``-N``: killed by signal N), once the supervisor exited
        (``exit_code``: the supervisor's own, when the caller has reaped it already).

        After an unclean end the caller's own orphans are swept first (see the module).
        Raises :class:`ContainmentError` when the supervisor could not start the command.
        """
        try:
            record = os.read(self._read, 256).decode("ascii", "replace")
        except OSError:
            record = ""
        finally:
            os.close(self._read)
        with _reaper_lock:
            _in_flight.discard(self._pid)
        if exit_code is None:
            exit_code = self._exit_code()
        words = record.split()
        if record.count("\n") == 1 and len(words) == 2 and words[1].lstrip("-").isdigit():
            if words[0] == "error" and exit_code == _NOT_STARTED:
                raise ContainmentError(int(words[1]))
            if words[0] == "ok" and exit_code == 0:
                return os.waitstatus_to_exitcode(int(words[1]))
        self._sweep()
        return -int(signal.SIGKILL)

    def _exit_code(self) -> int | None:
        if not self._pid:
            return None
        info = os.waitid(os.P_PID, self._pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if info is None or info.si_code != os.CLD_EXITED:
            return None
        return info.si_status

    def _sweep(self) -> None:
        me, supervisor = os.getpid(), self._pid

        def orphans() -> set[int]:
            table = processes()
            with _reaper_lock:
                busy = set(_in_flight)
            roots = {
                p.pid
                for p in table.values()
                if (p.sid == supervisor or p.pgid == supervisor)
                or (
                    p.ppid == me
                    and p.start >= self._start
                    and p.pid not in self._before | busy | {supervisor}
                )
            }
            found = descendants(table, roots) - {supervisor, me}
            swept.update(pid for pid in found if pid in table and table[pid].ppid == me)
            return _live(table, found)

        def quiet() -> bool:
            time.sleep(0.01)
            return not orphans()

        swept: set[int] = set()
        end_tree(orphans, quiet)
        for pid in swept:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                continue


if __name__ == "__main__":
    sys.exit(supervise(sys.argv[1:]))
