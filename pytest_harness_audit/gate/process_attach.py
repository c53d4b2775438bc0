"""Commands that stop a process by attaching to it, or kill the processes using a file or a port.

A debugger or tracer attached to a process stops it (``gdb -p $PPID`` holds the host until it
detaches; ``gdb -p PID -batch -ex kill`` ends it), and ``fuser -k`` kills every process using a
file, a folder or a port: the hook steps run in the project's folder, the recording proxy
listens on a port. :func:`attaches` tells whether such a command reaches a harness process,
judged as :mod:`.process_guard` judges ``kill``:

* ``gdb``/``lldb``/``strace``/``ltrace``/``gcore``/``pstack``/``py-spy``/``reptyr`` of
  ``$PPID``, of ``-1``/``0``, of a live id that is this process, an ancestor (the host) or a
  process running the package (``-p ID``, ``--pid=ID``, ``gdb PROGRAM ID``, ``-ex 'attach
  ID'``, ``gcore ID``), or of an id only the run knows beside a look-up that can find the
  harness;
* ``fuser -k`` (any signal but ``0``/``CONT``) of a mount (``-m``: every process of the file
  system), of ``/``, of the workspace's folder (where the host runs its hooks), of a file or
  folder a live harness process has open, runs or works in, or of a port (``8000/tcp``, ``-n tcp
  8000``) a live harness process holds a socket on (the proxy's: it listens on the port it is
  given, or a free one it announces, so the gate looks the port up rather than knowing it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Final

from pytest_harness_audit.gate.harness_forms import ancestors, protected_pid

#: Debuggers and tracers that attach to a process id (and stop it while attached).
_DEBUGGERS: Final = frozenset(
    {"gdb", "gdb-multiarch", "lldb", "strace", "ltrace", "gcore", "pstack", "py-spy", "reptyr",
     "eu-stack"}
)  # fmt: skip
#: The commands judged here.
ATTACHERS: Final = _DEBUGGERS | {"fuser"}
_PID_OPTIONS: Final = frozenset({"-p", "--pid", "--attach-pid", "-P"})
_ATTACH: Final = re.compile(r"\battach(?:\s+--pid)?\s+(\S+)")
_NUMBER: Final = re.compile(r"-?[0-9]+")
_UNKNOWN: Final = re.compile(r"\$\(…\)|\$\{?[A-Za-z_]|`")
_PORT: Final = re.compile(r"^([0-9]{1,5})?(?:,[^/]*)?/(tcp|udp)$")
_HARMLESS: Final = frozenset({"0", "CONT", "SIGCONT", "18"})
_MAX_PROCESSES: Final = 65536


def attaches(name: str, arguments: Sequence[str], looked_up: bool, root: str | None) -> bool:
    """Whether the command ``name ARGUMENTS`` stops or kills a harness process (module doc)."""
    if name == "fuser":
        return _fuser_reaches(arguments, root)
    return any(_pid_reaches(word, looked_up) for word in _debugged(name, arguments))


def _debugged(name: str, arguments: Sequence[str]) -> Iterator[str]:
    """The process ids a debugger or tracer attaches to."""
    words = list(arguments)
    operands: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        option, equals, value = word.partition("=")
        if option in _PID_OPTIONS and not (name == "py-spy" and option == "-p" and equals):
            if not equals and index < len(words):
                value, index = words[index], index + 1
            yield from value.split(",")
            continue
        if word.startswith("-p") and len(word) > 2 and word[2:3] != "-":
            yield from word[2:].split(",")  # `strace -p123`
            continue
        yield from _ATTACH.findall(word)  # `gdb -ex 'attach 123'`, `lldb -o 'attach 123'`
        if not word.startswith("-"):
            operands.append(word)
    if name in ("gcore", "pstack", "reptyr", "eu-stack"):
        yield from operands  # `gcore ID`
    elif name in ("gdb", "gdb-multiarch") and len(operands) >= 2:
        yield operands[1]  # `gdb PROGRAM ID`


def _pid_reaches(word: str, looked_up: bool) -> bool:
    if "PPID" in word or word in ("0", "-1", "$$"):
        return True  # the host; `$$`: the shell the host runs the command in, stopped
    if _NUMBER.fullmatch(word):
        return int(word) > 0 and protected_pid(int(word))
    return looked_up and bool(_UNKNOWN.search(word))


def _fuser_reaches(arguments: Sequence[str], root: str | None) -> bool:
    kill = mount = False
    signal = ""
    space = ""
    operands: list[str] = []
    words = list(arguments)
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word in ("-n", "--namespace") and index < len(words):
            space, index = words[index], index + 1
            continue
        if word in ("-k", "--kill"):
            kill = True
            continue
        if word in ("-m", "--mount", "-M", "--ismountpoint"):
            mount = mount or word in ("-m", "--mount")
            continue
        if word.startswith("--"):
            continue
        if word.startswith("-") and len(word) > 1:
            letters = word[1:]
            if letters.isdigit() or letters.isupper():
                signal = letters  # `fuser -k -TERM`
                continue
            kill, mount = kill or "k" in letters, mount or "m" in letters
            continue
        operands.append(word)
    if not kill or signal.upper().removeprefix("SIG") in _HARMLESS:
        return False
    if mount:
        return True  # every process using the file system the operand is on
    for operand in operands:
        port = _PORT.match(operand)
        if port or space in ("tcp", "udp"):
            number = port.group(1) if port else operand
            kind = port.group(2) if port else space
            if not number or not number.isdigit() or _port_held(int(number), kind):
                return True
            continue
        if _UNKNOWN.search(operand) or _path_used(operand, root):
            return True
    return False


def lsof_finds(arguments: Sequence[str], root: str | None, names: Callable[[str], bool]) -> bool:
    """Whether ``lsof ARGUMENTS`` (its ids handed to a ``kill``) can list a harness process: a
    port one holds (``-i :8000``), every network file (``-i``), a command name that is a prefix
    of one's (``-c py``; ``names`` tells), a user (``-u``), a file or folder one uses (``+D .``:
    the workspace holds the hooks' folder), or no selection at all (every process)."""
    words = list(arguments)
    selected = False
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        value = words[index] if index < len(words) else ""
        if word.startswith("-i"):
            spec = word[2:] or (value if value[:1] in (":", "@") or "tcp" in value else "")
            index += 1 if not word[2:] and spec else 0
            port = re.search(r":([0-9]{1,5})$", spec)
            if not port or _port_held(int(port.group(1)), "udp" if "udp" in spec else "tcp"):
                return True
            selected = True
        elif word in ("-c", "-u", "-g", "-p", "-d", "+D", "+d", "-s", "-a", "-F", "-r"):
            index += word != "-a"
            if word == "-c" and (names(value) or value.startswith("/")):
                return True
            if word in ("-u", "-g") or (word == "-p" and _pid_reaches(value, True)):
                return True
            if word in ("+D", "+d") and _path_under(value, root):
                return True
            selected = selected or word in ("-c", "-p", "+D", "+d")
        elif not word.startswith(("-", "+")):
            if _UNKNOWN.search(word) or _path_used(word, root):
                return True
            selected = True
    return not selected


