"""A near copy of a secret: a long enough part of its core with a few characters changed.

``sk-test-4f9@1c2e…`` for ``sk-test-4f9a1c2e…`` reads the same to anyone; the exact forms of the
rest of the matcher miss it. A *near copy* is a window of the text that lines up with at least
:func:`min_window` characters of a value's core (:func:`._runs.core`: the value without its
public vendor prefix, as :mod:`._runs` takes it) with at most one changed character per
:data:`PER_ERROR` characters lined up; one character dropped or added counts as one change.

Finding one stays linear: every window with ``k`` changes over ``w`` characters has an unchanged
stretch of at least ``(w - k) // (k + 1)`` characters (pigeonhole), which is never shorter than
:func:`gram_size`. The core's substrings of that length (its *grams*) are patterns of the main
automaton (:mod:`._matcher`), so they cost no pass of their own; each gram found is a candidate
lined up with the core on its diagonal and the ones next to it (one character dropped or added),
and only a candidate with enough matching characters on those diagonals is aligned in full.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pytest_harness_audit.inspect import _matcher, _runs, _skeleton
from pytest_harness_audit.inspect._spans import Spanned

#: The transform of the grams in the automaton, and of a near copy's finding.
NEAR = "near"
#: At most one change per this many characters lined up.
PER_ERROR = 8
#: A near copy lines up with this many characters of a core (or all of a shorter one).
MIN_WINDOW = 24
#: A gram has at least this many distinct characters (not ``000000``).
MIN_DISTINCT = 4
#: Gram hits looked at per text, and diagonals aligned (a text repeating grams cannot cost more).
MAX_CANDIDATES = 4096
MAX_ALIGNMENTS = 256


def min_window(core: int) -> int:
    """The shortest part of a core of ``core`` characters a near copy lines up with."""
    return min(core, MIN_WINDOW)


def gram_size(core: int) -> int:
    """The unchanged stretch every near copy of a core of ``core`` characters holds."""
    return min(
        -(-(width - width // PER_ERROR) // (width // PER_ERROR + 1))
        for width in range(min_window(core), max(core, min_window(core)) + 1)
    )


def near_core(value: str) -> str | None:
    """The normalised core of ``value`` near copies of which are looked for, else ``None``."""
    if _runs.core(value) is None:
        return None
    return _matcher.normalise(_skeleton.body(value) or value)


def grams(value: str) -> Iterator[tuple[str, str]]:
    """``(NEAR, gram)`` for every gram of ``value``'s core (none without a core)."""
    core = near_core(value)
    if core is None:
        return
    size = gram_size(len(core))
    for start in range(len(core) - size + 1):
        gram = core[start : start + size]
        if len(set(gram)) >= MIN_DISTINCT:
            yield NEAR, gram


def _same(core: str, text: str, diagonal: int) -> int:
    """How many of the core's characters equal ``text``'s on ``diagonal``."""
    if diagonal >= 0:
        return sum(map(str.__eq__, core, text[diagonal:]))
    return sum(map(str.__eq__, core[-diagonal:], text))


def _mismatches(core: str, text: str, diagonal: int) -> list[int]:
    """Prefix counts of the core's characters that differ from ``text`` on ``diagonal``
    (core position ``k`` against text position ``k + diagonal``)."""
    counts = [0]
    lo = max(0, -diagonal)
    hi = min(len(core), len(text) - diagonal)
    total = 0
    for k in range(len(core)):
        if k < lo or k >= hi:  # no window reaches off the text
            total += len(core) + 1
        else:
            total += core[k] != text[k + diagonal]
        counts.append(total)
    return counts


@dataclass(frozen=True)
class Alignment:
    """A near copy: its span in the (normalised) text, its length on the core and changes."""

    start: int
    end: int
    length: int
    changes: int


