"""The multi-pattern matcher behind :class:`~.secrets.SecretRegistry`.

Every known secret value is turned into a few *forms* (the value, reversed, hex, base64 at the
three byte alignments, url-safe base64), and every form is put, case-folded and without
whitespace, into one Aho–Corasick automaton (``ahocorasick-rs``). A text is scanned the same way:
case-folded (ASCII, length-preserving) and with its whitespace removed, so ``SK-LIVE``,
``s k - l i v e`` and base64 wrapped over several lines are all found by the one pass. When a
text contains ``%XX`` escapes it is also scanned percent-decoded (``+`` read as a space), which
catches URL-encoding however much of the value it covers; a chunk dense with escapes (more than
one ``%`` in :data:`DENSE_ESCAPES` characters) is not decoded, and is left to the patterns of the
value fully percent-encoded and ``quote``-encoded. The cost of a pass is linear in the
length of the text and does not grow with the number of secrets.

Positions found in the normalised text are mapped back to the original text through
:class:`Pieces`, so findings carry real offsets and redaction replaces the exact span.

Texts are scanned in chunks of :data:`CHUNK` characters; the normalised tail of one chunk is
carried into the next (:class:`Carry`), so a value that straddles a chunk boundary — or, for a
:class:`~.secrets.StreamScanner`, two consecutive sends — is still found.
"""

from __future__ import annotations

import base64
import bisect
import itertools
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import quote

import ahocorasick_rs

from pytest_harness_audit.inspect import _fold

#: Characters scanned per chunk; the normalised copies of one chunk are all the extra memory.
CHUNK = 256 * 1024
#: Chunks with more than one ``%`` per this many characters are not percent-decoded.
DENSE_ESCAPES = 8
#: A pattern shorter than this (normalised) is dropped: it would match ordinary text.
MIN_PATTERN = 6

_HEXDIGITS = "0123456789abcdefABCDEF"
#: The ASCII characters ``str.split()`` (and ``\s``) take for whitespace.
_ASCII_SPACE = bytes(code for code in range(128) if chr(code).isspace())
_NON_SPACE = re.compile(r"\S+")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
# `%2541` is `%41` encoded again: an escape with its `%` encoded (any number of times) is
# decoded at once, so a value percent-encoded two or three times reads as itself
_PERCENT_SPLIT = re.compile(r"(%(?:25)*)([0-9A-Fa-f]{2})")
_NESTED_ESCAPE = re.compile(r"%(?:25)*[0-9A-Fa-f]{2}")
_PERCENT_PAIR = re.compile(r"%([0-9A-Fa-f]{2})")
_HEX_CHAR = {f"{a}{b}": chr(int(a + b, 16)) for a in _HEXDIGITS for b in _HEXDIGITS}


def as_text(data: str | bytes, budget: int) -> tuple[str, int, int]:
    """``(text, unscanned, head)``: what of ``data`` is scanned, within ``budget`` characters.

    Beyond the budget, the head and the tail halves are kept, joined by a newline at ``head``
    (so no match can span the gap), and ``unscanned`` counts what was left out.
    """
    size = len(data)
    if size <= budget:
        head_part, tail_part, unscanned = data, data[:0], 0
    else:
        half = budget // 2
        head_part, tail_part, unscanned = data[:half], data[size - half :], size - 2 * half
    if isinstance(head_part, bytes):
        assert isinstance(tail_part, bytes)
        head_text = head_part.decode("latin-1")
        tail_text = tail_part.decode("latin-1")
    else:
        assert isinstance(tail_part, str)
        head_text, tail_text = head_part, tail_part
    if not unscanned:
        return head_text, 0, len(head_text)
    return f"{head_text}\n{tail_text}", unscanned, len(head_text)


def fold(text: str) -> str:
    """``text`` case-folded, and for a text that is not ASCII, Unicode-folded (:mod:`._fold`)."""
    return _fold.fold(text)


def squeeze(text: str) -> str:
    """``text`` without any whitespace."""
    return "".join(text.split())


def normalise(text: str) -> str:
    """What the automaton sees of ``text``: folded (case, and Unicode look-alikes, invisible
    characters and compatibility forms: :mod:`._fold`), whitespace removed."""
    if text.isascii():  # the same result, by C passes that create no objects
        return text.encode("ascii").lower().translate(None, _ASCII_SPACE).decode("ascii")
    return squeeze(_fold.fold(text))


def positions_map(view: str) -> Pieces | _fold.FoldMap:
    """The map from positions of ``normalise(view)`` back to ``view``."""
    return space_pieces(view) if view.isascii() else _fold.FoldMap(view)


