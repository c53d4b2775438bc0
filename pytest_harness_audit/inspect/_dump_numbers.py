"""The bytes behind a dump of numbers: ``od``/``xxd``/``hexdump`` switches, any radix and width.

A line is an offset (6 to 16 hex or octal digits, ``xxd``'s with a colon) and then fields of
one kind, up to an ASCII column; or, for a dump without offsets (``od -An``, ``od -A n``), an
indented line of such fields, or a line of them alone (its indent cut, ``hexdump -e``). The
kinds: binary octets (``xxd -b``), hex groups of 1, 2, 4 or 8 bytes (``od -t x1..x8``,
``xxd -e``, ``xxd -g4``: read in both byte orders, as ``od`` and ``xxd -e`` print little-endian
words and ``xxd -g`` big-endian ones), octal bytes, 16- and 32-bit words (``od -b``,
``od``/``od -t o2``, ``od -t o4``, in both byte orders for ``od --endian=big``), decimal
numbers, signed or not, of 1, 2, 4 or 8 bytes (``od -t d1..d8``/``u1..u8``, ``od -d/-i/-l/-s``,
``hexdump -d``, both byte orders) and floats (``od -t f4``/``f8``). A decimal field does not
show its width, so each line is read at the width its longest number needs (a line holding
printable bytes needs 4 or 5 digits a 16-bit word, 9 or 10 a 32-bit one, 19 or 20 a 64-bit
one; a line of small numbers is read as bytes). Each kind two lines or more start with is one
decoded view (a line of three-digit numbers may be octal or decimal: both are
read); :mod:`._escapes` scans each like any decoded view.

Lines without offsets are read here only for binary octets and floats: a dump of integers
without offsets is a list of numbers, read whole by :mod:`._number_lists` (in C passes; read
line by line, a dump of one number a line cost seconds a megabyte). A kind is read only when
two lines start with its field and, for the kinds that fill a whole line (decimal, floats), two
lines are wholly of it (one regex pass over the lines); the hex kinds whose bytes the finer
readers of :mod:`._dumps` gave already are not read again.
"""

from __future__ import annotations

import bisect
import re
import sys
from array import array
from collections.abc import Callable, Iterator
from typing import Literal

from pytest_harness_audit.inspect import _matcher

#: Most dump lines of one chunk read.
MAX_LINES = 65_536

_LINE = re.compile(r"^[0-9a-f]{6,16}:? +(.*)$", re.M)
#: A line of a dump without offsets: indented fields (``od -An`` puts a space before each).
_INDENTED = re.compile(r"^ +(\S.*)$", re.M)
#: A line of numbers alone, not indented (``od -An … | sed 's/^ *//'``, ``hexdump -e``).
_BARE = re.compile(r"^((?:[-+.0-9a-f]{1,24} +)*[-+.0-9a-f]{1,24}) *$", re.M)
_FIELD = re.compile(r"\S+")


def _ints(tokens: list[str], radix: int, limit: int) -> list[int] | None:
    values = [int(token, radix) for token in tokens]
    return values if max(values) < limit and min(values) >= 0 else None


def _words(
    code: str, radix: int, order: Literal["little", "big"] = "little"
) -> Callable[[str], bytes | None]:
    """Fields that are words of ``array`` type ``code`` in byte ``order`` (``od`` prints
    little-endian ones but for ``--endian=big``), written in ``radix``."""
    size = array(code).itemsize

    def read(run: str) -> bytes | None:
        if radix == 16:
            words = array(code, bytes.fromhex(run.replace(" ", "")))
            words.byteswap()  # read big-endian from the digits, the words are little-endian
        else:
            values = _ints(run.split(), radix, 1 << (8 * size))
            if values is None:
                return None
            words = array(code, values)
            if sys.byteorder != order:
                words.byteswap()
        return words.tobytes()

    return read


def _floats(code: str) -> Callable[[str], bytes | None]:
    """Floating-point fields (``od -t f4``/``f8``: printed so that they read back exactly)."""

    def read(run: str) -> bytes | None:
        try:
            words = array(code, map(float, run.split()))
        except OverflowError:  # a double's value read as a float
            return None
        if sys.byteorder == "big":
            words.byteswap()
        return words.tobytes()

    return read


def _hex_in_order(run: str) -> bytes | None:
    return bytes.fromhex(run.replace(" ", ""))


def _bytes_in(radix: int) -> Callable[[str], bytes | None]:
    def read(run: str) -> bytes | None:
        values = _ints(run.split(), radix, 256)
        return bytes(values) if values is not None else None

    return read