def align(core: str, text: str, diagonal: int, parts: bool = True) -> Alignment | None:
    """The longest near copy of a part of ``core`` (without ``parts``: of all of it) in
    ``text`` on ``diagonal``, with one character dropped or added at most, or ``None``."""
    size = len(core)
    window = min_window(size) if parts else size
    same = {x: _same(core, text, diagonal + x) for x in (-1, 0, 1)}
    # a near copy's matching characters lie on this diagonal and at most one next to it
    if same[0] + max(same[-1], same[1]) < window - window // PER_ERROR:
        return None
    rows = {x: _mismatches(core, text, diagonal + x) for x in (-1, 0, 1)}
    best: Alignment | None = None
    # (first diagonal, second diagonal): a switch down skips a core character (dropped from
    # the text), a switch up skips a text character (added to it); either is one change
    pairs = [(0, 0), (0, -1), (0, 1), (-1, 0), (1, 0)]
    for first, second in pairs:
        one, two = rows[first], rows[second]
        for a in range(size - window + 1):
            if a and one[a] == one[a - 1]:
                continue  # a longest copy starts after a change (or at the start)
            low = size + 1
            for b in range(a + 1, size + 1):
                # the best point to switch diagonals between a and b; a switch down at
                # s = b - 1 drops core[s]
                point = (one[b - 1] if second < first else one[b]) - two[b]
                low = min(low, point)
                if b - a < window or (b < size and two[b + 1] == two[b]):
                    continue  # too short, or not a longest copy's end (before a change)
                # a part has both ends matched (a change at an end is noise beside an exact part)
                if parts and one[a + 1] - one[a] + two[b] - two[b - 1]:
                    continue
                # a switch costs one change at its best point
                changes = two[b] - one[a] + (0 if first == second else low + 1)
                if changes * PER_ERROR > b - a:
                    continue
                if best is None or (b - a, -changes) > (best.length, -best.changes):
                    best = Alignment(a + diagonal + first, b + diagonal + second, b - a, changes)
    return best


def near_copy(core: str, text: str, at: int, gram: str, parts: bool = True) -> Alignment | None:
    """The longest near copy of ``core`` around the ``gram`` found at ``at`` of ``text``."""
    best: Alignment | None = None
    found = core.find(gram)
    while found >= 0:
        aligned = align(core, text, at - found, parts)
        if aligned is not None and (best is None or aligned.length > best.length):
            best = aligned
        found = core.find(gram, found + 1)
    return best


def locate(
    text: str, start: int, end: int, cores: list[str], parts: bool = True
) -> tuple[int, int] | None:
    """The span of ``text`` of a near copy of one of ``cores`` around the gram found at
    ``start:end`` of ``text`` (source positions), or ``None``: a copy with at least one change,
    and without ``parts``, of a whole core."""
    reach = 3 * max(map(len, cores), default=0)
    lo, hi = max(0, start - reach), min(len(text), end + reach)
    region = text[lo:hi]
    normal = _matcher.normalise(region)
    gram = _matcher.normalise(text[start:end])
    at = len(_matcher.normalise(text[lo:start]))
    if normal[at : at + len(gram)] != gram:
        at = normal.find(gram, max(0, at - 4))
        if at < 0:
            return None
    best: Alignment | None = None
    for core in cores:
        aligned = near_copy(core, normal, at, gram, parts)
        if aligned is not None and not aligned.changes:
            continue  # an unchanged copy is the exact forms' (a part of one, :mod:`._runs`')
        if aligned is not None and (best is None or aligned.length > best.length):
            best = aligned
    if best is None:
        return None
    spaces = _matcher.positions_map(region)
    return lo + spaces.start(best.start), lo + spaces.end(best.end)


def copies(
    automaton: _matcher.Automaton,
    grams: list[_matcher.Hit],
    text: str,
    secrets: list[tuple[str, tuple[str, ...]]],
    found: Iterable[Spanned],
    parts: bool,
) -> Iterator[tuple[int, int, int]]:
    """``(secret, start, end)`` of the near copies the gram hits of ``text`` are part of
    (``secrets``: the fingerprint and values of each), less those inside a span of ``found``
    for their secret. Without ``parts``, only a copy of a whole core with a change counts (an
    output or a file holding a part of a key as it is is no leak: see :mod:`._runs`)."""
    spans = [(f.fingerprint, f.start, f.end) for f in found]
    tried: set[tuple[int, int]] = set()
    for hit in grams[:MAX_CANDIDATES]:
        index = automaton.patterns[hit.pattern].secret
        fingerprint, values = secrets[index]
        if hit.split or any(
            owner == fingerprint and start <= hit.start and hit.end <= end
            for owner, start, end in spans
        ):
            continue
        cores = [core for core in map(near_core, values) if core is not None]
        # the grams of one copy (or of one exact part) line up on one diagonal: aligned once
        gram = _matcher.normalise(text[hit.start : hit.end])
        diagonals = {(index, hit.start - core.find(gram)) for core in cores if gram in core}
        if diagonals <= tried:
            continue
        tried |= diagonals
        if len(tried) > MAX_ALIGNMENTS:
            return
        span = locate(text, hit.start, hit.end, cores, parts)
        if span is not None:
            spans.append((fingerprint, *span))
            yield index, *span
