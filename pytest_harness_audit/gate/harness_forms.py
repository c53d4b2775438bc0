"""What the harness's own processes look like to a command that picks processes to signal.

The host starts each hook step as ``/bin/sh -c 'harness-audit hook <step> --preset NAME'``
(or ``--policy FILE``, :mod:`~pytest_harness_audit.doors.hook_install`): a shell whose name is
``sh`` and, under it, the entry point, a script whose process name is ``harness-audit`` and whose
command line is ``<interpreter> <bin>/harness-audit hook <step> …``. The same package runs as
``python -m pytest_harness_audit …``, as the recording proxy (``harness-audit proxy …``) and
inside ``pytest`` (the scripted door), and the host itself is ``claude``. A ``pkill``/``pgrep``
pattern is searched (an extended regular expression, matched with RE2 as an approximation) in the
process name (15 characters) or, with ``-f``, in the command line; ``killall``/``pidof`` compare
names. :class:`HarnessForms` holds those names and command lines, built from this process's own
(the interpreter, the entry point, the storage and policy it runs with), so a pattern that can
match one of them is one that can reach the harness, whatever its spelling. Live process ids are
looked up in ``/proc``: this process, its ancestors (the hook's shell, the host) and any process
whose command line runs the package.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from typing import Any

import re2

from pytest_harness_audit.policy.patterns import RE2_OPTIONS

#: The hook steps the host runs (``harness-audit hook <step>``).
HOOK_STEPS = (
    "pre", "post", "permission-request", "permission-denied", "stop", "subagent-stop",
    "session-start", "session-end", "config-change",
)  # fmt: skip
#: Process names of the harness's processes and of the host that runs them: the shells the
#: host runs hooks through, the entry point, the interpreters, pytest and the host.
BASE_NAMES = ("sh", "bash", "dash", "harness-audit", "python", "python3", "pytest", "claude")
#: Words in a live process's command line that make it one of the harness's.
_MARKERS = ("harness-audit", "pytest_harness_audit", "pytest", "harness_audit")
#: How a hook step's command line names the package (``… harness-audit hook pre …``).
_RUNNERS = ("harness-audit", "pytest_harness_audit")
_COMM_LENGTH = 15


def ere(pattern: str, *, ignore_case: bool = False) -> Any | None:
    """``pattern`` (an extended regular expression) compiled by RE2, whose matching time is
    linear (a hostile pattern cannot hang the gate); ``None`` when it does not compile (the
    caller fails closed)."""
    text = pattern.replace(r"\<", r"\b").replace(r"\>", r"\b")
    try:
        return re2.compile(("(?i)" if ignore_case else "") + text, RE2_OPTIONS)
    except (re2.error, RecursionError, OverflowError, ValueError, TypeError):
        return None


def _own_line(pid: int | str) -> str | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read(1 << 16)
    except OSError:
        return None
    return raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")


def _comm(pid: int | str) -> str | None:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().rstrip("\n")
    except OSError:
        return None


def _stat(pid: int | str) -> tuple[int, int] | None:
    """``(ppid, pgrp)`` of a live process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        fields = text[text.rindex(")") + 2 :].split()
        return int(fields[1]), int(fields[2])
    except (OSError, ValueError, IndexError):
        return None


def ancestors() -> list[int]:
    """This process and its ancestors (the hook's shell, the host, …), init left out."""
    found: list[int] = []
    pid = os.getpid()
    while pid > 1 and pid not in found and len(found) < 64:
        found.append(pid)
        stat = _stat(pid)
        if stat is None:
            break
        pid = stat[0]
    return found


