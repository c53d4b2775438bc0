"""What a session's calls did together, carried from one call to the next.

Three judgements span calls: tracked files lost over several calls (a large deletion shared
out), commits one call leaves named by no ref that a later call prunes (:mod:`.history`), and
the pieces of a known value the model read over several outputs (:class:`~.outputs.OutputStream`).
An :class:`~pytest_harness_audit.inspect.Inspector` keeps them in memory; a door whose calls each
run in a process of their own (the host hook) hands them on as :class:`SessionSpans`, merged
with what parallel calls handed on meanwhile (:meth:`SessionSpans.rebased`).

What the outputs held is carried as :class:`ReadMemory`: which places of which value (named by
its fingerprint) were read, never a character of the value or of the outputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

#: At most this many paths or commits are carried (a session past it is judged from what fits).
MAX_CARRIED = 50_000
#: A carried place of a value is below this (no known value is longer).
MAX_PLACE = 1 << 20

Places = tuple[str, int, int, int]
"""``(fingerprint, core length, start, stop)``: the places ``start:stop`` of a value's core
that outputs held (:class:`~._runs.PieceMemory`)."""
Cut = tuple[str, int, int, bool]
"""``(fingerprint, form, cut, is_prefix)``: a prefix or suffix of a form of a value that an
output held (:class:`~._fragments.FragmentMemory`)."""


@dataclass(frozen=True)
class ReadMemory:
    """What the model's reads held of known values so far, by place (see the module doc)."""

    pieces: frozenset[Places] = frozenset()
    cuts: frozenset[Cut] = frozenset()

    def to_json(self) -> dict[str, list[list[Any]]]:
        """The JSON form (sorted lists)."""
        return {
            "pieces": [list(p) for p in sorted(self.pieces)],
            "cuts": [list(c) for c in sorted(self.cuts)],
        }

    @classmethod
    def from_json(cls, data: object) -> ReadMemory:
        """Read :meth:`to_json`'s form; an entry of another shape is left out."""
        if not isinstance(data, Mapping):
            return cls()
        pieces = frozenset(
            (entry[0], entry[1], entry[2], entry[3])
            for entry in _entries(data.get("pieces"))
            if _numbers(entry[1:]) and 0 <= entry[2] < entry[3] <= entry[1]
        )
        cuts = frozenset(
            (entry[0], entry[1], entry[2], entry[3])
            for entry in _entries(data.get("cuts"))
            if _numbers(entry[1:3]) and isinstance(entry[3], bool)
        )
        return cls(_bounded(pieces), _bounded(cuts))

    def __or__(self, other: ReadMemory) -> ReadMemory:
        """Both memories: the places either held (overlapping places joined), every cut."""
        return ReadMemory(
            _bounded(_joined(self.pieces | other.pieces)), _bounded(self.cuts | other.cuts)
        )


def _joined(pieces: frozenset[Places]) -> frozenset[Places]:
    """``pieces`` with the places of a value that overlap or touch made one."""
    joined: list[Places] = []
    for piece in sorted(pieces):
        last = joined[-1] if joined else None
        if last is not None and last[:2] == piece[:2] and piece[2] <= last[3]:
            joined[-1] = (*last[:3], max(last[3], piece[3]))
        else:
            joined.append(piece)
    return frozenset(joined)


@dataclass(frozen=True)
class SessionSpans:
    """The tracked files the session lost and did not put back, and the commits its calls
    left unnamed while they still existed."""

    lost: frozenset[str] = frozenset()
    unnamed: frozenset[str] = frozenset()
    #: What the model read of known values (pieces of one, over several outputs).
    read: ReadMemory = ReadMemory()

    def to_json(self) -> dict[str, Any]:
        """The JSON form (sorted lists)."""
        data: dict[str, Any] = {"lost": sorted(self.lost), "unnamed": sorted(self.unnamed)}
        if self.read != ReadMemory():
            data["read"] = self.read.to_json()
        return data

    @classmethod
    def from_json(cls, data: object) -> SessionSpans:
        """Read :meth:`to_json`'s form; anything else (a missing or changed entry) is empty."""
        if not isinstance(data, Mapping):
            return cls()
        return cls(
            _strings(data.get("lost")),
            _strings(data.get("unnamed")),
            ReadMemory.from_json(data.get("read")),
        )

    def rebased(self, seed: SessionSpans, stored: SessionSpans) -> SessionSpans:
        """These spans, grown from ``seed``, applied to ``stored`` (what the session holds now,
        parallel calls included): what this call added is added, what it dropped is dropped
        (what was read is never dropped: the model keeps it)."""
        lost = (stored.lost - (seed.lost - self.lost)) | (self.lost - seed.lost)
        unnamed = (stored.unnamed - (seed.unnamed - self.unnamed)) | (self.unnamed - seed.unnamed)
        return SessionSpans(_bounded(lost), _bounded(unnamed), stored.read | self.read)


def _strings(value: Any) -> frozenset[str]:
    if not isinstance(value, list):
        return frozenset()
    return _bounded(frozenset(item for item in value if isinstance(item, str)))


def _entries(value: Any) -> list[list[Any]]:
    """The entries of a carried list that are four items long and name a fingerprint."""
    if not isinstance(value, list):
        return []
    return [
        entry
        for entry in value[:MAX_CARRIED]
        if isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str)
    ]


def _numbers(values: list[Any]) -> bool:
    return all(type(v) is int and 0 <= v < MAX_PLACE for v in values)


_T = TypeVar("_T", str, Places, Cut)


def _bounded(values: frozenset[_T]) -> frozenset[_T]:
    if len(values) <= MAX_CARRIED:
        return values
    return frozenset(sorted(values)[:MAX_CARRIED])
