"""The bytes behind a dump of numbers: ``od -t``/``xxd`` switches in any radix and width.

A line is an offset (6 to 16 hex or octal digits, ``xxd``'s with a colon) and then fields of
one kind, up to an ASCII column: binary octets (``xxd -b``), hex groups of 1, 2, 4 or 8 bytes
(``od -t x1..x8``, ``xxd -e``, ``xxd -g4``: read in both byte orders, as ``od`` and ``xxd -e``
print little-endian words and ``xxd -g`` big-endian ones), octal bytes, 16- and 32-bit words
(``od -b``, ``od``/``od -t o2``, ``od -t o4``) and decimal bytes (``od -t d1``/``u1``). Each kind
the lines agree with is one decoded view (a line of three-digit numbers may be octal or decimal:
both are read); :mod:`._escapes` scans each like any decoded view.
"""

from __future__ import annotations

import bisect
import re
import sys
from array import array
from collections.abc import Callable

from pytest_harness_audit.inspect import _matcher

#: Most dump lines of one chunk read.
MAX_LINES = 65_536

_LINE = re.compile(r"^[0-9a-f]{6,16}:? +(.*)$", re.M)
_FIELD = re.compile(r"\S+")


def _ints(tokens: list[str], radix: int, limit: int) -> list[int] | None:
    values = [int(token, radix) for token in tokens]
    return values if max(values) < limit and min(values) >= 0 else None


def _words(code: str, radix: int) -> Callable[[str], bytes | None]:
    """Fields that are little-endian words of ``array`` type ``code``, written in ``radix``."""
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


def _decimal(run: str) -> bytes | None:
    values = [int(token) for token in run.split()]
    if min(values) < -128 or max(values) > 255:
        return None
    return bytes(value & 0xFF for value in values)


def _fields(token: str) -> re.Pattern[str]:
    """The leading run of fields of one kind in a line's text (up to an ASCII column)."""
    return re.compile(rf"(?:{token} +)*{token}(?= |$)")


#: ``(first field, leading run of fields, reading, byte order)`` of each kind of dump; the order
#: (``be``/``le``) of a hex kind maps a byte to its two digits in the field, not the whole field.
KINDS: tuple[tuple[re.Pattern[str], re.Pattern[str], Callable[[str], bytes | None], str], ...] = (
    tuple(
        (re.compile(token), _fields(token), read, order)
        for token, read, order in (
            ("[01]{8}", _bytes_in(2), ""),
            ("[0-9a-f]{2}", _hex_in_order, "be"),
            ("[0-9a-f]{4}", _words("H", 16), "le"),
            ("[0-9a-f]{4}", _hex_in_order, "be"),
            ("[0-9a-f]{8}", _words("I", 16), "le"),
            ("[0-9a-f]{8}", _hex_in_order, "be"),
            ("[0-9a-f]{16}", _words("Q", 16), "le"),
            ("[0-9a-f]{16}", _hex_in_order, "be"),
            ("[0-7]{3}", _bytes_in(8), ""),
            ("[0-7]{6}", _words("H", 8), ""),
            ("[0-7]{11}", _words("I", 8), ""),
            ("-?[0-9]{1,3}", _decimal, ""),
        )
    )
)


def numeric_views(chunk: str) -> list[tuple[str, _matcher.Pieces]]:
    """Every reading of the numeric dump lines of ``chunk`` that two lines or more agree with:
    the bytes (as Latin-1 characters) and the map back to the fields that show them."""
    lines = [
        (match.start(1), match.group(1))
        for _, match in zip(range(MAX_LINES), _LINE.finditer(chunk), strict=False)
    ]
    if len(lines) < 2:
        return []
    firsts = [text.split(" ", 1)[0] for _, text in lines[:2]]
    views = []
    for first, fields, read, order in KINDS:
        if not all(first.fullmatch(token) for token in firsts):
            continue  # the first two lines do not start with this kind: no dump of it
        view = _read_lines(chunk, lines, fields, read, order)
        if view is not None:
            views.append(view)
    return views


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
