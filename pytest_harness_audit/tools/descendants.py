"""Contain a command's whole process tree on Linux: nothing it starts outlives it.

A process group alone does not hold a command: a process may leave it (``setsid``), fork twice so
that its parent dies, and drop its environment (``env -i``), and then nothing links it to the
command that started it. Linux keeps one link: an orphan is re-parented to its nearest ancestor
that is a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``), not to ``init``.

So a contained command does not run as a child of the calling process but under a small
supervisor (:mod:`~pytest_harness_audit.tools.supervisor`, run as a script by the same Python with
only the standard library):

* the supervisor makes itself a child subreaper, then starts the command. Whatever the command
  starts stays the supervisor's descendant however it detaches; its orphans become its children;
* when the command ends, or on a stop request (``SIGUSR1``: at once; ``SIGTERM``: after a grace
  for the command to end), the supervisor freezes (``SIGSTOP``) every descendant and every
  process of its own session or group, again until no new one appears (so a process that forks
  fast is caught too, within bounds), then kills (``SIGKILL``) and reaps them all (when the
  command left no process, it has no child left, and nothing to look for);
* it then writes one record to a pipe only the caller holds — ``ok <wait status>`` — and exits
  0. Anything else (killed, stopped until the caller's deadline, a record missing or malformed,
  the tree not ended within bounds) is an unclean end.

Attribution is exact between concurrent calls: each call's orphans re-parent to that call's
supervisor, never to the calling process while the supervisor lives, so one call's end never
touches another call's processes, nor any process the caller started otherwise (MCP servers,
test workers).

The calling process is made a child subreaper too while any contained call is in flight, as a
backstop for an unclean end (a command that kills its own supervisor hands its orphans to the
caller instead of ``init``); with no call in flight it is no subreaper (unless it was one before
the first), so orphans of its other subprocess trees go on to ``init`` as usual. Only then
does the caller sweep: it ends its children that started after the supervisor, were not its
children before the call, and are no supervisor of a call in flight — and their descendants —
plus every process left in the supervisor's session or group. That sweep cannot tell an orphan
from a process another thread of the caller started meanwhile, so it runs only after an unclean
end. Orphans of the caller's other subprocess trees that re-parent to it while a call is in
flight are not reaped here.

Off Linux, and on Linux without ``/proc`` (or when this module is no file to run), nothing of
this applies: :func:`contained` is off and callers keep their process-group kill. On Linux a
caller that cannot become a subreaper runs nothing (:class:`ContainmentError`).
"""

from __future__ import annotations

import errno
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from pytest_harness_audit.tools import supervisor as _supervisor
from pytest_harness_audit.tools.supervisor import (
    NOT_STARTED,
    PR_SET_CHILD_SUBREAPER,
    Proc,
    become_subreaper,
    descendants,
    end_tree,
    guard_auditor,
    is_subreaper,
    live,
    processes,
    send_signal,
    started_at,
    supervise,
)

__all__ = [
    "PR_SET_CHILD_SUBREAPER",
    "ContainmentError",
    "Proc",
    "Supervisor",
    "become_subreaper",
    "contained",
    "descendants",
    "end_tree",
    "processes",
    "supervise",
]


class _HasPid(Protocol):
    @property
    def pid(self) -> int: ...


_Started = TypeVar("_Started", bound=_HasPid)

_PROC = "/proc"
_SCRIPT = os.path.abspath(str(_supervisor.__file__))
#: How the supervisor starts: its module imported as a module of its own, so its compiled form
#: is read from the bytecode cache instead of compiling the source at every call (its folder
#: last on the path, so no module beside it can stand in for one of the standard library).
_BOOT = (
    "import sys; sys.path.append(sys.argv.pop(1)); import supervisor; "
    "sys.exit(supervisor.supervise(sys.argv[1:]))"
)
_reaper_lock = threading.Lock()
_in_flight: set[int] = set()
#: This process's contained calls in flight, the process they were counted in, and whether it
#: was a subreaper of its own accord before the first (then it stays one).
_holders = [0, 0, 0]
#: The process made non-dumpable (a forked child keeps the flag, but is checked again).
_guarded_in = [0]


