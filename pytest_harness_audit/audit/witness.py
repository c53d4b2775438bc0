"""Heads kept out of the agent's reach: the writer's in-memory witness and published heads.

A ``Head`` says "after ``count`` records, the last line hashed to ``hash``". A chain only grows,
so a head stays true for ever: verification with a head (``verify_chain(..., witness=head)``)
requires the chain's line number ``count`` to hash to ``hash`` — and, the links being checked,
every line before it to be exactly what was there when the head was taken. A rewrite of any of
those lines, even with every later link and the anchor recomputed, is then a
``witness_mismatch``.

Published heads may be short: a hex prefix of at least ``MIN_PREFIX`` characters, with or
without the count (``COUNT:HEX``).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from pytest_harness_audit.audit.anchor import GENESIS
from pytest_harness_audit.audit.errors import AuditError

MIN_PREFIX = 12
SHORT = 12
_HEX = re.compile(rf"[0-9a-f]{{{MIN_PREFIX},64}}")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Head:
    """``count`` records (``None``: not known) whose last line hashes to ``hash``.

    ``hash`` is 64 hex digits, ``genesis`` (no record), or a prefix of at least ``MIN_PREFIX``
    hex digits (a published short head).
    """

    count: int | None
    hash: str

    def matches(self, digest: str) -> bool:
        """True when ``digest`` (a full head) is this head."""
        if self.hash == GENESIS or digest == GENESIS:
            return digest == self.hash
        return digest.startswith(self.hash)

    @property
    def short(self) -> str:
        """The first 12 hex digits (``genesis`` stays whole): the published form."""
        return self.hash if self.hash == GENESIS else self.hash[:SHORT]

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"recordCount": self.count, "head": self.hash}

    def __str__(self) -> str:
        return self.hash if self.count is None else f"{self.count}:{self.hash}"


def parse_head(text: str) -> Head:
    """Parse ``HEX``, ``COUNT:HEX`` or ``genesis``; raise ``AuditError`` naming the problem."""
    value = text.strip().lower()
    count: int | None = None
    if ":" in value:
        number, value = value.split(":", 1)
        if not number.isdigit():
            raise AuditError(f"head {text!r}: the count before ':' must be a number")
        count = int(number)
    if value == GENESIS:
        if count not in (None, 0):
            raise AuditError(f"head {text!r}: 'genesis' is the head of 0 records")
        return Head(0, GENESIS)
    if not _HEX.fullmatch(value):
        raise AuditError(
            f"head {text!r}: expected {MIN_PREFIX} to 64 hex digits (optionally COUNT:HEX)"
        )
    return Head(count, value)


def coerce_head(value: Head | str | None) -> Head | None:
    """A ``Head`` from a ``Head``, its text form, or ``None``."""
    if value is None or isinstance(value, Head):
        return value
    return parse_head(value)


def _line_batches(path: str | os.PathLike[str], size_limit: int | None) -> Iterator[list[bytes]]:
    """The complete lines of the file at ``path`` (none when it is missing), a chunk's worth at
    a time, reading no further than ``size_limit`` bytes."""
    remaining = size_limit
    carry = b""
    try:
        handle = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return
    with handle:
        while remaining is None or remaining > 0:
            chunk = handle.read(_CHUNK if remaining is None else min(_CHUNK, remaining))
            if not chunk:
                break
            if remaining is not None:
                remaining -= len(chunk)
            lines = (carry + chunk).split(b"\n")
            carry = lines.pop()
            yield lines


def counts_with_head(
    path: str | os.PathLike[str], head: Head, *, size_limit: int | None = None, limit: int = 2
) -> list[int]:
    """Record counts at which the chain at ``path`` has ``head`` (at most ``limit`` of them).

    Used for a head published without its count; streams the file once.
    """
    if head.hash == GENESIS:
        return [0]
    found: list[int] = []
    sha256 = hashlib.sha256
    count = 0
    for lines in _line_batches(path, size_limit):
        for line in lines:
            count += 1
            if head.matches(sha256(line).hexdigest()):
                found.append(count)
                if len(found) >= limit:
                    return found
    return found


def line_at(path: str | os.PathLike[str], offset: int, size: int) -> bytes | None:
    """The complete line starting at byte ``offset`` (reading no further than ``size``).

    ``None`` when ``offset`` does not start a line or no newline ends it: the file was
    rewritten around that position.
    """
    flags = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        if offset and os.pread(fd, 1, offset - 1) != b"\n":
            return None
        data, position = b"", offset
        while b"\n" not in data and position < size:
            block = os.pread(fd, min(1 << 16, size - position), position)
            if not block:
                break
            data += block
            position += len(block)
    finally:
        os.close(fd)
    line, newline, _ = data.partition(b"\n")
    return line if newline else None


def head_at(
    path: str | os.PathLike[str], count: int, *, size_limit: int | None = None
) -> str | None:
    """The head of the chain at ``path`` after ``count`` records (SHA-256 of line ``count``,
    ``genesis`` for 0); ``None`` when the file holds fewer complete lines. Reads no further."""
    if count == 0:
        return GENESIS
    seen = 0
    for lines in _line_batches(path, size_limit):
        if seen + len(lines) >= count:
            return hashlib.sha256(lines[count - seen - 1]).hexdigest()
        seen += len(lines)
    return None


class HoldsWitness(Protocol):
    """A writer that keeps the head it wrote in memory (``AuditChain`` does)."""

    @property
    def witness(self) -> Head:
        """The head this writer wrote last (or found on opening)."""
        ...


class Witnesses:
    """The in-memory heads of every writer of one session in this process.

    A harness session writes through its own chain and through each recording proxy's chain (a
    thread of the same process, with a chain object of its own): each keeps the head it wrote,
    and the session is verified against all of them, newest first. None of them is in a file the
    agent can reach.
    """

    def __init__(self, *writers: HoldsWitness) -> None:
        self._writers: list[HoldsWitness] = list(writers)

    def add(self, writer: HoldsWitness) -> None:
        """Count ``writer``'s head among the session's witnesses (kept after it is closed)."""
        if all(writer is not known for known in self._writers):
            self._writers.append(writer)

    def heads(self) -> list[Head]:
        """The distinct heads, the most records first."""
        found: list[Head] = []
        for writer in self._writers:
            head = writer.witness
            if head not in found:
                found.append(head)
        return sorted(found, key=lambda head: head.count or 0, reverse=True)

    @property
    def newest(self) -> Head | None:
        """The head of the most records (``None`` without writers)."""
        heads = self.heads()
        return heads[0] if heads else None
