"""The bytes behind a hex or character dump, for the secret matcher.

A dump interleaves the bytes of a file with offsets (and an ASCII column), so no form of a value
is contiguous in it: ``xxd``, ``hexdump -C``, ``hexdump``/``od -x`` (16-bit words, little-endian)
and ``od -c``/``od -a``/``hexdump -c`` (one character per 4-column field, with offsets or,
``od -An -c``, without). :func:`undump` reads the dump lines of a text back into the bytes they
show (as Latin-1 characters, one a byte) and maps each byte to the characters that show it
(:class:`LinePieces`: a line's bytes are decoded at once, a byte's characters found on a hit
only); :mod:`._escapes` scans the result like any decoded view. Dump lines are looked for in
the whole text (lines of other text before a dump do not hide it), and also without offsets
(``od -An``: :mod:`._dump_numbers`).
"""

from __future__ import annotations

import bisect
import re
import sys
from array import array

from pytest_harness_audit.inspect import _matcher
from pytest_harness_audit.inspect._dump_numbers import numeric_views

#: Most dump lines of one chunk decoded.
MAX_LINES = 65_536

# an xxd line: hex groups up to a double space, then the ASCII column (the groups are cut by
# hand: a pattern with nested repeats backtracks without end on a line with no ASCII column)
_XXD = re.compile(r"^[0-9a-f]{7,16}: ([0-9a-f ]+?)(?=  )", re.M)
_CANONICAL = re.compile(r"^[0-9a-f]{8,16}  ((?:[0-9a-f]{2}  ?){1,16}) *\|.*\|$", re.M)
_WORD_LINE = re.compile(r"^(?:[0-7]{7}|[0-9a-f]{7,8})((?: [0-9a-f]{4})+) *$", re.M)
# `od -c` (octal, decimal or hex offsets: -A o/d/x, or none: -An, its first field a
# character), `hexdump -c` and `od -a` (named characters: `nl`, `sp`, `nul`); the fields are
# told apart by their first three columns, so a line that fails is given up in one pass
_CHAR_LINE = re.compile(
    r"^(?:[0-9a-f]{6,16}|(?=   \S|  \\\S))((?:   .|  \\.| [0-7]{3}|  [a-z]{2}| [a-z]{3}){1,64})$",
    re.M,
)
#: The names ``od -a`` prints for the control characters (by code), the space and DEL.
_OD_CONTROLS = (
    "nul soh stx etx eot enq ack bel bs ht nl vt ff cr so si "
    "dle dc1 dc2 dc3 dc4 nak syn etb can em sub esc fs gs rs us sp"
)
_OD_NAMES = {name: chr(code) for code, name in enumerate(_OD_CONTROLS.split())} | {"del": "\x7f"}
_HEX_LOWER = str.maketrans("ABCDEF", "abcdef")
_HEX_PAIR = re.compile(r"[0-9a-f]{2}")
_OD_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\r": "\r", "\\0": "\0", "\\f": "\f", "\\v": "\v"}
# a line with an offset, an indented line that starts with two numbers or is one (a dump
# without offsets, `od -An`, with `-w` as narrow as one field), a line of numbers alone
# that starts with a digit (as most lines of a dump do, and words like `add` do not), or one
# of four `od -An -c` fields
_LINE_START = (
    r"(?:[0-9a-fA-F]{6,16}[: ]| +[-+.0-9a-fA-F]{1,24}(?: +[-+.0-9a-fA-F]{1,24}(?: |$)|$)"
    r"|[-+.0-9][-+.0-9a-fA-F]{0,23}(?: +[-+.0-9a-fA-F]{1,24})* *$"
    r"|(?:   \S|  \\\S)(?:   .|  \\\S| [0-7]{3}){3})"
)
_TRIGGER_FIRST = re.compile(_LINE_START, re.M)
# after a newline: the regex engine skips to each newline at C speed (a `^` is tried at every
# character), and every text is tested
_TRIGGER = re.compile(r"\n" + _LINE_START, re.M)


def line_end(chunk: str, position: int) -> int:
    """The end of the line holding ``position`` (a hit in a dump is redacted to its line's end,
    its ASCII column included)."""
    end = chunk.find("\n", position)
    return len(chunk) if end < 0 else end


def undump(chunk: str) -> tuple[str, _matcher.Pieces] | None:
    """The bytes the dump lines of ``chunk`` show, and the map back; ``None`` without two."""
    views = undump_all(chunk)
    return views[0] if views else None


def has_dump_lines(chunk: str) -> bool:
    """Whether ``chunk`` may hold dump lines (two lines anywhere in it start like one): a cheap
    test, read before any view is built."""
    found = _TRIGGER.finditer(chunk)
    if _TRIGGER_FIRST.match(chunk) is None and next(found, None) is None:
        return False
    return next(found, None) is not None


