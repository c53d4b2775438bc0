"""Unicode folding: what the secret matcher sees of a character that is not plain ASCII.

A text and a secret are compared after the same per-character fold:

* compatibility decomposition (NFKD): fullwidth ``ｓｋ－ｔｅｓｔ`` and other compatibility forms
  (ligatures, circled and superscript digits …) become their plain letters and digits, and an
  accented letter becomes its base letter;
* invisible characters are removed: every format character (category ``Cf``: zero-width space,
  joiners, U+2060 word joiner, U+FEFF, the soft hyphen U+00AD, direction marks) and every
  combining mark (``Mn``, ``Me``: a strike-through or an accent laid over a letter);
* punctuation look-alikes become their ASCII form (the hyphens and dashes U+2010..U+2015, the
  minus U+2212 … → ``-``; fraction and division slashes → ``/``; ratio → ``:``; one-dot leader →
  ``.``), and Cyrillic and Greek letters drawn like Latin ones become those (``а`` → ``a``);
* characters that carry a byte by their code point (tag characters, the supplementary
  variation selectors, Braille patterns: "ASCII smuggling") become that byte's character, so
  a value hidden in them is found, not erased with the invisible characters;
* lower case.

The fold is per character (a character's fold never depends on its neighbours), so a fold of a
text's suffix is a suffix of the text's fold, and positions map back character by character
(:func:`fold_positions`). ASCII text folds to its lower case; callers take that faster path.
"""

from __future__ import annotations

import re
import unicodedata

#: Characters that fold to an ASCII punctuation mark they are drawn like.
_PUNCTUATION = {
    **dict.fromkeys(
        "\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u02d7\u2e3a\u2e3b\ufe58\ufe63\uff0d"
        "\u058a\u05be\u1400\u1806\u2796\u2e17\u301c",
        "-",
    ),
    **dict.fromkeys("\u2044\u2215\u29f8\u2571\u27cb", "/"),
    **dict.fromkeys("\u29f5\u29f9\u2572\u27cd", "\\"),
    **dict.fromkeys("\u2236\u02d0\ua789\u0589\u05c3\u16ec\ufe30", ":"),
    **dict.fromkeys("\u2024\u00b7\u2027\u0701\u0702\ua60e\u10fb", "."),
    **dict.fromkeys("\u02cd\u2017\uff3f\u2381", "_"),
    **dict.fromkeys("\u2795\u16ed", "+"),
    **dict.fromkeys("\u2261\ua78a\u30a0", "="),
}
#: Cyrillic and Greek letters drawn like Latin ones (upper and lower case).
_LOOK_ALIKE_LETTERS = dict(
    zip(
        "аеорсухіјѕԁһԛԝӏɡАВЕКМНОРСТХІЈЅԜοανκιτρυχεΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
        "aeopcyxijsdhqwlgabekmhopctxijswoavkitpuxeabezhikmnoptyx",
        strict=True,
    )
)
_LOOK_ALIKES = {**_PUNCTUATION, **_LOOK_ALIKE_LETTERS}
_REMOVED = frozenset({"Mn", "Me", "Cf"})
#: Characters that carry an ASCII byte by their code point: tag characters (U+E0020..E007E, a
#: tag is U+E0000 plus its character: invisible), supplementary variation selectors (U+E0100
#: plus the byte less 16: invisible after an emoji) and Braille patterns (U+2800 plus the byte).
_CARRIERS = ((0xE0000, 0xE0000), (0xE0100, 0xE0100 - 16), (0x2800, 0x2800))


def _carried(code: int) -> str | None:
    """The printable ASCII character an invisible or Braille carrier stands for, if any."""
    for start, base in _CARRIERS:
        if start <= code < start + 0x100:
            byte = code - base
            return chr(byte).lower() if 0x20 <= byte <= 0x7E else ""
    return None


#: Distinct characters whose fold is remembered (a hostile text cannot grow the table further).
_TABLE_LIMIT = 1 << 16


def fold_char(char: str) -> str:
    """The fold of one character (see the module doc); ``""`` when it is removed."""
    mapped = _LOOK_ALIKES.get(char)
    if mapped is not None:
        return mapped
    if char.isascii():
        return char.lower()
    carried = _carried(ord(char))
    if carried is not None:
        return carried
    parts: list[str] = []
    for part in unicodedata.normalize("NFKD", char):
        if unicodedata.category(part) in _REMOVED:
            continue
        part = _LOOK_ALIKES.get(part, part)
        parts.append(part.lower())
    return "".join(parts)


class _FoldTable(dict[int, str]):
    """``str.translate`` table of :func:`fold_char`, filled as characters are first seen."""

    def __missing__(self, code: int) -> str:
        folded = fold_char(chr(code))
        if len(self) < _TABLE_LIMIT:
            self[code] = folded
        return folded


FOLD_TABLE = _FoldTable()


# the fold of every Latin-1 character: one character of Latin-1 but for these few (and the
# soft hyphen, removed), left as they are by the byte table and replaced after it
_LATIN1_WIDE = tuple(
    (chr(code), fold_char(chr(code)))
    for code in range(0x100)
    if code != 0xAD and (len(fold_char(chr(code))) != 1 or fold_char(chr(code)) > "\xff")
)
_LATIN1_BYTES = bytes(
    code if chr(code) in dict(_LATIN1_WIDE) or code == 0xAD else ord(fold_char(chr(code)))
    for code in range(0x100)
)
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _fold_run(match: re.Match[str]) -> str:
    return match.group().translate(FOLD_TABLE)


def fold(text: str) -> str:
    """``text`` folded character by character (lengths may change: see :func:`fold_positions`).

    Only the runs of characters beyond ASCII go through the fold table, and ``lower`` does the
    rest: it leaves a folded character as it is (the fold's output is already lower case).
    """
    if text.isascii():
        return text.lower()
    try:  # a dump's bytes read as Latin-1: C passes
        data = text.encode("latin-1")
    except UnicodeEncodeError:
        return _NON_ASCII_RUN.sub(_fold_run, text).lower()
    folded = data.translate(_LATIN1_BYTES, b"\xad").decode("latin-1")
    for char, wide in _LATIN1_WIDE:
        if char in folded:
            folded = folded.replace(char, wide)
    return folded


def fold_positions(text: str, start: int = 0) -> list[int]:
    """For each character of the fold of ``text[start:]`` with whitespace removed, the
    position in ``text`` of the character it came from."""
    positions: list[int] = []
    table = FOLD_TABLE
    for index in range(start, len(text)):
        char = text[index]
        if char.isascii():
            if not char.isspace():
                positions.append(index)
            continue
        for folded in table[ord(char)]:
            if not folded.isspace():
                positions.append(index)
    return positions


class FoldMap:
    """Maps positions of a folded, whitespace-free text back to the text it came from."""

    __slots__ = ("positions",)

    def __init__(self, text: str) -> None:
        self.positions = fold_positions(text)

    def start(self, index: int) -> int:
        """The source position of derived character ``index``."""
        return self.positions[index]

    def end(self, index: int) -> int:
        """The source position just after derived character ``index - 1``."""
        return self.positions[index - 1] + 1
