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
from dataclasses import dataclass

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
    secret: int
    core: str
    first: int
    second: int


def _core(secret: int, core: str) -> _Core:
    for second, char in enumerate(core):
        first = core.find(char)
        if first < second:
            return _Core(secret, core, first, second)
    return _Core(secret, core, 0, 0)  # never: a core repeats characters


def _same_shape(core: str, window: list[int]) -> bool:
    forward: dict[str, int] = {}
    backward: dict[int, str] = {}
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
        for wording in _WORDINGS:
            words = [(m.start(), m.end(), m.group()) for m in wording.finditer(text)][:MAX_WORDS]
            # every other word too: a filler word between the characters (``4 and f and 9``),
            # which no other form reads, so the characters themselves count there
            for view, spread in ((words, False), (words[::2], True), (words[1::2], True)):
                if len(view) >= shortest:
                    self._find(view, found, seen, spread)
        return found

    def _find(
        self,
        words: list[tuple[int, int, str]],
        found: list[tuple[int, int, int]],
        seen: set[int],
        spread: bool,
    ) -> None:
        """Add to ``found`` the first run of ``words`` with each core's shape (not in ``seen``;
        unless ``spread``, not one character a word)."""
        ids: dict[str, int] = {}
        codes = [ids.setdefault(word.lower(), len(ids)) for _, _, word in words]
        for check in self._cores:
            if check.secret in seen:
                continue
            size = len(check.core)
            gap = check.second - check.first
            tried = 0
            for start in range(len(codes) - size + 1):
                if codes[start + check.first] != codes[start + check.first + gap]:
                    continue
                tried += 1
                if tried > MAX_CANDIDATES:
                    break
                window = codes[start : start + size]
                if not _same_shape(check.core, window):
                    continue
                if not spread and all(len(words[start + i][2]) == 1 for i in range(size)):
                    continue
                found.append((check.secret, words[start][0], words[start + size - 1][1]))
                seen.add(check.secret)
                break
