"""A secret written one *word* a character: Morse code, the NATO alphabet, digits as words
(``four foxtrot nine alfa …``, ``....- ..-. ----. .- …``), any codebook with separators.

A codebook maps each character to one word consistently, so the words keep the value's shape
as a character substitution does (:mod:`._substitution`): two words are equal exactly where the
characters are. The text is cut into words (runs of anything but whitespace, ``,``, ``;``,
``|`` and ``/``; and, apart, runs of letters or digits, camel case split), compared without
case, and every window of as many words as a core has is compared with it (and with
it read backwards), under the same conditions: a core of :data:`~._substitution.MIN_LENGTH`
characters repeating some :data:`~._substitution.MIN_REPEATS` times, whose exact pattern of
equal places ordinary prose does not have. A filter keeps it cheap: a window is compared in
full only when its words are equal at the core's first repeated pair.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import compress, count
from operator import and_, eq

#: Words of one text looked at (its head).
MAX_WORDS = 16 * 1024
#: Windows passing the filter compared in full per core and text.
MAX_CANDIDATES = 1024

#: How a text is cut into words: between blanks and list punctuation (Morse's dots and dashes
#: are a word's own), and into words of letters or digits alone (``four-foxtrot``,
#: ``FourFoxtrot``, ``four_foxtrot``).
_WORDINGS = (
    re.compile(r"[^\s,;|/]+"),
    re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+"),
)


@dataclass(frozen=True)
class _Core:
    """A core of a secret and two pairs of its places holding the same character (the same
    pair twice when it has one only)."""

    secret: int
    core: str
    pairs: tuple[tuple[int, int], tuple[int, int]]


def _core(secret: int, core: str) -> _Core:
    pairs = [(core.find(char), at) for at, char in enumerate(core) if core.find(char) < at]
    pairs = (pairs or [(0, 0)])[:2]  # none: never, a core repeats characters
    return _Core(secret, core, (pairs[0], pairs[-1]))


def same_shape(core: str, window: Sequence[Hashable]) -> bool:
    """Whether ``window`` (characters, or words' codes) is ``core`` through a one-to-one
    substitution."""
    if len(window) != len(core):
        return False
    forward: dict[str, Hashable] = {}
    backward: dict[Hashable, str] = {}
    for mine, theirs in zip(core, window, strict=True):
        if forward.setdefault(mine, theirs) != theirs or backward.setdefault(theirs, mine) != mine:
            return False
    return True


def _periodic(core: str) -> bool:
    """Whether ``core`` repeats itself after some shift of at most half its length."""
    return any(core[shift:] == core[:-shift] for shift in range(1, len(core) // 2 + 1))


class TokenShapes:
    """``(secret, core)`` pairs (:func:`._substitution.shape_core`), found written one word
    a character."""

    def __init__(self, cores: list[tuple[int, str]]) -> None:
        # a periodic core (``0123…f0123…``) has the shape of any cycle of words: a table's
        # columns repeated, not a key
        self._cores = [
            _core(secret, written)
            for secret, core in cores
            if not _periodic(core)
            for written in (core, core[::-1])
        ]
        self.empty = not self._cores

    def hits(self, text: str) -> list[tuple[int, int, int]]:
        """``(secret, start, end)`` of every run of words of ``text`` — or of every other word
        of it — with a core's shape (a word of more than one character among them: one
        character a word is the text spread out, the main matcher's)."""
        if self.empty:
            return []
        found: list[tuple[int, int, int]] = []
        seen: set[int] = set()
        shortest = min(len(c.core) for c in self._cores)
        if len(text) < shortest:
            return []  # fewer characters than words a core needs
        for wording in _WORDINGS:
            words = wording.findall(text)[:MAX_WORDS]
            if len(words) < shortest:
                continue
            # equal words get equal codes (not consecutive ones: only equality counts)
            ids: dict[str, int] = {}
            codes = list(map(ids.setdefault, map(str.lower, words), count()))
            spans: list[tuple[int, int]] = []  # where the words are: wanted for a hit only
            # every other word too: a filler word between the characters (``4 and f and 9``),
            # which no other form reads, so the characters themselves count there
            for offset, step in ((0, 1), (0, 2), (1, 2)):
                view = codes[offset::step]
                if len(view) < shortest:
                    continue
                for secret, first, last in self._find(view, words[offset::step], seen, step > 1):
                    if not spans:
                        spans = [m.span() for m in wording.finditer(text)][:MAX_WORDS]
                    first_span, last_span = (
                        spans[offset + first * step],
                        spans[offset + last * step],
                    )
                    found.append((secret, first_span[0], last_span[1]))
        return found

    def _find(
        self, codes: list[int], words: list[str], seen: set[int], spread: bool
    ) -> list[tuple[int, int, int]]:
        """``(secret, first word, last word)`` of the first run of ``codes`` with each core's
        shape (a secret in ``seen`` skipped; unless ``spread``, not one character a word); each
        secret found is added to ``seen``."""
        found: list[tuple[int, int, int]] = []
        for check in self._cores:
            if check.secret in seen:
                continue
            size = len(check.core)
            positions = len(codes) - size + 1
            if positions <= 0:
                continue
            # the filter, run in C: the starts whose words are equal at two of the core's pairs
            # of equal characters
            (a, b), (c, d) = check.pairs
            equal = map(
                and_,
                map(eq, codes[a : a + positions], codes[b : b + positions]),
                map(eq, codes[c : c + positions], codes[d : d + positions]),
            )
            for tried, start in enumerate(compress(range(positions), equal)):
                if tried >= MAX_CANDIDATES:
                    break
                if not same_shape(check.core, codes[start : start + size]):
                    continue
                if not spread and all(len(words[start + i]) == 1 for i in range(size)):
                    continue
                found.append((check.secret, start, start + size - 1))
                seen.add(check.secret)
                break
        return found
