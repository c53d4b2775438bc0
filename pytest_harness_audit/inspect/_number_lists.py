"""The bytes behind a list of numbers, whatever its layout, for the secret matcher.

A program that prints the bytes of a file as numbers rarely keeps ``od``'s layout:
``hexdump -e '1/2 "%u "'`` writes 16-bit words on one line, ``hexdump -e '1/4 "%x\\n"'`` one
unpadded 32-bit word a line, perl ``unpack("n*")`` big-endian words joined by commas, Python
``list(data)`` or ``array('H', data)`` a bracketed list, JavaScript a ``Uint8Array(150) [ 35,
32, … ]`` or ``{"0": 115, "1": 107, …}`` (keys are left out). A *run* is at least
:data:`MIN_NUMBERS` numbers with only separators (whitespace, ``,;:"'()[]{}``) between them.
Each run is read in the radix its numbers show (hex when one has a letter or a ``0x`` prefix;
else decimal, octal too when no digit is above 7, and hex too when every number has two
digits: the hex bytes of digits), at the width its largest number needs
(1, 2, 4 or 8 bytes; negative numbers as two's complement), in both byte orders: a few
readings, each by C passes over the whole run, so a megabyte-long list costs a few
milliseconds. A reading is a decoded view (bytes as Latin-1 characters) with the map back to
the numbers that show each byte (:class:`NumberPieces`, worked out on a hit only).
"""

from __future__ import annotations

import itertools
import re
import sys
from array import array

from pytest_harness_audit.inspect import _matcher

#: A run of fewer numbers is not read (a date, a version, a pair of coordinates).
MIN_NUMBERS = 4
#: Characters of one chunk read as runs at most (beyond, the rest is left to the dump readers).
MAX_RUN_CHARS = 1 << 20
#: Runs of fewer than :data:`LONG_RUN` numbers read per chunk at most (a dump with an ASCII
#: column, which :mod:`._dumps` reads, is a short run a line); longer runs are always read.
MAX_SHORT_RUNS = 64
LONG_RUN = 32

_BOUND = r"(?![0-9A-Za-z_.])"
# a number's first character, then (a lookbehind of fixed width) nothing of a word before it:
# the regex engine skips at C speed to the characters a number can start with
_DECIMAL = rf"-?[0-9](?<![0-9A-Za-z_.][-0-9])(?<![0-9A-Za-z_.]-[0-9])[0-9]{{0,19}}{_BOUND}"
_HEX = (
    rf"-?[0-9a-fA-F](?<![0-9A-Za-z_.][-0-9a-fA-F])(?<![0-9A-Za-z_.]-[0-9a-fA-F])"
    rf"(?:(?<=0)[xX])?[0-9a-fA-F]{{0,19}}{_BOUND}"
)
# a colon parts a key from its number (`"0":115`, `{0: 115}`), not the parts of a time
_SEPARATOR = r"(?:[\s,;\"'()\[\]{}]|(?<=[\s\"']):|:(?=[\s\"']))"
_SEPARATORS_TO_SPACE = str.maketrans(",;\"'()[]{}", " " * 10)


class _Pass:
    """One way of reading runs: its number, and an object's key."""

    __slots__ = ("key", "token")

    def __init__(self, number: str) -> None:
        self.token = re.compile(number)
        # a key of an object (`"0": 115`, `{0: 115}`) is no byte
        self.key = re.compile(rf"{number}\"?\s*:")