# -- the caller's side -------------------------------------------------------------------------


def _hold_subreaper() -> bool:
    """Count one more contained call in flight, this process a child subreaper while any is;
    whether it is one."""
    with _reaper_lock:
        me = os.getpid()
        if _holders[1] != me:  # a forked child: the flag is not inherited, nor the count
            _holders[:] = [0, me, int(is_subreaper())]
        if _holders[0] == 0 and not _holders[2] and not become_subreaper():
            return False
        _holders[0] += 1
        return True


def _release_subreaper() -> None:
    """Count one contained call fewer; with none left, this process stops being a subreaper
    (unless it was one before), so that orphans of its other subprocesses go on to ``init``."""
    with _reaper_lock:
        if _holders[1] != os.getpid() or _holders[0] == 0:
            return
        _holders[0] -= 1
        if _holders[0] == 0 and not _holders[2]:
            become_subreaper(False)


def _guarded() -> bool:
    """Whether this process is out of its commands' reach (non-dumpable: :func:`guard_auditor`,
    made so once per process)."""
    with _reaper_lock:
        if _guarded_in[0] != os.getpid():
            if not guard_auditor():
                return False
            _guarded_in[0] = os.getpid()
        return True


def _pids() -> set[int]:
    """The pids ``/proc`` lists (no process read)."""
    try:
        return {int(name) for name in os.listdir(_PROC) if name.isdigit()}
    except OSError:
        return set()


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
        self._holding = False

    def launch(self, start: Callable[[], _Started]) -> _Started:
        """Run ``start`` (which starts :attr:`argv`); note the supervisor it started.

        This process is made a child subreaper first, until the call's :meth:`finish`
        (:class:`ContainmentError` when it cannot be one). The processes that exist are noted
        just before, and the supervisor is registered as in flight before another call's sweep
        can see it.
        """
        if not _hold_subreaper():
            os.close(self._write)
            raise ContainmentError(errno.EPERM, "cannot become a child subreaper: ")
        if not _guarded():
            os.close(self._write)
            _release_subreaper()
            raise ContainmentError(errno.EPERM, "cannot keep this process out of reach: ")
        self._holding = True
        try:
            with _reaper_lock:
                self._before = _pids()
                try:
                    process = start()
                finally:
                    os.close(self._write)
                self._pid = process.pid
                _in_flight.add(process.pid)
        except BaseException:
            self._release()
            raise
        self._start = started_at(process.pid)
        return process

    def _release(self) -> None:
        """End this call's hold on the subreaper flag (once)."""
        if self._holding:
            self._holding = False
            _release_subreaper()

    def reported(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the supervisor's report (or its end); whether it came."""
        try:
            return bool(select.select([self._read], [], [], timeout_s)[0])
        except (OSError, ValueError):
            return True

    def abandon(self) -> None:
        """Release what :meth:`launch` held when ``start`` failed."""
        os.close(self._read)
        self._release()

    def stop(self) -> None:
        """Ask the supervisor to end the command's tree now (resumed first: a command may have
        stopped it)."""
        if self._pid:
            send_signal((self._pid,), signal.SIGUSR1)
            send_signal((self._pid,), signal.SIGCONT)

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
        try:
            if exit_code is None:
                exit_code = self._exit_code()
            words = record.split()
            if record.count("\n") == 1 and len(words) == 2 and words[1].lstrip("-").isdigit():
                if words[0] == "error" and exit_code == NOT_STARTED:
                    raise ContainmentError(int(words[1]))
                if words[0] == "ok" and exit_code == 0:
                    return os.waitstatus_to_exitcode(int(words[1]))
            self._sweep()
            return -int(signal.SIGKILL)
        finally:
            self._release()

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
            return live(table, found)

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
