"""The supervisor of one contained command (see :mod:`~pytest_harness_audit.tools.descendants`),
and the ``/proc`` reading both sides share.

It runs as a script of its own in a fresh ``python -I -S``: the cost of its start is the cost of
every contained call, so it imports only what it must (``_signal``, not ``signal``, whose enums
pull in half the standard library; no ``threading``), and it scans ``/proc`` only when the
command left processes behind: a child subreaper with no child left has no descendant left
either, as every orphan below it re-parents to it (or to a subreaper below it).
"""

from __future__ import annotations

import _ctypes
import os
import sys
import time

TYPE_CHECKING = False

if TYPE_CHECKING:
    import signal as _signal
    from collections.abc import Callable, Iterable, Sequence
else:
    import _signal

PR_SET_DUMPABLE = 4
"""The ``prctl`` option that makes a process dumpable or not (``/proc/<pid>/mem``, ``ptrace``,
``pidfd_getfd`` of it need ``CAP_SYS_PTRACE`` when it is not)."""
PR_CAPBSET_DROP = 24
"""The ``prctl`` option that drops a capability from the bounding set."""
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
WITHHELD_CAPABILITIES = {
    2: "CAP_DAC_READ_SEARCH",  # open_by_handle_at: any file by its handle
    9: "CAP_LINUX_IMMUTABLE",  # chattr +i on the audit store: the auditor could not append
    16: "CAP_SYS_MODULE",
    17: "CAP_SYS_RAWIO",  # /dev/mem, the disk under the file system
    19: "CAP_SYS_PTRACE",  # the auditor's memory, its descriptors (pidfd_getfd)
    21: "CAP_SYS_ADMIN",  # mount: a folder's files hidden, a package shadowed, with no event
    22: "CAP_SYS_BOOT",
    27: "CAP_MKNOD",  # a device node of the disk
    32: "CAP_MAC_OVERRIDE",
    33: "CAP_MAC_ADMIN",
    34: "CAP_SYSLOG",
    38: "CAP_PERFMON",
    39: "CAP_BPF",
    40: "CAP_CHECKPOINT_RESTORE",
}
"""The capabilities a contained command never has, by number: with them, a command running as
root could read or steal what the auditor holds (its memory, its kernel watches), change files
where no watch sees it (a mount) or outside every file system view. Dropped from the
supervisor's bounding set (so no program the command runs, setuid ones included, gets them)."""
PR_SET_CHILD_SUBREAPER = 36
"""The ``prctl`` option that makes a process the reaper of its descendants' orphans."""
PR_GET_CHILD_SUBREAPER = 37
"""The ``prctl`` option that tells whether a process is a child subreaper."""
NOT_STARTED = 127
"""The supervisor's exit status when it could not start the command."""
_PROC = "/proc"
_STOP_SIGNALS = (_signal.SIGTERM, _signal.SIGHUP, _signal.SIGINT)
_WAKE = {_signal.SIGCHLD, _signal.SIGUSR1, *_STOP_SIGNALS}
_ROUNDS = 200
_END_WITHIN_S = 3.0


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


if TYPE_CHECKING:
    _IntBase = _ctypes._SimpleCData[int]
else:
    _IntBase = _ctypes._SimpleCData


class _Int(_IntBase):
    """A C ``int`` (``c_int``, made here from ``_ctypes`` alone)."""

    _type_ = "i"


class _CFunction(_ctypes.CFuncPtr):
    """A C function returning ``int`` that keeps ``errno`` (as ``CDLL(use_errno=True)``)."""

    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
    _restype_ = _Int


class _Library:
    """The symbols of the running process (``dlopen(NULL)``): the C library among them."""

    def __init__(self) -> None:
        self._handle = _ctypes.dlopen(None, os.RTLD_NOW)  # type: ignore[arg-type]


# The ctypes package takes about 3 ms to import, and the supervisor's start is the cost of every
# contained call: `prctl` is called through `_ctypes`, the part of it that does the work.
_loaded: list[Callable[..., int] | None] = []


def _prctl() -> Callable[..., int] | None:
    """The C library's ``prctl``, looked up once (``None`` off Linux or without it)."""
    if not _loaded:
        function: Callable[..., int] | None = None
        if sys.platform.startswith("linux"):
            try:
                function = _CFunction(("prctl", _Library()))  # type: ignore[arg-type]
            except (OSError, AttributeError):
                function = None
        _loaded.append(function)
    return _loaded[0]


def last_errno() -> int:
    """The ``errno`` the last call through :func:`_prctl` left."""
    return int(_ctypes.get_errno())