def _decimal(order: Literal["little", "big"]) -> Callable[[str], bytes | None]:
    """Decimal numbers, signed or not, in byte ``order``, as wide as the longest one needs."""

    def read(run: str) -> bytes | None:
        tokens = run.split()
        digits = max(len(token.lstrip("-")) for token in tokens)
        size = 1 if digits <= 3 else 2 if digits <= 5 else 4 if digits <= 10 else 8
        bits = 8 * size
        values = [int(token) for token in tokens]
        if min(values) < -(1 << (bits - 1)) or max(values) >= 1 << bits:
            return None
        mask = (1 << bits) - 1
        return b"".join((value & mask).to_bytes(size, order) for value in values)

    return read


def _fields(token: str, end: str = "(?= |$)") -> re.Pattern[str]:
    """The leading run of fields of one kind in a line's text (up to an ASCII column)."""
    return re.compile(rf"(?:{token} +)*{token}{end}")


_DECIMAL = "(?:-?[0-9]{1,5}|-?[1-9][0-9]{5,19})"
_FLOAT = "(?:-?[0-9]+(?:\\.[0-9]*)?(?:e[-+]?[0-9]+)?|-?nan|-?inf)"
_POINTED = "(?:-?[0-9]+(?:\\.[0-9]*(?:e[-+]?[0-9]+)?|e[-+]?[0-9]+))"
# a line of decimals or floats holds nothing else (but for `od -t d2z`'s `>…<` column): the
# digits-only groups of a hex dump are no such line
_WHOLE = "(?= *$| +>.*<$)"
_ANY_END = "(?= |$)"

#: ``(first field (matched in the lines' first fields, one a line), leading run of fields,
#: reading, byte order)`` of each kind of dump; the order (``be``/``le``) of a hex kind maps a
#: byte to its two digits in the field, not the whole field.
Kind = tuple[re.Pattern[str], re.Pattern[str], Callable[[str], bytes | None], str]
"""A kind of dump field: its first field, its run of fields, how it reads, its byte order."""
KINDS: tuple[Kind, ...] = tuple(
    (re.compile(rf"^{first or token}$", re.M), _fields(token, end), read, order)
    for token, read, order, end, first in (
        ("[01]{8}", _bytes_in(2), "", _ANY_END, ""),
        ("[0-9a-f]{2}", _hex_in_order, "be", _ANY_END, ""),
        ("[0-9a-f]{4}", _words("H", 16), "le", _ANY_END, ""),
        ("[0-9a-f]{4}", _hex_in_order, "be", _ANY_END, ""),
        ("[0-9a-f]{8}", _words("I", 16), "le", _ANY_END, ""),
        ("[0-9a-f]{8}", _hex_in_order, "be", _ANY_END, ""),
        ("[0-9a-f]{16}", _words("Q", 16), "le", _ANY_END, ""),
        ("[0-9a-f]{16}", _hex_in_order, "be", _ANY_END, ""),
        ("[0-7]{3}", _bytes_in(8), "", _ANY_END, ""),
        ("[0-7]{6}", _words("H", 8), "", _ANY_END, ""),
        ("[0-7]{6}", _words("H", 8, "big"), "", _ANY_END, ""),
        ("[0-7]{11}", _words("I", 8), "", _ANY_END, ""),
        ("[0-7]{11}", _words("I", 8, "big"), "", _ANY_END, ""),
        # od never pads a decimal with zeros, hexdump -d to 5 digits: a longer number
        # with a leading zero is octal
        (_DECIMAL, _decimal("little"), "", _WHOLE, ""),
        (_DECIMAL, _decimal("big"), "", _WHOLE, ""),
        # `od -t f4`/`f8` lines start with a number with a point or an exponent
        (_FLOAT, _floats("f"), "", _WHOLE, _POINTED),
        (_FLOAT, _floats("d"), "", _WHOLE, _POINTED),
    )
)


#: The kinds read line by line in a dump without offsets: binary octets and floats (a list of
#: integers, whatever its layout, is read whole by :mod:`._number_lists`, in C passes).
_OFFSETLESS = (KINDS[0], KINDS[-2], KINDS[-1])
# a line of a dump without offsets that starts with one of those kinds' fields
# (two octets, or a number with a point or a signed exponent as `od` prints them: a hex word
# like `5e4` or `10000000` alone starts no such line)
_OFFSETLESS_START = re.compile(
    r"^ *(?:[01]{8} +[01]{8}|-?[0-9]+\.[0-9]*(?:e[-+][0-9]+)?|-?[0-9]+e[-+][0-9]+)(?: |$)", re.M
)


