"""The bytes behind a hex or character dump, for the secret matcher.

A dump interleaves the bytes of a file with offsets (and an ASCII column), so no form of a value
is contiguous in it: ``xxd``, ``hexdump -C``, ``hexdump``/``od -x`` (16-bit words, little-endian)
and ``od -c``/``od -a``/``hexdump -c`` (one character per 4-column field). :func:`undump` reads
the dump lines of a text back into the bytes they show (as Latin-1 characters, one a byte) and
maps each byte to the characters that show it; :mod:`._escapes` scans the result like any
decoded view. Dump lines are looked for in the whole text (lines of other text before a dump
do not hide it), and also without offsets (``od -An``: :mod:`._dump_numbers`).
"""

from __future__ import annotations

import re

from pytest_harness_audit.inspect import _matcher
from pytest_harness_audit.inspect._dump_numbers import numeric_views

#: Most dump lines of one chunk decoded.
MAX_LINES = 65_536

# an xxd line: hex groups up to a double space, then the ASCII column (the groups are cut by
# hand: a pattern with nested repeats backtracks without end on a line with no ASCII column)
_XXD = re.compile(r"^[0-9a-f]{7,16}: ([0-9a-f ]+?)(?=  )", re.M)
_CANONICAL = re.compile(r"^[0-9a-f]{8,16}  ((?:[0-9a-f]{2}  ?){1,16}) *\|.*\|$", re.M)
_WORD_LINE = re.compile(r"^(?:[0-7]{7}|[0-9a-f]{7,8})((?: [0-9a-f]{4})+) *$", re.M)
# `od -c` (octal, decimal or hex offsets: -A o/d/x), `hexdump -c` and `od -a` (named
# characters: `nl`, `sp`, `nul`); the fields are told apart by their first three columns, so
# a line that fails is given up in one pass
_CHAR_LINE = re.compile(
    r"^[0-9a-f]{6,16}((?:   .|  \\.| [0-7]{3}|  [a-z]{2}| [a-z]{3}){1,64})$", re.M
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
# without offsets, `od -An`, with `-w` as narrow as one field), or a line of numbers alone
# that starts with a digit (as most lines of a dump do, and words like `add` do not)
_LINE_START = (
    r"(?:[0-9a-fA-F]{6,16}[: ]| +[-+.0-9a-fA-F]{1,24}(?: +[-+.0-9a-fA-F]{1,24}(?: |$)|$)"
    r"|[-+.0-9][-+.0-9a-fA-F]{0,23}(?: +[-+.0-9a-fA-F]{1,24})* *$)"
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
    views = []
    # every reader: two lines of one kind of dump do not hide a dump of another kind
    for reader in (_hex_lines, _word_lines, _char_lines):
        found = reader(chunk)
        if found is not None:
            views.append(found)
    # a reading the dumps above gave already keeps their finer map (byte by byte)
    return views + [view for view in numeric_views(chunk) if all(view[0] != v[0] for v in views)]


def _hex_lines(chunk: str) -> tuple[str, _matcher.Pieces] | None:
    """``xxd`` and ``hexdump -C``: pairs of hex digits, in order."""
    pieces, parts, at = _matcher.Pieces(), [], 0
    lines = 0
    for pattern in (_XXD, _CANONICAL):
        for match in pattern.finditer(chunk):
            lines += 1
            if lines > MAX_LINES:
                break
            base = match.start(1)
            for pair in _HEX_PAIR.finditer(match.group(1).replace(" ", "")):
                # the pair's place in the line: skip the spaces before it
                offset = _position(match.group(1), pair.start())
                pieces.add(at, base + offset, 2, 1)
                parts.append(chr(int(pair.group(), 16)))
                at += 1
        if lines >= 2:
            return "".join(parts), pieces
        pieces, parts, at, lines = _matcher.Pieces(), [], 0, 0
    return None


def _position(group: str, index: int) -> int:
    """The place in ``group`` of the ``index``-th hex digit (spaces skipped)."""
    seen = 0
    for place, char in enumerate(group):
        if char != " ":
            if seen == index:
                return place
            seen += 1
    return len(group)


def _word_lines(chunk: str) -> tuple[str, _matcher.Pieces] | None:
    """``hexdump`` and ``od -x``: 16-bit words, little-endian."""
    pieces, parts, at = _matcher.Pieces(), [], 0
    lines = 0
    for match in _WORD_LINE.finditer(chunk):
        lines += 1
        if lines > MAX_LINES:
            break
        base = match.start(1)
        for word in re.finditer(r"[0-9a-f]{4}", match.group(1)):
            start = base + word.start()
            low, high = word.group()[2:], word.group()[:2]
            for pair, place in ((low, start + 2), (high, start)):
                pieces.add(at, place, 2, 1)
                parts.append(chr(int(pair, 16)))
                at += 1
    return ("".join(parts), pieces) if lines >= 2 else None


def _char_lines(chunk: str) -> tuple[str, _matcher.Pieces] | None:
    """``od -c``: one character (or escape, or octal code) per 4-column field."""
    pieces, parts, at = _matcher.Pieces(), [], 0
    lines = 0
    for match in _CHAR_LINE.finditer(chunk):
        lines += 1
        if lines > MAX_LINES:
            break
        base = match.start(1)
        fields = match.group(1)
        for index in range(0, len(fields) - 3, 4):
            field = fields[index : index + 4]
            token = field.strip()
            if not token:
                char = " "
            elif len(token) == 3 and token.isdigit():
                char = chr(int(token, 8) & 0xFF)
            elif len(token) > 1 and token.isalpha():
                char = _OD_NAMES.get(token, "?")
            else:
                char = _OD_ESCAPES.get(token, token[-1])
            pieces.add(at, base + index, 4, 1)
            parts.append(char)
            at += 1
    return ("".join(parts), pieces) if lines >= 2 else None


__all__ = ["has_dump_lines", "line_end", "undump", "undump_all"]