def become_subreaper(on: bool = True) -> bool:
    """Make this process a child subreaper (``on``) or no longer one; whether that worked (never
    on other systems)."""
    prctl = _prctl()
    if prctl is None:
        return False
    return int(prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0


def guard_auditor() -> bool:
    """Make this process (the auditor, which starts contained commands) non-dumpable, so that a
    command running as the same user cannot read its memory or take its descriptors without
    ``CAP_SYS_PTRACE`` (which no contained command has); whether that worked (never on other
    systems). Its own ``/proc/self`` stays readable to it; ``fork`` keeps the flag, ``exec``
    resets it."""
    prctl = _prctl()
    if prctl is None:
        return False
    return int(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0


def _inheritable_capabilities() -> int:
    """The capabilities a program this process runs as root would get (``CapBnd`` and
    ``CapInh`` of ``/proc/self/status``, together; -1: not known)."""
    try:
        fd = os.open(f"{_PROC}/self/status", os.O_RDONLY)
        try:
            status = os.read(fd, 1 << 16)
        finally:
            os.close(fd)
        found = 0
        for key in (b"CapBnd:", b"CapInh:"):
            at = status.index(key)
            found |= int(status[at + len(key) : status.index(b"\n", at)], 16)
        return found
    except (OSError, ValueError):
        return -1


def withhold_capabilities() -> str | None:
    """Drop :data:`WITHHELD_CAPABILITIES` from this process's bounding set and clear its ambient
    set (what the command it starts would inherit); the name of one still held when this
    process runs as root and could not drop it (else ``None``: a process of another user has
    no capability to hand on that the bounding set keeps, only a setuid program would, and
    that one is bounded too)."""
    prctl = _prctl()
    if prctl is None:
        return None
    for number in WITHHELD_CAPABILITIES:
        prctl(PR_CAPBSET_DROP, number, 0, 0, 0)  # EINVAL: a capability this kernel lacks
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if os.geteuid() != 0:
        return None
    held = _inheritable_capabilities()
    if held < 0:
        return "the capability sets (unreadable)"
    for number, name in WITHHELD_CAPABILITIES.items():
        if held >> number & 1:
            return name
    return None


def is_subreaper() -> bool:
    """Whether this process is a child subreaper now (never on other systems)."""
    prctl = _prctl()
    if prctl is None:
        return False
    flag = _Int(0)
    return int(prctl(PR_GET_CHILD_SUBREAPER, _ctypes.byref(flag), 0, 0, 0)) == 0 and bool(
        flag.value
    )


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


def send_signal(pids: Iterable[int], sig: int) -> None:
    """Send ``sig`` to each of ``pids`` that still exists and may be signalled."""
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
        send_signal(new, _signal.SIGSTOP)
        frozen |= new
    for _ in range(_ROUNDS):
        send_signal(frozen, _signal.SIGKILL)
        frozen = find()
        if not frozen and quiet():
            return True
        if time.monotonic() > deadline:
            return False
    return False


def started_at(pid: int) -> int:
    """When ``pid`` started (clock ticks since boot; 0 when it cannot be read)."""
    try:
        return Proc(pid, _stat(pid)).start
    except (OSError, ValueError, IndexError):
        return 0


def live(table: dict[int, Proc], pids: set[int]) -> set[int]:
    """The pids of ``pids`` that ``table`` shows running (not zombies)."""
    return {pid for pid in pids if pid in table and table[pid].state != "Z"}


# -- the supervisor ----------------------------------------------------------------------------


def _tree_of(me: int) -> set[int]:
    table = processes()
    roots = {p.pid for p in table.values() if p.sid == me or p.pgid == me}
    return live(table, descendants(table, roots | {me})) - {me}


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


def _childless() -> bool:
    """Whether this process has no child at all, running or ended (nothing is reaped)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return False


def supervise(argv: Sequence[str]) -> int:
    """Run as the supervisor (see the module doc): ``argv`` is the status pipe's descriptor,
    the grace in seconds, ``--`` and the command."""
    status_fd, grace_s, command = int(argv[0]), float(argv[1]), list(argv[3:])
    os.set_inheritable(status_fd, False)
    me = os.getpid()

    def report(record: str) -> None:
        os.write(status_fd, record.encode() + b"\n")

    if not become_subreaper():
        report(f"error {last_errno() or 1}")
        return NOT_STARTED
    # out of the command's reach too: a command could otherwise take the status pipe's end
    if not guard_auditor() or withhold_capabilities() is not None:
        report("error 1")  # EPERM: never run a command that could reach into the auditor
        return NOT_STARTED
    _signal.pthread_sigmask(_signal.SIG_BLOCK, _WAKE)
    try:
        child = os.posix_spawnp(
            command[0],
            command,
            dict(os.environ),
            setsigmask=(),
            setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ),
        )
    except OSError as exc:
        report(f"error {exc.errno or 1}")
        return NOT_STARTED
    status: list[int] = []
    deadline: float | None = None
    while True:
        _reap(child, status)
        if status:
            break
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        info = _signal.sigtimedwait(_WAKE, 3600.0 if wait is None else wait)
        if info is None and deadline is not None:
            break
        if info is not None and info.si_signo == _signal.SIGUSR1:
            break
        if info is not None and info.si_signo in _STOP_SIGNALS and deadline is None:
            deadline = time.monotonic() + grace_s

    if status and _childless():
        # the command ended and left nothing: no process to look for in ``/proc``
        report(f"ok {status[0]}")
        return 0

    def left() -> set[int]:
        _reap(child, status)
        return _tree_of(me)

    ended = end_tree(left, lambda: _reap(child, status) == 0)
    _reap(child, status)
    report(f"ok {status[0]}" if ended and status else "unclean")
    return 0


if __name__ == "__main__":
    sys.exit(supervise(sys.argv[1:]))