class HarnessForms:
    """The names and command lines of the harness's processes (module docstring)."""

    def __init__(self, storage: str | None = None, policy: str | None = None) -> None:
        executable = sys.executable or "python3"
        version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        entry = shutil.which("harness-audit") or os.path.join(
            os.path.dirname(executable), "harness-audit"
        )
        names = {*BASE_NAMES, version, os.path.basename(executable)[:_COMM_LENGTH]}
        own = _comm("self")
        if own:
            names.add(own)
        # a preset by name (a preset's source is its shipped file), a policy file by its path
        preset = os.path.splitext(os.path.basename(policy))[0] if policy else "safety"
        options = [f"--preset {preset or 'safety'}"]
        if policy and os.path.sep in policy:
            options.append(f"--policy {policy}")
        if storage:
            options = [f"{option} --storage {storage}" for option in options]
        lines: list[str] = []
        for step in HOOK_STEPS:
            for option in options:
                command = f"harness-audit hook {step} {option}"
                lines.append(f"/bin/sh -c {command}")
                lines.append(f"{executable} {entry} hook {step} {option}")
                lines.append(f"{executable} -m pytest_harness_audit hook {step} {option}")
        lines.append(f"{executable} {entry} proxy --workspace . -- server")
        lines.append(f"{executable} -m pytest --harness-audit")
        lines.append(f"{executable} {os.path.dirname(executable)}/pytest --harness-audit")
        lines.append("claude")
        # a hook step's own command line and its shell's, as the host started them (a test
        # run's own command line names its tests, not the harness: left out)
        parent = _stat("self")
        for pid in ("self", *((str(parent[0]),) if parent else ())):
            line = _own_line(pid)
            if line and " hook " in f"{line} " and any(m in line for m in _RUNNERS):
                lines.append(line)
        #: Process names (what ``pkill`` without ``-f``, ``killall`` and ``pidof`` compare).
        self.names = tuple(sorted(names))
        #: Command lines (what ``pkill -f`` searches).
        self.lines = tuple(dict.fromkeys(lines))
        words = {w for text in self.lines for w in text.split()[:2] if "/" in w or "-" not in w}
        #: Program names a ``killall NAME`` also matches (a script by its file's name).
        self.programs = tuple(sorted({*self.names, *(os.path.basename(w) for w in words)}))

    def pattern_matches(self, pattern: str, *, full: bool, exact: bool, ignore_case: bool) -> bool:
        """Whether a ``pkill``/``pgrep`` pattern can select a harness process (``full``: ``-f``,
        ``exact``: ``-x``). A pattern that does not compile counts as matching."""
        compiled = ere(pattern, ignore_case=ignore_case)
        if compiled is None:
            return True
        forms: Iterable[str] = self.lines if full else self.names
        if exact:
            return any(compiled.fullmatch(form) for form in forms)
        return any(compiled.search(form) for form in forms)

    def text_selects(self, text: str) -> bool:
        """Whether code comparing a process's name or command line with the literal ``text``
        (equal, or part of it, in any case) can select a harness process."""
        folded = text.casefold()
        return any(folded in form.casefold() for form in (*self.lines, *self.programs))

    def name_matches(self, name: str, *, ignore_case: bool = False) -> bool:
        """Whether ``killall NAME``/``pidof NAME`` names a harness process."""
        base = os.path.basename(name.rstrip("/")) or name
        fold = str.casefold if ignore_case else str
        for program in self.programs:
            if fold(base) == fold(program):
                return True
            if len(base) >= _COMM_LENGTH and fold(base[:_COMM_LENGTH]) == fold(
                program[:_COMM_LENGTH]
            ):
                return True
        return False


def protected_pid(pid: int) -> bool:
    """Whether the live process ``pid`` is this process, one of its ancestors (the hook's shell,
    the host) or a process running the package."""
    if pid in ancestors():
        return True
    line = _own_line(pid) or ""
    comm = _comm(pid) or ""
    return comm == "harness-audit" or any(marker in line for marker in _MARKERS)


def protected_group(pgrp: int) -> bool:
    """Whether the process group ``pgrp`` holds this process, an ancestor or a process running
    the package."""
    for pid in ancestors():
        stat = _stat(pid)
        if stat is not None and stat[1] == pgrp:
            return True
    try:
        entries = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return True  # cannot be looked up: judged closed
    for name in entries[:65536]:
        stat = _stat(name)
        if stat is not None and stat[1] == pgrp and protected_pid(int(name)):
            return True
    return False


__all__ = [
    "BASE_NAMES",
    "HOOK_STEPS",
    "HarnessForms",
    "ancestors",
    "ere",
    "protected_group",
    "protected_pid",
]