#: Runs of decimal numbers (read as decimal, and as octal without an 8 or a 9), and runs of
#: hex numbers with a letter or a ``0x`` among them (a run of digits alone is the first kind).
_DECIMAL_PASS = _Pass(_DECIMAL)
_HEX_PASS = _Pass(_HEX)
# a run of numbers of any kind, each with a digit (a word like `bad` or `face` is none; the
# bytes of text, and most of any other, have one in each number): the regex engine skips at C
# speed to each digit, and gives up at once on one inside a word
_FIRST = rf"[0-9](?<![0-9A-Za-z_.][0-9])(?:(?<=0)[xX])?[0-9a-fA-F]{{0,19}}{_BOUND}"
_WITH_DIGIT = rf"-?(?:0[xX])?[a-fA-F]{{0,19}}+[0-9][0-9a-fA-F]{{0,19}}{_BOUND}"
_RUN = re.compile(rf"{_FIRST}(?:{_SEPARATOR}+{_WITH_DIGIT}){{{MIN_NUMBERS - 1},}}+")
# a run of decimal numbers inside a run of hex ones: as long as a short value's bytes (hex
# words of digits alone, eight in a row, are rare)
_INNER_DECIMALS = re.compile(rf"{_DECIMAL}(?:{_SEPARATOR}+{_DECIMAL}){{7,}}+")
# the offset that starts a dump line, before its fields; the first field after one
_OFFSETS = re.compile(r"(?:^|(?<=\n))[0-9a-fA-F]{6,16}:?(?= )")
_FIRST_FIELD = re.compile(r"^[0-9a-fA-F]{6,16}:? +([0-9a-fA-F]+)", re.M)
# lines of an offset and fields of one width (for each width a dump of words can have)
_FIXED_WIDTHS = {
    width: re.compile(
        rf"(?:^[0-9a-fA-F]{{6,16}}:?(?: +[0-9a-fA-F]{{{width}}})*+ *+(?:\r?\n|$))++", re.M
    )
    for width in (2, 3, 4, 6, 8, 11, 16)
}
_COLUMN = re.compile(r">[^\n]{0,64}<(?=[ \t]*\r?$)", re.M)
_HEX_LETTER = re.compile(r"[a-fA-FxX]")
_NOT_OCTAL = re.compile(r"[89]")
#: ``array`` type codes of 1, 2, 4 and 8 bytes.
_CODES = {1: "B", 2: "H", 4: "I" if array("I").itemsize == 4 else "L", 8: "Q"}