def numeric_views(
    chunk: str, *, read_in_order: bool = True, read_words: bool = True
) -> list[tuple[str, _matcher.Pieces]]:
    """Every reading of the numeric dump lines of ``chunk`` that two lines or more agree with:
    the bytes (as Latin-1 characters) and the map back to the fields that show them. Lines with
    offsets, indented lines and lines of numbers alone are read apart (a dump is one of them;
    an offset is a field of no kind's width). ``read_in_order=False`` skips the hex kinds read
    in order (the bytes an ``xxd`` reading gave already), ``read_words=False`` the 16-bit
    little-endian hex words (``od -x``'s)."""
    skipped = {
        index
        for index, (first, _, _, order) in enumerate(KINDS)
        if (order == "be" and not read_in_order)
        or (order == "le" and first.pattern == "^[0-9a-f]{4}$" and not read_words)
    }
    views = []
    starts = _OFFSETLESS_START.finditer(chunk)
    offsetless = next(starts, None) is not None and next(starts, None) is not None
    for pattern, kinds in ((_LINE, KINDS), (_INDENTED, _OFFSETLESS), (_BARE, _OFFSETLESS)):
        if kinds is _OFFSETLESS and not offsetless:
            continue
        lines = [
            (match.start(1), match.group(1))
            for _, match in zip(range(MAX_LINES), pattern.finditer(chunk), strict=False)
        ]
        if len(lines) >= 2:
            kept = tuple(kind for index, kind in enumerate(kinds) if index not in skipped)
            views += _views_of(chunk, lines, kept if kinds is KINDS else kinds)
    return views


def _views_of(
    chunk: str, lines: list[tuple[int, str]], kinds: tuple[Kind, ...]
) -> list[tuple[str, _matcher.Pieces]]:
    """The readings of ``lines`` by every kind at least two of them start with (anywhere among
    them: lines of other text before a dump do not hide it)."""
    firsts = "\n".join(text.split(" ", 1)[0] for _, text in lines)
    starts: dict[str, bool] = {}
    views = []
    joined = ""
    for first, fields, read, order in kinds:
        if first.pattern not in starts:
            starts[first.pattern] = _twice(first.finditer(firsts))
        if not starts[first.pattern]:
            continue
        if fields.pattern.endswith(_WHOLE):  # two whole lines of the kind, found by one C pass
            joined = joined or "\n".join(text for _, text in lines)
            if not _twice(_whole_lines(fields).finditer(joined)):
                continue
        view = _read_lines(chunk, lines, fields, read, order)
        if view is not None:
            views.append(view)
    return views


def _twice(found: Iterator[re.Match[str]]) -> bool:
    return next(found, None) is not None and next(found, None) is not None


_WHOLE_LINES: dict[str, re.Pattern[str]] = {}


def _whole_lines(fields: re.Pattern[str]) -> re.Pattern[str]:
    """``fields`` matched at the start of every line of a text (a line a dump line's text)."""
    found = _WHOLE_LINES.get(fields.pattern)
    if found is None:
        found = _WHOLE_LINES[fields.pattern] = re.compile("^" + fields.pattern, re.M)
    return found


class FieldPieces(_matcher.Pieces):
    """:class:`~._matcher.Pieces` of whole lines of fields, each field ``size`` bytes: a derived
    position maps to the field that shows its byte (found in the line when asked)."""

    __slots__ = ("chunk", "order", "sizes")

    def __init__(self, chunk: str, order: str) -> None:
        super().__init__()
        self.chunk = chunk
        self.order = order
        self.sizes: list[int] = []

    def _field(self, index: int) -> tuple[int, int]:
        k = bisect.bisect_right(self.derived, index) - 1
        field, byte = divmod(index - self.derived[k], self.sizes[k])
        start = self.source[k]
        text = self.chunk[start : start + self.source_len[k]]
        for number, found in enumerate(_FIELD.finditer(text)):
            if number == field:
                begin, end = start + found.start(), start + found.end()
                if self.order == "be":  # the byte's two hex digits
                    return begin + 2 * byte, begin + 2 * byte + 2
                if self.order == "le":
                    return end - 2 * byte - 2, end - 2 * byte
                return begin, end
        return start, start + self.source_len[k]  # pragma: no cover - a field a byte at least

    def start(self, index: int) -> int:
        """The source position of the field of derived character ``index``."""
        return self._field(index)[0]

    def end(self, index: int) -> int:
        """The source position just after the field of derived character ``index - 1``."""
        return self._field(index - 1)[1]


def _read_lines(
    chunk: str,
    lines: list[tuple[int, str]],
    fields: re.Pattern[str],
    read: Callable[[str], bytes | None],
    order: str,
) -> tuple[str, _matcher.Pieces] | None:
    """The bytes of every line's leading fields of one kind (``None``: fewer than two lines)."""
    pieces, parts, at, read_lines = FieldPieces(chunk, order), [], 0, 0
    for base, text in lines:
        run = fields.match(text)
        if run is None:
            continue
        data = read(run.group())
        if not data:
            continue
        pieces.add(at, base, run.end(), len(data))
        pieces.sizes.append(len(data) // len(run.group().split()))
        parts.append(data.decode("latin-1"))
        at += len(data)
        read_lines += 1
    return ("".join(parts), pieces) if read_lines >= 2 else None
