"""A structured value's text leaves read as one text, so a secret spread over them is found.

Each leaf of a payload (a list item, a field, a mapping key) is scanned on its own, and the
parts of a value split over leaves meet in the fragment memory only when each part is at least
:data:`~._fragments.MIN_FRAGMENT` characters long. A value sent as a list of its characters
(``["s", "k", "-", …]``), of its bytes (``[115, 107, 45, …]``) or of pieces of four characters
is in no leaf and in no fragment. So the leaves are also read joined by a space, in document
order: all of them, the values alone and the keys alone (a mapping's keys interleave with its
values), and each *column*: the leaves at the same place of sibling items (the keys of one
mapping, whatever values they hold; the ``name`` of every record of a list), so that pieces
spread over records are read side by side, not with each record's other fields between them
(``[{"name": "sk-te", "type": "string"}, {"name": "st-4f", …}]``). The matcher's forms then
apply to the joined text — spread out with whitespace, as character codes, every other
character …

Bounded: a leaf longer than ``2 * EDGE`` characters is read at its head and tail only (a value
spread over leaves starts in the tail of one and ends in the head of another), and a value of
one leaf is no view: its leaf is the joined text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

#: Characters of a long leaf read at its head and at its tail.
EDGE = 1024
#: What joins two leaves.
JOIN = " "
#: Most column views of one value (the largest first).
MAX_COLUMNS: Final = 32
_INDEX: Final = re.compile(r"\[[0-9]+\]|<key [0-9]+>|<[0-9]+>")

Leaf = tuple[str, str, bool]
"""``(where, text, is_key)``: one text leaf of a value, in document order."""


@dataclass(frozen=True)
class JoinedView:
    """Leaves joined into one text, and where each leaf's part of it begins."""

    text: str
    wheres: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def covered(self, start: int, end: int) -> list[str]:
        """The ``where`` of every leaf whose part overlaps ``text[start:end]``."""
        first = max(bisect.bisect_right(self.starts, start) - 1, 0)
        found: list[str] = []
        for index in range(first, len(self.wheres)):
            if self.starts[index] >= end:
                break
            if self.ends[index] > start:
                found.append(self.wheres[index])
        return found


def _excerpt(text: str) -> str:
    if len(text) <= 2 * EDGE:
        return text
    return text[:EDGE] + JOIN + text[-EDGE:]


def _view(leaves: Sequence[Leaf]) -> JoinedView:
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    for _, text, _ in leaves:
        part = _excerpt(text)
        starts.append(at)
        ends.append(at + len(part))
        parts.append(part)
        at += len(part) + len(JOIN)
    return JoinedView(
        JOIN.join(parts), tuple(where for where, _, _ in leaves), tuple(starts), tuple(ends)
    )


def _column(where: str) -> str:
    """``where`` with its list indexes and key places left out: the place of a leaf within
    its item (``[3].name`` and ``[4].name`` are one column, as ``<key 0>`` and ``<key 1>``)."""
    return _INDEX.sub(lambda found: "<key>" if found[0][1:4] == "key" else "#", where)


def columns(leaves: Sequence[Leaf]) -> list[list[Leaf]]:
    """The leaves of each column of two leaves or more, in document order (the
    :data:`MAX_COLUMNS` largest); a value's leaves belong to one column each."""
    by_column: dict[str, list[Leaf]] = {}
    for leaf in leaves:
        by_column.setdefault(_column(leaf[0]), []).append(leaf)
    found = [chosen for chosen in by_column.values() if len(chosen) > 1]
    found.sort(key=len, reverse=True)
    return found[:MAX_COLUMNS]


def views(leaves: Sequence[Leaf]) -> Iterator[JoinedView]:
    """The joined views of a value's leaves: all of them, its values alone, its keys alone,
    each of its columns; each only when it joins two leaves or more and differs from one
    given before."""
    given: set[tuple[str, ...]] = set()
    for chosen in (
        list(leaves),
        [leaf for leaf in leaves if not leaf[2]],
        [leaf for leaf in leaves if leaf[2]],
        *columns(leaves),
    ):
        wheres = tuple(where for where, _, _ in chosen)
        if len(chosen) < 2 or wheres in given:
            continue
        given.add(wheres)
        yield _view(chosen)
