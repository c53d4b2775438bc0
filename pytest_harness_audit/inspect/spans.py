"""What a session's calls did together, carried from one call to the next.

Two judgements span calls: tracked files lost over several calls (a large deletion shared out),
and commits one call leaves named by no ref that a later call prunes (:mod:`.history`). An
:class:`~pytest_harness_audit.inspect.Inspector` keeps both in memory; a door whose calls each
run in a process of their own (the host hook) hands them on as :class:`SessionSpans`, merged
with what parallel calls handed on meanwhile (:meth:`SessionSpans.rebased`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: At most this many paths or commits are carried (a session past it is judged from what fits).
MAX_CARRIED = 50_000


@dataclass(frozen=True)
class SessionSpans:
    """The tracked files the session lost and did not put back, and the commits its calls
    left unnamed while they still existed."""

    lost: frozenset[str] = frozenset()
    unnamed: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, list[str]]:
        """The JSON form (sorted lists)."""
        return {"lost": sorted(self.lost), "unnamed": sorted(self.unnamed)}

    @classmethod
    def from_json(cls, data: object) -> SessionSpans:
        """Read :meth:`to_json`'s form; anything else (a missing or changed entry) is empty."""
        if not isinstance(data, Mapping):
            return cls()
        return cls(_strings(data.get("lost")), _strings(data.get("unnamed")))

    def rebased(self, seed: SessionSpans, stored: SessionSpans) -> SessionSpans:
        """These spans, grown from ``seed``, applied to ``stored`` (what the session holds now,
        parallel calls included): what this call added is added, what it dropped is dropped."""
        lost = (stored.lost - (seed.lost - self.lost)) | (self.lost - seed.lost)
        unnamed = (stored.unnamed - (seed.unnamed - self.unnamed)) | (self.unnamed - seed.unnamed)
        return SessionSpans(_bounded(lost), _bounded(unnamed))


def _strings(value: Any) -> frozenset[str]:
    if not isinstance(value, list):
        return frozenset()
    return _bounded(frozenset(item for item in value if isinstance(item, str)))


def _bounded(values: frozenset[str]) -> frozenset[str]:
    if len(values) <= MAX_CARRIED:
        return values
    return frozenset(sorted(values)[:MAX_CARRIED])