def undump_all(chunk: str) -> list[tuple[str, _matcher.Pieces]]:
    """Every reading of the dump lines of ``chunk``: the dumps named in the module doc, then
    dumps of numbers in any radix and width (:mod:`._dump_numbers`); ``[]`` without two lines."""
    if not has_dump_lines(chunk):
        return []
    chunk = chunk.translate(_HEX_LOWER)  # `xxd -u`, `%X`: the same positions, in lower case
    # every reader: two lines of one kind of dump do not hide a dump of another kind
    pairs, words, chars = _hex_lines(chunk), _word_lines(chunk), _char_lines(chunk)
    views = [view for view in (pairs, words, chars) if view is not None]
    # a reading the dumps above gave already keeps their finer map (byte by byte); the hex
    # kinds that would read the same bytes again are not read
    numeric = numeric_views(chunk, read_in_order=pairs is None, read_words=words is None)
    return views + [view for view in numeric if all(view[0] != v[0] for v in views)]


class LinePieces(_matcher.Pieces):
    """:class:`~._matcher.Pieces` with one piece a dump line: a byte maps to the characters of
    the line that show it, found when asked (most views have no hit). ``kind`` is ``pairs``
    (hex pairs in order, spaces between groups), ``words`` (``od -x``: 4-digit words after a
    space, the low byte's pair second) or ``fields`` (``od -c``: 4 columns a byte)."""

    __slots__ = ("chunk", "kind")

    def __init__(self, chunk: str, kind: str) -> None:
        super().__init__()
        self.chunk = chunk
        self.kind = kind

    def _span(self, index: int) -> tuple[int, int]:
        k = bisect.bisect_right(self.derived, index) - 1
        byte = min(index - self.derived[k], self.width[k] - 1)
        base = self.source[k]
        if self.kind == "fields":
            return base + 4 * byte, base + 4 * byte + 4
        if self.kind == "words":
            start = base + 1 + 5 * (byte // 2) + (0 if byte % 2 else 2)
            return start, start + 2
        digit = 2 * byte  # the byte's first digit: count digits, skipping spaces
        seen = 0
        for place in range(base, base + self.source_len[k]):
            if self.chunk[place] != " ":
                if seen == digit:
                    return place, place + 2
                seen += 1
        return base, base + self.source_len[k]  # pragma: no cover - a digit per byte

    def start(self, index: int) -> int:
        """The source position of the characters that show byte ``index``."""
        return self._span(index)[0]

    def end(self, index: int) -> int:
        """The source position just after the characters that show byte ``index - 1``."""
        return self._span(index - 1)[1]


def _hex_lines(chunk: str) -> tuple[str, _matcher.Pieces] | None:
    """``xxd`` and ``hexdump -C``: pairs of hex digits, in order."""
    for pattern in (_XXD, _CANONICAL):
        pieces, parts, at = LinePieces(chunk, "pairs"), [], 0
        for _, match in zip(range(MAX_LINES), pattern.finditer(chunk), strict=False):
            group = match.group(1)
            digits = group.replace(" ", "")
            data = bytes.fromhex(digits[: len(digits) // 2 * 2])
            if data:
                pieces.add(at, match.start(1), len(group), len(data))
                parts.append(data.decode("latin-1"))
                at += len(data)
        if len(parts) >= 2:
            return "".join(parts), pieces
    return None


def _word_lines(chunk: str) -> tuple[str, _matcher.Pieces] | None:
    """``hexdump`` and ``od -x``: 16-bit words, little-endian."""
    pieces, parts, at = LinePieces(chunk, "words"), [], 0
    for _, match in zip(range(MAX_LINES), _WORD_LINE.finditer(chunk), strict=False):
        group = match.group(1)
        words = array("H", bytes.fromhex(group.replace(" ", "")))
        if sys.byteorder == "big":  # the digits are big-endian, the words little-endian
            words.byteswap()
        words.byteswap()
        data = words.tobytes()
        pieces.add(at, match.start(1), len(group), len(data))
        parts.append(data.decode("latin-1"))
        at += len(data)
    return ("".join(parts), pieces) if len(parts) >= 2 else None


def _char_field(field: str) -> str:
    """The character one ``od -c``/``od -a`` field shows."""
    token = field.strip()
    if not token:
        return " "
    if len(token) == 3 and token.isdigit():
        return chr(int(token, 8) & 0xFF)
    if len(token) > 1 and token.isalpha():
        return _OD_NAMES.get(token, "?")
    return _OD_ESCAPES.get(token, token[-1])


_CHAR_FIELDS: dict[str, str] = {}
_FIELD = re.compile(r"[\s\S]{4}")


def _char_lines(chunk: str) -> tuple[str, _matcher.Pieces] | None:
    """``od -c``: one character (or escape, or octal code) per 4-column field."""
    pieces, parts, at = LinePieces(chunk, "fields"), [], 0
    known = _CHAR_FIELDS
    for _, match in zip(range(MAX_LINES), _CHAR_LINE.finditer(chunk), strict=False):
        fields = _FIELD.findall(match.group(1))
        for field in fields:
            if field not in known and len(known) < 4096:
                known[field] = _char_field(field)
        text = "".join([known.get(field) or _char_field(field) for field in fields])
        pieces.add(at, match.start(1), 4 * len(fields), len(fields))
        parts.append(text)
        at += len(fields)
    return ("".join(parts), pieces) if len(parts) >= 2 else None


__all__ = ["has_dump_lines", "line_end", "undump", "undump_all"]
