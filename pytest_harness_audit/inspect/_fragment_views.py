"""Where in a text the fragments of split values are looked for: its plain view and the text
its encoded runs decode to.

A value can be split and each part encoded on its own (``base64`` of the first half in one
message, of the second in the next): neither part is a form of the value, and the base64 of
the whole is not their concatenation. So each run of the text that decodes (one layer: hex,
base64, base32 …, decompressed when it is a gzip stream, see :mod:`._layers`) to text is read
for fragments too, beside the text itself; a hit there is mapped back to the encoded
characters. So is a word too short for :mod:`._layers` (fewer than 20 characters) that is the
hex, base64 or base32 of a fragment's length of text: eight characters of a key, encoded.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Iterator
from functools import partial

from pytest_harness_audit.inspect import _encodings, _fragments, _layers, _matcher

Span = tuple[int, int]

#: A word too short for :mod:`._layers` (which decodes runs of 20 characters or more) that may
#: still encode a fragment: ``(encoding, its pattern)``, in the order tried (a word of hex
#: digits is read as hex only).
_SHORT_WORDS = (
    ("hex", re.compile(r"(?<![0-9A-Za-z+/_-])[0-9a-fA-F]{16,19}(?![0-9A-Za-z+/_=-])")),
    ("base64", re.compile(r"(?<![0-9A-Za-z+/_-])[0-9A-Za-z+/_-]{11,19}=*(?![0-9A-Za-z+/_=-])")),
    (
        "base32",
        re.compile(r"(?<![0-9A-Za-z])(?:[A-Z2-7]{13,19}|[a-z2-7]{13,19})=*(?![0-9A-Za-z=])"),
    ),
)


def _word_span(start: int, end: int, _first: int, _last: int) -> Span:
    """A hit in a short word's decoding: the whole word."""
    return start, end


def _short_views(segment: str) -> Iterator[tuple[str, int, int]]:
    """``(decoded, start, end)`` of each word of ``segment`` too short for :mod:`._layers` that
    decodes to text of a fragment's length (the part of a value encoded on its own, one a
    send)."""
    taken: set[int] = set()
    for name, pattern in _SHORT_WORDS:
        for match in pattern.finditer(segment):
            if match.start() in taken:
                continue
            try:
                data = _encodings.DECODERS[name](match.group().rstrip("="))
            except (ValueError, binascii.Error):
                continue
            view = data.decode("latin-1")
            if len(view) >= _fragments.MIN_FRAGMENT and view.isascii() and view.isprintable():
                taken.add(match.start())
                yield view, match.start(), match.end()


def _plain_map(segment: str, offset: int) -> Callable[[int, int], Span]:
    where = _matcher.positions_map(segment)
    return lambda start, end: (offset + where.start(start), offset + where.end(end))


def _view_map(view: str, back: _layers.Mapper, offset: int) -> Callable[[int, int], Span]:
    where = _matcher.positions_map(view)

    def span(start: int, end: int) -> Span:
        first, last = back(where.start(start), where.end(end))
        return offset + first, offset + last

    return span


class FragmentParts:
    """The normalised views of one text read for fragments (see the module doc), built once
    and matched against any number of memories."""

    def __init__(self, text: str) -> None:
        half = _fragments.FRAGMENT_SCAN // 2
        if len(text) <= 2 * half:
            segments = [(0, text)]
        else:
            segments = [(0, text[:half]), (len(text) - half, text[len(text) - half :])]
        self._parts: list[tuple[str, Callable[[], Callable[[int, int], Span]]]] = []
        for offset, segment in segments:
            self._parts.append((_matcher.normalise(segment), partial(_plain_map, segment, offset)))
            for view, back in _layers.text_views(segment):
                normal = _matcher.normalise(view)
                if len(normal) >= _fragments.MIN_FRAGMENT:
                    self._parts.append((normal, partial(_view_map, view, back, offset)))
            for view, start, end in _short_views(segment):
                normal = _matcher.normalise(view)
                if len(normal) >= _fragments.MIN_FRAGMENT:
                    word = partial(_word_span, start, end)
                    self._parts.append((normal, partial(_view_map, view, word, offset)))
        self._joined = "\0".join(normal for normal, _ in self._parts)

    def hits(
        self,
        index: _fragments.FragmentIndex,
        memory: _fragments.FragmentMemory,
        runs: bool = False,
    ) -> list[tuple[int, int, int]]:
        """``(secret, start, end)`` of every split value the text completes in ``memory``
        (see :meth:`~._fragments.FragmentMemory.scan`), as spans of the text."""
        spans: list[tuple[int, int, int]] = []
        for hit in memory.scan(index, self._joined, runs):
            at = hit.start
            for normal, make_map in self._parts:
                if at < len(normal):
                    spans.append((hit.secret, *make_map()(at, at + hit.end - hit.start)))
                    break
                at -= len(normal) + 1
        return spans
