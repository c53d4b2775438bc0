"""The floors of the benchmarks: what the same appends and verifications cost in system calls
and hashing alone, with nothing of the chain's own work, and what the least possible policy
decision costs in this interpreter."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ahocorasick_rs

from pytest_harness_audit.bench.timing import Timing

_FLOOR_LINES = 4_096


def floor_lines(path: Path) -> list[bytes]:
    """The first lines of a written chain (newline included): the bytes the floor writes."""
    lines: list[bytes] = []
    with path.open("rb") as handle:
        for line in handle:
            lines.append(line)
            if len(lines) == _FLOOR_LINES:
                break
    return lines or [b"{}\n"]


def syscall_floor(
    lines: list[bytes], count: int, directory: Path, *, locked: bool = False, hashed: bool = False
) -> Timing:
    """Time the system calls of ``count`` appends alone, with the same bytes.

    Each step is one ``write`` of a chain line on an ``O_APPEND`` descriptor and one ``pwrite``
    of a 128-byte anchor slot; with ``locked`` also the append's lock, length check and unlock
    (``flock``, ``lseek``, ``flock``), as ``AuditChain.append`` does them; with ``hashed`` also
    the SHA-256 of the line, the next record's link, which no append can leave out.
    """
    import fcntl

    from pytest_harness_audit.audit.anchor import writer_slot

    directory.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    fd = os.open(directory / "floor.jsonl", flags, 0o644)
    anchor = os.open(directory / "floor.anchor", os.O_RDWR | os.O_CREAT, 0o644)
    lock = os.open(directory / "floor.lock", os.O_RDWR | os.O_CREAT, 0o644)
    slots = [writer_slot(index, index * 1000, "a" * 64, "r6:0123abcd") for index in range(2)]
    write, pwrite, lseek, flock = os.write, os.pwrite, os.lseek, fcntl.flock
    ex, un, end = fcntl.LOCK_EX, fcntl.LOCK_UN, os.SEEK_END
    size = len(lines)
    timing = Timing()

    def plain() -> None:
        for index in range(count):
            write(fd, lines[index % size])
            pwrite(anchor, slots[index & 1], (index & 1) * 128)

    def protocol() -> None:
        for index in range(count):
            flock(lock, ex)
            lseek(fd, 0, end)
            write(fd, lines[index % size])
            pwrite(anchor, slots[index & 1], (index & 1) * 128)
            flock(lock, un)

    sha256 = hashlib.sha256

    def linked() -> None:
        for index in range(count):
            line = lines[index % size]
            flock(lock, ex)
            lseek(fd, 0, end)
            write(fd, line)
            sha256(line).hexdigest()
            pwrite(anchor, slots[index & 1], (index & 1) * 128)
            flock(lock, un)

    try:
        timing.measure(linked if hashed else protocol if locked else plain)
    finally:
        for descriptor in (fd, anchor, lock):
            os.close(descriptor)
        for name in ("floor.jsonl", "floor.anchor", "floor.lock"):
            (directory / name).unlink(missing_ok=True)
    return timing


def hash_every_line(path: Path) -> int:
    """SHA-256 of every line of ``path``: the floor cost of any verification."""
    sha256 = hashlib.sha256
    count = 0
    with path.open("rb") as handle:
        for line in handle:
            sha256(line).digest()
            count += 1
    return count


#: What the decision floor scans for: a few literals of the kind a prefilter holds.
_FLOOR_LITERALS = (".env", "id_rsa", "secret", "credential", ".ssh/", ".aws/", "rm ", "soul.md")


class _FloorDecision:
    """The least a decision can be: an object with a decision and a rule."""

    __slots__ = ("decision", "rule")

    def __init__(self) -> None:
        self.decision = "allow"
        self.rule: str | None = None


def decision_floor(calls: Sequence[tuple[str, Mapping[str, Any]]], rounds: int = 5) -> float:
    """Best-of-``rounds`` calls/s of the least work any policy evaluation does per call, in this
    interpreter: one call through a method with the engine's signature, one look-up of the tool,
    one parameter read and one automaton scan of its lower-cased text (the prefilter's clearing
    scan), then a decision object handed back. Nothing else: no targets, no rules."""
    automaton = ahocorasick_rs.AhoCorasick(list(_FLOOR_LITERALS))
    scan = automaton.find_matches_as_strings
    decided = _FloorDecision()
    # each tool's first string parameter, known in advance (an engine knows its tools' keys)
    keys: dict[str, str] = {}
    for tool, params in calls:
        if tool not in keys:
            keys[tool] = next((k for k, v in params.items() if type(v) is str), "")

    class Floor:
        def evaluate(
            self, tool: str, params: Mapping[str, Any], *, rate_counter: object = None
        ) -> _FloorDecision:
            text = params.get(keys.get(tool, ""))
            if type(text) is str and scan(text.lower()) and rate_counter is decided:
                return _FloorDecision()  # never: the scan's answer is read, not acted on
            return decided

    evaluate = Floor().evaluate
    for tool, params in calls:
        evaluate(tool, params)
    best = 0.0
    for _ in range(rounds):
        start = time.perf_counter()
        for tool, params in calls:
            evaluate(tool, params, rate_counter=None)
        best = max(best, len(calls) / (time.perf_counter() - start))
    return best