class NumberPieces(_matcher.Pieces):
    """Maps a byte of a run's reading back to the number that shows it (the run is read again
    on the first question: most readings have no hit)."""

    __slots__ = ("_pass", "_spans", "base", "run", "size")

    def __init__(self, reading: _Pass, run: str, base: int, size: int) -> None:
        super().__init__()
        self._pass = reading
        self.run = run
        self.base = base
        self.size = size
        self._spans: list[tuple[int, int]] | None = None

    def _number(self, index: int) -> tuple[int, int]:
        if self._spans is None:
            self._spans = [
                (match.start(), match.end()) for match in _number_matches(self._pass, self.run)
            ]
        spans = self._spans
        start, end = spans[min(max(index, 0) // self.size, len(spans) - 1)]
        return self.base + start, self.base + end

    def start(self, index: int) -> int:
        """The source position of the number that shows byte ``index``."""
        return self._number(index)[0]

    def end(self, index: int) -> int:
        """The source position just after the number that shows byte ``index - 1``."""
        return self._number(index - 1)[1]


def _blank(match: re.Match[str]) -> str:
    return " " * (match.end() - match.start())


def _keyed(reading: _Pass, run: str) -> bool:
    """Whether ``run`` is an object of numbered keys (``{"0": 115, …}``): its keys are dropped."""
    return ":" in run and len(reading.key.findall(run)) * 3 >= len(reading.token.findall(run))


def _number_matches(reading: _Pass, run: str) -> list[re.Match[str]]:
    """The numbers of ``run`` that show bytes (keys left out), for the map back."""
    if not _keyed(reading, run):
        return list(reading.token.finditer(run))
    keys = {match.start() for match in reading.key.finditer(run)}
    return [match for match in reading.token.finditer(run) if match.start() not in keys]


def _numbers(reading: _Pass, run: str) -> list[str]:
    """The numbers of ``run`` that show bytes, by a C pass when it has no keys."""
    if ":" not in run:  # numbers and separators alone: the separators made spaces, split
        return run.translate(_SEPARATORS_TO_SPACE).split()
    if not _keyed(reading, run):
        return reading.token.findall(run)
    return [match.group() for match in _number_matches(reading, run)]


def _readings(values: list[int], width: int = 0) -> list[tuple[bytes, int]]:
    """``(bytes, width)`` of ``values`` at ``width`` bytes (``0``: the width the largest
    needs), in both byte orders."""
    low, high = min(values), max(values)
    for size in (width,) if width else (1, 2, 4, 8):
        bits = 8 * size
        if high < 1 << bits and low >= -(1 << (bits - 1)):
            break
    else:
        return []
    if low < 0:
        mask = (1 << bits) - 1
        values = [value & mask for value in values]
    words = array(_CODES[size], values)
    if size == 1:
        return [(words.tobytes(), 1)]
    native = words.tobytes()
    words.byteswap()
    swapped = words.tobytes()
    little, big = (native, swapped) if sys.byteorder == "little" else (swapped, native)
    return [(little, size), (big, size)]


def views(chunk: str) -> list[tuple[str, _matcher.Pieces]]:
    """Every reading of every run of numbers of ``chunk`` (see the module doc)."""
    if ">" in chunk:  # `od -t x2z`: blank the character column, keeping every position
        chunk = _COLUMN.sub(_blank, chunk)
    if _OFFSETS.search(chunk) is not None:
        chunk = _without_fixed_dumps(chunk)
    found: list[tuple[str, _matcher.Pieces]] = []
    budget = [MAX_RUN_CHARS, MAX_SHORT_RUNS]
    for match in _RUN.finditer(chunk):
        run = match.group()
        if not _within(budget, run):
            if budget[0] < 0:
                break
            continue
        if _HEX_LETTER.search(run) is None:
            found += _read(_DECIMAL_PASS, run, match.start(), hexa=False)
            continue
        found += _read(_HEX_PASS, run, match.start(), hexa=True)
        if len(run) >= 3 * LONG_RUN:  # decimal numbers after hex-like words or lines
            for inner in _INNER_DECIMALS.finditer(run):
                found += _read(_DECIMAL_PASS, inner.group(), match.start() + inner.start())
    return found


def _without_fixed_dumps(chunk: str) -> str:
    """``chunk`` with the lines of a dump with offsets (growing by one step) whose fields all
    have one width of a hex or octal kind (``od -x``, ``od -t x4``, ``od -b``, ``xxd -g4`` …)
    blanked, every position kept: :mod:`._dump_numbers` reads those lines, field by field."""
    first = _FIRST_FIELD.search(chunk)
    if first is None or len(first.group(1)) not in _FIXED_WIDTHS:
        return chunk
    parts, at = [], 0
    for block in _FIXED_WIDTHS[len(first.group(1))].finditer(chunk):
        offsets = _OFFSETS.findall(block.group(), 0, 4 * 1024)[:3]
        if len(offsets) == 3 and any(_one_step(offsets, radix) for radix in (8, 16)):
            parts += [chunk[at : block.start()], " " * (block.end() - block.start())]
            at = block.end()
    return "".join([*parts, chunk[at:]]) if parts else chunk


def _one_step(offsets: list[str], radix: int) -> bool:
    try:
        first, second, third = (int(offset.rstrip(":"), radix) for offset in offsets)
    except ValueError:
        return False
    return 0 < second - first == third - second


def _read(
    reading: _Pass, run: str, base: int, *, hexa: bool = False
) -> list[tuple[str, _matcher.Pieces]]:
    """The readings of one run, each with its map back (``base``: where the run starts)."""
    tokens = _numbers(reading, run)
    if len(tokens) < MIN_NUMBERS:
        return []
    return [
        (data.decode("latin-1"), NumberPieces(reading, run, base, size))
        for data, size in _run_readings(tokens, run, hexa)
    ]


def _within(budget: list[int], run: str) -> bool:
    """Whether ``run`` is read: within the chunk's characters and short runs (``budget``)."""
    budget[0] -= len(run)
    if budget[0] < 0:
        return False
    if len(run) < 3 * LONG_RUN and run.count(" ") + run.count(",") < LONG_RUN:
        budget[1] -= 1
        return budget[1] >= 0
    return True  # a long run is read whatever went before it


def _run_readings(tokens: list[str], run: str, hexa: bool) -> list[tuple[bytes, int]]:
    """The readings of one run's numbers (see the module doc)."""
    width = 0
    radices: tuple[int, ...]
    if hexa:
        radices = (16,)
        if "x" in run or "X" in run:
            tokens = [token.removeprefix("0x").removeprefix("0X") for token in tokens]
        lengths = set(map(len, tokens))
        if len(lengths) == 1 and (digits := lengths.pop()) in (2, 4, 8, 16):
            width = digits // 2  # zero-padded fields: their width is the word's
    elif _NOT_OCTAL.search(run) is None:
        radices = (10, 8)
    else:
        radices = (10,)
    if not hexa and set(map(len, tokens)) == {2}:
        radices += (16,)  # hex bytes without a letter among them: the bytes of digits
    found = []
    for radix in radices:
        try:
            values = list(map(int, tokens, itertools.repeat(radix)))
        except ValueError:  # a number too long for the radix's words
            continue
        found += [
            (data, size)
            for data, size in _readings(values, width)
            if len(data) >= _matcher.MIN_PATTERN
        ]
    return found
