"""A value written in rows and read column by column: a transposition of its characters.

Written in ``count`` columns and read a column at a time (``key[0::8] + key[1::8] + …``), a
32-character key is eight words of four characters, each at every eighth place of the key: no
run of the key is in it, and words that short are not placed in it on their own. Such a
spelling is one fixed string per value and column count, so its runs are looked for as the
value's are (:mod:`._runs`), for the value's core and for the whole value (its vendor prefix
and separators read in the columns too).
"""

from __future__ import annotations

from collections.abc import Iterator

from pytest_harness_audit.inspect import _skeleton

#: Column counts looked for (two to four columns are also every second … fourth character,
#: which :mod:`._runs` reads as pieces).
MAX_COLUMNS = 8


def columns(text: str, count: int) -> str:
    """``text`` written in ``count`` columns and read column by column."""
    return "".join(text[start::count] for start in range(count))


def transposed(value: str, core: str) -> Iterator[str]:
    """The skeletons of ``core`` (the value's secret part, a skeleton already) and of
    ``value`` read in two to :data:`MAX_COLUMNS` columns."""
    for count in range(2, MAX_COLUMNS + 1):
        yield columns(core, count)
        yield _skeleton.skeleton(columns(value, count))
