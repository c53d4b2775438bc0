"""Encodings inside encodings: a bounded decode-and-rescan loop, for the secret matcher.

The main automaton knows a value's contiguous forms, a few nested ones among them (base64 of
base64, hex of base64 …: :mod:`._skeleton`). Any other nesting — base64 applied three or four
times, base32 of base64, base64 of a wrapped ``xxd -p``, hex of hex, base64 of a dump — is read
here: :func:`scan_layers` finds the *runs* of a text (at least :data:`MIN_RUN` printable
characters without a space, wrapped over whole lines or not), decodes each stretch of one
alphabet in it (hex, base64 or url-safe base64, base32, base32hex: a value in quotes or after
a ``key=`` is read too), base64 with each line reversed, and the whole run as Ascii85, base85
or Z85 when its characters allow (:mod:`._encodings`), decompresses a decoding that is a
gzip, zlib, bzip2 or xz stream, reads uuencoded lines
and lists of numbers in any layout (:mod:`._number_lists`), and scans what each decoding gives
with the automaton (every form, so the last layer is found by the forms), with its escapes and
dump lines decoded (:mod:`._escapes`), and again for runs, down to :data:`MAX_DEPTH` decodings.

Bounded: a chunk's decodings, at all depths together, hold at most :data:`DECODE_FACTOR` times
its length (at least :data:`DECODE_FLOOR`) characters, every step is a C pass over a run, and a
hit is mapped back to the encoded characters (for hex, base64 and base32, which write a fixed
number of characters a byte group) or to the whole run (the others).
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from pytest_harness_audit.inspect import _encodings, _escapes, _matcher, _number_lists
from pytest_harness_audit.inspect._spans import Spanned

#: Decodings nested at most this deep (the automaton's forms add one or two layers more).
MAX_DEPTH = 3
#: A run shorter than this is not decoded.
MIN_RUN = 20
#: A chunk's decodings hold at most this many times its length in characters ...
DECODE_FACTOR = 4
#: ... and at least this many.
DECODE_FLOOR = 64 * 1024

Span = tuple[int, int]
"""A span ``(start, end)`` of a text."""
Mapper = Callable[[int, int], Span]
"""Maps a span of a decoding to the span of the text that encodes it."""
Found = tuple[int, int, tuple[int, ...]]
"""A match: its span and the indices of the automaton's patterns found there."""
Decoding = tuple[bytes | str, Mapper, bool]
"""What a decoding gives, the map back, and whether the automaton's forms find a value in
that encoding already (then only a decoding that is text is scanned: for what is nested)."""