def _base64_cores(data: bytes, alphabet: bytes | None) -> Iterator[tuple[int, str]]:
    """The base64 characters of ``data`` that do not depend on its neighbours, at each of the
    three byte alignments it can have inside a longer encoded text."""
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data, altchars=alphabet).decode("ascii")
        first_bit, last_bit = 8 * shift, 8 * (shift + len(data))
        start = -(-first_bit // 6)  # the first character whose 6 bits are all the value's
        stop = last_bit // 6  # one past the last such character
        yield shift, encoded[start:stop]


def forms(value: str) -> Iterator[tuple[str, str]]:
    """``(transform, form)`` for every encoding of ``value`` the matcher looks for.

    ``plain`` also covers case-folded and whitespace-spread copies, and percent-encoded ones
    (the text side decodes those); ``hex`` covers upper case.
    """
    data = value.encode("utf-8", "surrogatepass")
    yield "plain", value
    yield "reversed", value[::-1]
    yield "hex", data.hex()
    # percent-encoded: every byte, or the reserved ones (`quote`), or form-encoded spaces;
    # the text side also decodes any other mix of escapes (see `scan_chunk`)
    yield "url", "".join(f"%{byte:02x}" for byte in data)
    quoted = quote(value, safe="")
    if quoted != value:
        yield "url", quoted
    if any(c.isspace() for c in value):
        yield "url", "+".join(quote(part, safe="") for part in value.split())
    if not value.isascii():
        # percent-decoding a UTF-8 text byte by byte gives these code points
        yield "plain", data.decode("latin-1")
    for _shift, core in _base64_cores(data, None):
        yield "base64", core
        safe = core.replace("+", "-").replace("/", "_")
        if safe != core:
            yield "base64url", safe


@dataclass(frozen=True)
class Pattern:
    """One form of one secret: which secret, how it was transformed, and the form itself."""

    secret: int
    transform: str
    form: str
    key: str


class Pieces:
    """Maps positions of a derived text back to the text it was derived from.

    The derived text is a sequence of pieces; piece ``k`` starts at ``derived[k]``, comes from
    the source at ``source[k]`` and covers ``source_len[k]`` source characters. A copied run
    has the same length on both sides; a decoded ``%XX`` is one character for three.
    """

    __slots__ = ("derived", "source", "source_len", "width")

    def __init__(self) -> None:
        self.derived: list[int] = []
        self.source: list[int] = []
        self.source_len: list[int] = []
        self.width: list[int] = []

    def add(self, derived: int, source: int, source_len: int, width: int) -> None:
        """Append a piece of ``width`` derived characters from ``source_len`` at ``source``."""
        self.derived.append(derived)
        self.source.append(source)
        self.source_len.append(source_len)
        self.width.append(width)

    def start(self, index: int) -> int:
        """The source position of derived character ``index``."""
        k = bisect.bisect_right(self.derived, index) - 1
        if self.source_len[k] == self.width[k]:
            return self.source[k] + index - self.derived[k]
        return self.source[k]

    def end(self, index: int) -> int:
        """The source position just after derived character ``index - 1`` (an exclusive end)."""
        k = bisect.bisect_right(self.derived, index - 1) - 1
        if self.source_len[k] == self.width[k]:
            return self.source[k] + index - self.derived[k]
        return self.source[k] + self.source_len[k]


def space_pieces(text: str) -> Pieces:
    """The pieces of ``squeeze(text)``: one per run of non-whitespace characters."""
    pieces = Pieces()
    at = 0
    for match in _NON_SPACE.finditer(text):
        width = match.end() - match.start()
        pieces.add(at, match.start(), width, width)
        at += width
    return pieces


class PercentView:
    """``text`` with every ``%XX`` decoded to one character (``%25XX``, ``%2525XX`` … too: see
    ``_PERCENT_SPLIT``) and a ``+`` of its own read as a space, and the map of its positions
    back to ``text`` (built on first use: most views have no hit)."""

    def __init__(self, text: str) -> None:
        # a `+` is a space (form encoding), a decoded `%2B` a plus: no escape holds a `+`
        text = text.replace("+", " ")
        parts = _PERCENT_PAIR.split(text)
        self._widths: list[int] | None = None  # None: every escape 3 characters, the common case
        if "25" in parts[1::2]:  # an escape of a `%`: read nested escapes at once
            parts = _PERCENT_SPLIT.split(text)
            self._runs = parts[0::3]
            self._widths = [len(prefix) + 2 for prefix in parts[1::3]]
            parts[1::3] = [""] * len(self._widths)
            parts[2::3] = map(_HEX_CHAR.__getitem__, parts[2::3])
        else:
            self._runs = parts[0::2]
            parts[1::2] = map(_HEX_CHAR.__getitem__, parts[1::2])
        self.text = "".join(parts)
        self._derived: list[int] | None = None
        self._source: list[int] = []
        self._extra: list[int] = []

    def _escapes(self) -> list[int]:
        if self._derived is None:
            before = list(itertools.accumulate(map(len, self._runs[:-1])))
            widths = self._widths or itertools.repeat(3, len(before))
            escaped = [0, *itertools.accumulate(widths)]
            self._derived = list(map(operator.add, before, range(len(before))))
            self._source = list(map(operator.add, before, escaped))
            # source characters beyond derived ones once k escapes are behind
            self._extra = [width - count for count, width in enumerate(escaped)]
        return self._derived

    def start(self, index: int) -> int:
        """The source position of derived character ``index``."""
        derived = self._escapes()
        k = bisect.bisect_right(derived, index)
        if k and derived[k - 1] == index:
            return self._source[k - 1]
        return index + self._extra[k]

    def end(self, index: int) -> int:
        """The source position just after derived character ``index - 1``."""
        derived = self._escapes()
        k = bisect.bisect_right(derived, index - 1)
        if k and derived[k - 1] == index - 1:
            return self._source[k - 1] + (3 if self._widths is None else self._widths[k - 1])
        return index + self._extra[k]


@dataclass
class Carry:
    """The normalised tail of what one view has scanned so far, with source positions.

    A position of ``-1`` belongs to an earlier text (an earlier send of a stream).
    """

    text: str = ""
    positions: list[int] = field(default_factory=list)

    def forget_positions(self) -> None:
        """Mark every carried character as belonging to an earlier text."""
        self.positions = [-1] * len(self.text)


@dataclass(frozen=True)
class Hit:
    """A pattern found: its index, the source span, the view and whether it began earlier."""

    pattern: int
    start: int
    end: int
    view: str
    split: bool


class Automaton:
    """One Aho–Corasick automaton over the normalised forms of every pattern.

    It runs over UTF-8 bytes (``ahocorasick-rs``, several times faster than over ``str``);
    byte offsets are turned back into character offsets for texts that are not ASCII.
    """

    def __init__(self, patterns: list[Pattern]) -> None:
        self.patterns = patterns
        keyed: dict[str, list[int]] = {}
        for index, pattern in enumerate(patterns):
            keyed.setdefault(pattern.key, []).append(index)
        self._keys = list(keyed)
        self._indices = [tuple(keyed[key]) for key in self._keys]
        self.longest = max((len(key) for key in self._keys), default=0)
        self.empty = not self._keys
        self._automaton = (
            None
            if self.empty
            else ahocorasick_rs.BytesAhoCorasick(
                [key.encode("utf-8", "surrogatepass") for key in self._keys]
            )
        )

    def matches(self, haystack: str) -> Iterator[tuple[int, int, tuple[int, ...]]]:
        """``(start, end, pattern indices)`` of every match in ``haystack``, overlapping ones
        included, in character offsets."""
        if self._automaton is None or not haystack:
            return
        data = haystack.encode("utf-8", "surrogatepass")
        found = self._automaton.find_matches_as_indexes(data, overlapping=True)
        if not found:
            return
        if len(data) == len(haystack):  # ASCII: byte offsets are character offsets
            for key, start, end in found:
                yield start, end, self._indices[key]
            return
        # bytes → characters, walking the text once in byte order
        ordered = sorted({offset for _, start, end in found for offset in (start, end)})
        chars: dict[int, int] = {}
        byte_at = char_at = 0
        for offset in ordered:
            char_at += len(data[byte_at:offset].decode("utf-8", "surrogatepass"))
            chars[offset] = char_at
            byte_at = offset
        for key, start, end in found:
            yield chars[start], chars[end], self._indices[key]


def _tail_positions(view: str, count: int, pieces: PercentView | None, offset: int) -> list[int]:
    """Source positions of the last ``count`` characters of ``normalise(view)``."""
    if count <= 0:
        return []
    window = 2 * count
    while True:
        begin = max(0, len(view) - window)
        if view.isascii():
            found = [
                match.start() + i
                for match in _NON_SPACE.finditer(view, begin)
                for i in range(match.end() - match.start())
            ]
        else:  # a folded character may be longer or shorter than one
            found = _fold.fold_positions(view, begin)
        if len(found) >= count or begin == 0:
            break
        window *= 4
    found = found[-count:]
    if pieces is not None:
        found = [pieces.start(position) for position in found]
    return [offset + position for position in found]


def _percent_tail_positions(chunk: str, count: int, offset: int) -> list[int]:
    """:func:`_tail_positions` of the percent-decoded ``chunk``, decoding only its end."""
    if count <= 0:
        return []
    window = 6 * count
    while True:
        begin = max(0, len(chunk) - window)
        # never start inside an escape (one with its `%` encoded again is longer than 3)
        at = chunk.rfind("%", max(0, begin - 64), begin)
        if at >= 0:
            escape = _NESTED_ESCAPE.match(chunk, at)
            if escape is not None and escape.end() > begin:
                begin = at
        view = PercentView(chunk[begin:])
        found = _tail_positions(view.text, count, view, offset + begin)
        if len(found) >= count or begin == 0:
            return found
        window *= 4


def percent_escaped(chunk: str) -> bool:
    """Whether ``chunk`` is also scanned percent-decoded: it holds a ``%XX`` escape, and is not
    dense with ``%`` (decoding that would cost a Python step per escape)."""
    escapes = chunk.count("%")
    return 0 < escapes <= len(chunk) // DENSE_ESCAPES and _PERCENT.search(chunk) is not None


def scan_chunk(
    automaton: Automaton,
    chunk: str,
    offset: int,
    carries: dict[str, Carry],
    carry_on: bool = True,
) -> list[Hit]:
    """Every hit in ``chunk`` (which starts at ``offset`` of its text), carrying tails on.

    ``carry_on=False``: nothing is scanned on from this chunk (the last one of a one-shot
    scan), so no tail is worked out for the next; the hits are the same.
    """
    hits: list[Hit] = []
    seen: set[tuple[int, int, int]] = set()
    views: list[tuple[str, str, PercentView | None]] = [("plain", chunk, None)]
    # a chunk dense with escapes is left to the fully-encoded patterns: decoding it would cost
    # a Python step per escape
    escaped = percent_escaped(chunk)
    if escaped or carries.get("url", Carry()).text:
        decoded = PercentView(chunk)
        views.append(("url", decoded.text, decoded))
    keep = max(automaton.longest - 1, 0)
    for name, view, decode_pieces in views:
        carry = carries.setdefault(name, Carry())
        normal = normalise(view)
        haystack = carry.text + normal
        carried = len(carry.text)
        spaces: Pieces | _fold.FoldMap | None = None
        for start, end, indices in automaton.matches(haystack):
            if end <= carried:
                continue  # found (and reported) with the earlier text
            if spaces is None:
                spaces = positions_map(view)
            split = start < carried
            if split:
                source_start = carry.positions[start]
                split = source_start < 0
                source_start = max(source_start, 0)
            else:
                source_start = spaces.start(start - carried)
                if decode_pieces is not None:
                    source_start = decode_pieces.start(source_start)
                source_start += offset
            source_end = spaces.end(end - carried)
            if decode_pieces is not None:
                source_end = decode_pieces.end(source_end)
            source_end += offset
            for index in indices:
                if (index, source_start, source_end) not in seen:
                    seen.add((index, source_start, source_end))
                    hits.append(Hit(index, source_start, source_end, name, split))
        if not carry_on:
            continue
        tail_text = haystack[-keep:] if keep else ""
        fresh = min(len(tail_text), len(normal))
        old = len(tail_text) - fresh
        positions = carry.positions[len(carry.positions) - old :] if old else []
        if decode_pieces is None:
            positions += _tail_positions(view, fresh, None, offset)
        else:
            positions += _percent_tail_positions(chunk, fresh, offset)
        carries[name] = Carry(tail_text, positions)
        if name == "url" and not escaped and fresh == len(tail_text):
            # nothing percent-encoded is left in the tail: the url view equals the plain one
            carries["url"] = Carry()
    return hits


def describe(pattern: Pattern, hit: Hit, text: str) -> str:
    """The transform a finding names: the pattern's, and how the text differs from its form
    (``url``, ``separators_ignored``, ``case_folded`` …; see :class:`~.secrets.SecretFinding`)."""
    parts = [] if pattern.transform == "plain" else [pattern.transform]
    if hit.view == "url":
        parts.append("url")
    elif hit.view == "skeleton":
        parts.append("separators_ignored")
    elif hit.view in ("unescaped", "undumped", "decoded"):
        parts.append(hit.view)
    elif not hit.split:
        seen = text[hit.start : hit.end]
        if not seen.isascii() and pattern.form.isascii():
            parts.append("unicode_folded")
        elif seen != pattern.form:
            exact = squeeze(seen) == squeeze(pattern.form)
            if not exact and pattern.transform not in ("hex", "url"):
                parts.append("case_folded")
            if seen.lower() != pattern.form.lower():
                parts.append("whitespace_stripped")
    if hit.split:
        parts.append("split")
    return "+".join(parts) or "plain"