def _path_under(path: str, root: str | None) -> bool:
    """Whether the folder ``path`` holds the workspace (where the host runs its hooks) or is a
    folder a harness process uses."""
    base = os.path.realpath(root or os.getcwd())
    target = os.path.realpath(os.path.join(base, os.path.expanduser(path)))
    return base == target or base.startswith(target.rstrip("/") + "/") or _path_used(path, root)


def _path_used(path: str, root: str | None) -> bool:
    """Whether a harness process (this one, an ancestor, one running the package) works in,
    runs or has open the file or folder ``path``, or it is the workspace or ``/``."""
    base = root or os.getcwd()
    target = os.path.realpath(os.path.join(base, os.path.expanduser(path)))
    if target in ("/", os.path.realpath(base)):
        return True  # the host runs its hook steps in the project's folder
    for pid in _harness_processes():
        for link in ("cwd", "exe", "root"):
            try:
                if os.path.realpath(f"/proc/{pid}/{link}") == target:
                    return True
            except OSError:
                continue
        if any(os.path.realpath(one) == target for one in _descriptors(pid)):
            return True
    return False


def _port_held(port: int, kind: str) -> bool:
    """Whether a harness process holds a socket on the local ``port`` (``tcp``/``udp``)."""
    inodes: set[str] = set()
    for table in (kind, f"{kind}6"):
        try:
            with open(f"/proc/net/{table}", encoding="ascii", errors="replace") as handle:
                lines = handle.read(1 << 22).splitlines()[1:]
        except OSError:
            return True  # cannot be looked up: judged closed
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[1].rpartition(":")[2] == f"{port:04X}":
                inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return False
    return any(_link(one) in inodes for pid in _harness_processes() for one in _descriptors(pid))


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def _harness_processes() -> Iterator[int]:
    """This process, its ancestors and the live processes running the package."""
    seen = set(ancestors())
    yield from seen
    try:
        entries = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return
    for name in entries[:_MAX_PROCESSES]:
        pid = int(name)
        if pid not in seen and protected_pid(pid):
            yield pid


def _descriptors(pid: int) -> list[str]:
    folder = f"/proc/{pid}/fd"
    try:
        return [os.path.join(folder, name) for name in os.listdir(folder)[:4096]]
    except OSError:
        return []


__all__ = ["ATTACHERS", "attaches", "lsof_finds"]