# a run: printable characters without a space, then whole lines of them (a wrapped encoding);
# tried at the start of a word only (inside one, it would scan the rest of the word again)
_RUN = re.compile(r"(?<![!-~])[!-~]{20,}+(?:[ \t]*+\r?\n[ \t]*+[!-~]{4,}+(?=[ \t]*+\r?$))*+", re.M)
_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/=_-]+")
_ASCII85 = re.compile(r"(?:<~)?[!-uz]+(?:~>)?")
_BASE85 = re.compile(r"[0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]+")
_Z85 = re.compile(r"[0-9a-zA-Z.:+=^!/*?&<>()\[\]{}@%$#-]+")
_PADDING = re.compile(r"=+")
_ALNUM_DELETED = str.maketrans(
    "", "", "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
#: ``(encoding, a stretch of its alphabet, characters a group, bytes a group)``
_STRETCHES = (
    ("hex", re.compile(r"[0-9a-fA-F]{20,}"), 2, 1),
    ("base64", re.compile(r"[A-Za-z0-9+/_-]{20,}"), 4, 3),
    ("base32", re.compile(r"[A-Z2-7]{20,}|[a-z2-7]{20,}"), 8, 5),
    ("base32hex", re.compile(r"[0-9A-V]{20,}|[0-9a-v]{20,}"), 8, 5),
)
# a run wholly of one alphabet (hex is base32hex and base64 too, base32 is base64 too)
_WHOLE_RUNS = (
    (_STRETCHES[0], re.compile(r"[0-9a-fA-F]+")),
    (_STRETCHES[2], re.compile(r"[A-Z2-7]+=*|[a-z2-7]+=*")),
    (_STRETCHES[3], re.compile(r"[0-9A-V]+=*|[0-9a-v]+=*")),
    (_STRETCHES[1], re.compile(r"[A-Za-z0-9+/_-]+=*")),
)
_DIGIT = re.compile(r"[0-9]")
_DECIMAL = re.compile(r"[0-9]+")
#: Most digits of a run read as one number (Python's own limit for converting one is 4300).
_MAX_NUMBER_DIGITS = 4000
# a uuencoded line: its length character, then four characters per three bytes
# (searched in the text after a newline: a pattern that starts with one is found at C speed)
_UU_LINE = re.compile(r"\n[!-M][ -`]{4,64}\r?(?:\n|$)")
_UU_BLOCK = re.compile(r"(?:^[!-M][ -`]{4,64}\r?\n)+", re.M)
_SPACE = re.compile(r"[\t\n\x0b\x0c\r\x1c-\x1f ]+")
_NOT_SPACE = re.compile(r"[^\t\n\x0b\x0c\r\x1c-\x1f ]+")
_TEXT_BYTES = bytes([0, 9, 10, 13, *range(32, 127)])
# the shortest compressed stream looked into (a zlib header and a stored block is 11 bytes)
_MIN_COMPRESSED = 10


class _Budget:
    """Decoded characters a chunk may still produce."""

    __slots__ = ("left",)

    def __init__(self, chunk: str) -> None:
        self.left = max(DECODE_FACTOR * len(chunk), DECODE_FLOOR)

    def take(self, size: int) -> bool:
        self.left -= size
        return self.left >= 0


def _compact_map(run: str, base: int, chars: int, group: int, skip: int) -> Mapper:
    """Decoded bytes → the encoded characters (``chars`` per ``group`` bytes, from character
    ``skip`` of the run without its whitespace) that show them, in the text the run is at
    ``base`` of."""
    pieces: list[_matcher.Pieces] = []

    def span(start: int, end: int) -> Span:
        if not pieces:
            found = _matcher.Pieces()
            at = 0
            for match in _NOT_SPACE.finditer(run):
                width = match.end() - match.start()
                found.add(at, match.start(), width, width)
                at += width
            pieces.append(found)
        where = pieces[0]
        first = skip + start * chars // group
        last = skip + -(-end * chars // group)
        last = min(last, where.derived[-1] + where.width[-1])
        return base + where.start(first), base + where.end(last)

    return span


def _whole(begin: int, end: int) -> Mapper:
    return lambda _start, _end: (begin, end)


def _decode(name: str, text: str) -> bytes:
    try:
        return _encodings.DECODERS[name](text)
    except (ValueError, binascii.Error):
        return b""


def _run_decodings(run: str, base: int, realign: bool = False) -> Iterator[Decoding]:
    """Every decoding of one run (whitespace removed) that its characters allow: each stretch
    of one alphabet in it (a value in quotes, after a ``key=`` or a ``data:…,`` prefix), and
    the whole run in the alphabets with punctuation. ``realign``: the run may begin inside a
    group (a chunk of a long text began in it), so its first stretch is read at every
    alignment."""
    compact = _SPACE.sub("", run) if _SPACE.search(run) else run
    if _DIGIT.search(compact) is None and (compact.islower() or compact.isupper()):
        return  # a word of one case: an encoding of 15 bytes or more mixes them, or has digits
    if len(compact) <= _MAX_NUMBER_DIGITS and _DECIMAL.fullmatch(compact):
        yield from _number_decodings(int(compact), _whole(base, base + len(run)))
    stretches = _stretches(compact)
    for name, stretch, chars, group in stretches:
        for found in stretch.finditer(compact):
            if name == "base32hex" and _HEX.fullmatch(found.group()):
                continue  # hex, read as such
            skips = range(chars) if realign and found.start() == 0 else range(1)
            for skip in skips:
                data = _decode(name, found.group()[skip:])
                yield data, _compact_map(run, base, chars, group, found.start() + skip), True
    end = base + len(run)
    if _BASE64.fullmatch(compact):  # base64 may be read with its lines reversed
        narrow = len(stretches) == 1 and stretches[0][0] != "base64"  # hex or base32 alone
        if "\n" in run and not narrow:  # (one line: the automaton's reversed forms)
            backwards = "".join(run.split()[::-1])[::-1]  # each line reversed: `base64 | rev`
            for segment in _PADDING.split(backwards):
                if len(segment) >= MIN_RUN:
                    yield _decode("base64", segment), _whole(base, end), False
        return
    if len(compact) < 2 * MIN_RUN or len(compact.translate(_ALNUM_DELETED)) * 6 < len(compact):
        # an 85-character encoding of text is a sixth punctuation or more (an address, a
        # path or a URL less); its one layer is found by the automaton's forms, so this is
        # for what is nested in it
        return
    for name, pattern in (("ascii85", _ASCII85), ("base85", _BASE85), ("z85", _Z85)):
        if pattern.fullmatch(compact):
            yield _decode(name, compact), _whole(base, end), True


def _number_decodings(number: int, mapper: Mapper) -> Iterator[Decoding]:
    """The bytes of a whole text written as one number (``int.from_bytes(data, 'big')``, or
    ``'little'``), in both byte orders."""
    data = number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")
    yield data, mapper, False
    yield data[::-1], mapper, False


def _stretches(compact: str) -> tuple[tuple[str, re.Pattern[str], int, int], ...]:
    """The alphabets to look for stretches of in ``compact``: the one it is wholly written in
    (tested by C passes that stop at the first other character), or all of them."""
    for kind, whole in _WHOLE_RUNS:
        if whole.fullmatch(compact):
            return (kind,)
    return _STRETCHES


def _uu_decodings(text: str) -> Iterator[Decoding]:
    """The bytes of every block of uuencoded lines (``uuencode``, ``binascii.b2a_uu``)."""
    if _UU_LINE.search("\n" + text) is None:
        return
    for block in _UU_BLOCK.finditer(text):
        parts = []
        for line in block.group().splitlines():
            size = ord(line[0]) - 32
            if len(line) - 1 < -(-size // 3) * 4:
                continue  # not as long as its length character says
            try:
                parts.append(binascii.a2b_uu(line))
            except binascii.Error:
                continue
        if parts:
            yield b"".join(parts), _whole(block.start(), block.end()), False


def _decodings(text: str, realign: bool = False) -> Iterator[Decoding]:
    for match in _RUN.finditer(text):
        yield from _run_decodings(match.group(), match.start(), realign and match.start() == 0)
    yield from _uu_decodings(text)
    for view, pieces in _number_lists.views(text):
        yield view, _pieces_map(pieces), False


def _pieces_map(pieces: _matcher.Pieces) -> Mapper:
    return lambda start, end: (pieces.start(start), pieces.end(end))


def _matches(automaton: _matcher.Automaton, text: str) -> Iterator[Found]:
    """The automaton's matches in ``text``, normalised as every scanned text is, mapped to it."""
    found = list(automaton.matches(_matcher.normalise(text)))
    if not found:
        return
    where = _matcher.positions_map(text)
    for start, end, indices in found:
        yield where.start(start), where.end(end), indices


def _inflated(decodings: Iterable[Decoding], budget: _Budget) -> Iterator[Decoding]:
    """Each decoding, and after one that starts as a compressed stream (``gzip | base64``)
    what it decompresses to (within the budget), mapped back to the same characters."""
    for decoded, mapper, covered in decodings:
        yield decoded, mapper, covered
        if isinstance(decoded, bytes) and len(decoded) >= _MIN_COMPRESSED:
            inflated = _encodings.inflate(decoded, budget.left)
            if inflated:
                yield inflated, mapper, False


def text_views(text: str) -> Iterator[tuple[str, Mapper]]:
    """The decodings of ``text``'s runs (one layer, decompressed when compressed) that are
    text, each as Latin-1 with its map back to the characters of ``text`` that encode it."""
    budget = _Budget(text)
    for decoded, mapper, _ in _inflated(_decodings(text), budget):
        if len(decoded) < _matcher.MIN_PATTERN or not budget.take(len(decoded)):
            continue
        view = decoded if isinstance(decoded, str) else decoded.decode("latin-1")
        if _texty(view):
            yield view, mapper


def _texty(view: str) -> bool:
    """Whether ``view`` (bytes as Latin-1) is mostly text: printable ASCII, whitespace and NULs
    (UTF-16) make up nine tenths of it."""
    data = view.encode("latin-1")
    return len(data.translate(None, _TEXT_BYTES)) * 10 <= len(data)


def _scan(
    automaton: _matcher.Automaton,
    text: str,
    depth: int,
    budget: _Budget,
    realign: bool = False,
    views: list[str] | None = None,
) -> Iterator[Found]:
    """Matches in the decodings of ``text``, as spans of ``text`` (``realign``: see
    :func:`_run_decodings`); ``views`` gets each decoding that is text, at every depth."""
    for decoded, mapper, covered in _inflated(_decodings(text, realign), budget):
        if len(decoded) < _matcher.MIN_PATTERN or not budget.take(len(decoded)):
            continue
        view = decoded if isinstance(decoded, str) else decoded.decode("latin-1")
        texty = _texty(view)
        if texty and views is not None:
            views.append(view)
        if covered and not texty:
            continue  # binary, in an encoding whose forms the automaton holds: found already
        for start, end, indices in _matches(automaton, view):
            yield (*mapper(start, end), indices)
        if not texty:
            continue  # binary: no escapes, dump lines or encodings to read further
        for hit in _escapes.scan_unescaped(automaton, view, 0):
            yield (*mapper(hit.start, hit.end), (hit.pattern,))
        if depth < MAX_DEPTH:
            for start, end, indices in _scan(automaton, view, depth + 1, budget, views=views):
                yield (*mapper(start, end), indices)


def scan_layers(
    automaton: _matcher.Automaton, chunk: str, offset: int, views: list[str] | None = None
) -> list[_matcher.Hit]:
    """The hits of ``automaton`` in the decodings of ``chunk`` (at ``offset`` of its text),
    view ``decoded``; ``[]`` for a chunk with no run, no uuencoded line and no list of numbers.
    ``views`` (a payload about to leave) gets the decodings that are text, of every layer."""
    if automaton.empty:
        return []
    hits: list[_matcher.Hit] = []
    seen: set[tuple[int, int, int]] = set()
    # a chunk after the first of a text may begin inside an encoded group
    found = _scan(automaton, chunk, 1, _Budget(chunk), offset > 0, views)
    for start, end, indices in found:
        for index in indices:
            if (index, start, end) not in seen:
                seen.add((index, start, end))
                hits.append(_matcher.Hit(index, offset + start, offset + end, "decoded", False))
    return hits


_F = TypeVar("_F", bound=Spanned)


def uncovered(extra: list[_F], found: Iterable[_F]) -> list[_F]:
    """The findings of :func:`scan_layers` (``extra``) whose span no finding of the same secret
    in ``found`` overlaps: a value a form found keeps that finding's finer span."""
    if not extra:
        return []
    spans: dict[str, list[tuple[int, int]]] = {}
    for finding in found:
        spans.setdefault(finding.fingerprint, []).append((finding.start, finding.end))
    return [
        finding
        for finding in extra
        if not any(
            start < finding.end and finding.start < end
            for start, end in spans.get(finding.fingerprint, ())
        )
    ]
