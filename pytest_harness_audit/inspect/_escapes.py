"""A text with its character escapes decoded, for the secret matcher.

Program output often escapes what it prints: Python's ``repr`` of bytes (``b'\\xff\\xfes\\x00k…'``
for UTF-16), JSON (``"\\uff53\\uff4b…"``), HTML entities (``&#115;&#x6b;``, escaped again as
``&amp;#115;``), C octal (``\\163\\153``; ``\\0163`` as ``printf %b`` and ``echo -e`` read it is a
second view), or raw UTF-16 with a NUL after every ASCII character; a terminal's colour codes
(``grep --color=always`` around every digit) or backspace overstrikes split a value too.
:func:`scan_unescaped` decodes those escapes, drops NUL characters and terminal codes and scans
the result with the main automaton (so every form :mod:`._matcher` and :mod:`._skeleton` know
applies to the decoded text, fullwidth letters included); a hit is mapped back to the escaped
text for redaction. It scans the bytes of the dump lines of a chunk the same way
(:mod:`._dumps`), and a dump of UTF-16 text (a NUL in every other byte or so) also without its
NULs.

Only a chunk holding an escape or a NUL is decoded; the decoded view is not carried from one
chunk or send to the next (a value whose escaped form straddles a boundary is not found here).
"""

from __future__ import annotations

import re

from pytest_harness_audit.inspect import _dumps, _fold, _matcher

# an entity escaped again (`&amp;#115;`, `&amp;amp;#x73;`) is the same character
_ENTITIES = r"|&(?:amp;)*#([0-9]{1,7});|&(?:amp;)*#[xX]([0-9A-Fa-f]{1,6});"
# dropped like NULs: terminal colours and cursor moves (`grep --color=always` wraps each match in
# them), a title or link (OSC), and a character struck over by a backspace (`s\bs`, as `man`)
_DROPPED = (
    r"(\x00+|\x1b\[[0-?]{0,64}[ -/]{0,8}[@-~]|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)"
    r"|\x1b[@-Z\\-_]|[^\n]\x08)"
)
_ESCAPE = re.compile(
    r"\\x([0-9A-Fa-f]{2})|\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})"
    + _ENTITIES
    + r"|\\([0-7]{3})|"
    + _DROPPED
)
#: As ``printf %b`` and ``echo -e`` read octal: ``\0163`` is one character, not ``\016`` and 3.
_ESCAPE_ZERO_OCTAL = re.compile(
    r"\\x([0-9A-Fa-f]{2})|\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})"
    + _ENTITIES
    + r"|\\0?([0-7]{3})|"
    + _DROPPED
)
_ZERO_OCTAL = re.compile(r"\\0[0-7]{3}")
_TRIGGER = re.compile(r"\\[xuU0-7]|&(?:amp;)*#|[\x00\x1b\x08]")


def unescaped(chunk: str, escape: re.Pattern[str] = _ESCAPE) -> tuple[str, _matcher.Pieces] | None:
    """``chunk`` with its escapes decoded and NULs dropped, with the map of positions back;
    ``None`` when it holds neither."""
    if _TRIGGER.search(chunk) is None:
        return None
    pieces = _matcher.Pieces()
    parts: list[str] = []
    at = source = 0
    for match in escape.finditer(chunk):
        if match.start() > source:
            run = chunk[source : match.start()]
            pieces.add(at, source, len(run), len(run))
            parts.append(run)
            at += len(run)
        source = match.end()
        if match.group(7) is not None:
            continue  # NULs, terminal escapes, struck-over characters: dropped
        hexa, wide, wider, decimal, entity, octal = match.groups()[:6]
        if decimal is not None:
            code = int(decimal)
        elif octal is not None:
            code = int(octal, 8)
        else:
            code = int(hexa or wide or wider or entity, 16)
        if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            continue
        pieces.add(at, match.start(), match.end() - match.start(), 1)
        parts.append(chr(code))
        at += 1
    if source < len(chunk):
        run = chunk[source:]
        pieces.add(at, source, len(run), len(run))
        parts.append(run)
    return "".join(parts), pieces


def scan_unescaped(automaton: _matcher.Automaton, chunk: str, offset: int) -> list[_matcher.Hit]:
    """The hits of ``automaton`` in ``chunk`` with its escapes decoded (view ``unescaped``) and
    in the bytes its dump lines show (view ``undumped``, :mod:`._dumps`); ``[]`` for a chunk
    with neither."""
    if automaton.empty:
        return []
    hits: list[_matcher.Hit] = []
    decoded = unescaped(chunk)
    if decoded is not None:
        hits.extend(_scan_decoded(automaton, chunk, decoded, offset, "unescaped"))
        if _ZERO_OCTAL.search(chunk) is not None:  # read the other way too: both are written
            zero_octal = unescaped(chunk, _ESCAPE_ZERO_OCTAL)
            assert zero_octal is not None
            hits.extend(_scan_decoded(automaton, chunk, zero_octal, offset, "unescaped"))
    for view in _dumps.undump_all(chunk):
        hits.extend(_scan_decoded(automaton, chunk, view, offset, "undumped"))
        if view[0].count("\0") * 4 >= len(view[0]):  # UTF-16 text dumped: without its NULs too
            narrow = view[0].replace("\0", "")
            hits.extend(
                _scan_decoded(automaton, chunk, (narrow, _NulsDropped(view)), offset, "undumped")
            )
    return hits


class _NulsDropped(_matcher.Pieces):
    """The map of a decoded view without its NULs, through the view's own map to the text
    (worked out on a hit only)."""

    __slots__ = ("_kept", "_view")

    def __init__(self, view: tuple[str, _matcher.Pieces]) -> None:
        super().__init__()
        self._view = view
        self._kept: list[int] | None = None

    def _position(self, index: int) -> int:
        if self._kept is None:
            text = self._view[0]
            self._kept = [at for at, char in enumerate(text) if char != "\0"]
        return self._kept[min(index, len(self._kept) - 1)]

    def start(self, index: int) -> int:
        """The text position of the character ``index`` of the view without NULs."""
        return self._view[1].start(self._position(index))

    def end(self, index: int) -> int:
        """The text position just after the character ``index - 1`` of the view without NULs."""
        return self._view[1].end(self._position(index - 1) + 1)


def _scan_decoded(
    automaton: _matcher.Automaton,
    chunk: str,
    decoded: tuple[str, _matcher.Pieces],
    offset: int,
    view: str,
) -> list[_matcher.Hit]:
    text, pieces = decoded
    normal = _matcher.normalise(text)
    hits: list[_matcher.Hit] = []
    folded: _matcher.Pieces | _fold.FoldMap | None = None
    for start, end, indices in automaton.matches(normal):
        if folded is None:
            folded = _matcher.positions_map(text)
        source_start = pieces.start(folded.start(start))
        source_end = pieces.end(folded.end(end))
        if view == "undumped":  # the ASCII column of the hit's last line shows it too
            source_end = _dumps.line_end(chunk, source_end - 1)
        hits.extend(
            _matcher.Hit(index, offset + source_start, offset + source_end, view, False)
            for index in indices
        )
    return hits
