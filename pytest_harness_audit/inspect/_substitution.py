"""A secret written through a character substitution: Caesar shifts, atbash, XOR, any cipher
that maps each character to one other consistently.

:func:`substitution_forms` gives the substitutions an agent writes with one ``tr`` or one line
of code — every shift of the hexadecimal digits (mod 16), of the letters and digits together
(mod 36, in both orders, and mod 62 with case kept), of the letters and the digits each on
their own (every pair of shifts), of printable ASCII (mod 94, ``rot47`` among them), atbash of
each of those alphabets, and every character XOR one constant. They are contiguous strings for
the main automaton (:mod:`._matcher`), so they cost no pass of their own.

Any other consistent substitution keeps the value's *shape*: two positions hold the same
character in the copy exactly when they do in the value (or in the value read backwards: a
substitution and a ``rev``, in either order). :class:`ShapeIndex` finds a window of a
text with the shape of a value's core (:func:`._runs.core`'s part), when the core repeats
characters at least :data:`MIN_REPEATS` times (fewer equalities would match ordinary text). A
filter keeps it cheap: a few of the core's equal pairs at one distance are checked for every
window at once, with integer arithmetic over the text's bytes (a zero byte of ``x ^ (x >> 8d)``
is a character equal to the one ``d`` after it); only a window passing the filter is compared
in full.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from pytest_harness_audit.inspect import _matcher, _runs, _skeleton, _token_shapes

#: A value is shifted and XORed from this many letters and digits.
MIN_LETTERS_DIGITS = 16
#: A core takes part from this many characters.
MIN_LENGTH = 20
#: A core repeats characters at least this many times (length less distinct characters).
MIN_REPEATS = 6
#: Equal pairs of the core checked by the filter.
FILTER_PAIRS = 4
#: A text scanned on its own (an output, a record; not a payload leaving) is read for any
#: substitution up to this many characters: the filter costs a few percent of a scan.
SHAPE_SCAN = 64 * 1024
#: Windows passing the filter compared in full per text.
MAX_CANDIDATES = 4096

_SPACE = bytes(code for code in range(128) if chr(code).isspace())
_SPACES = re.compile("[" + "".join(f"\\x{code:02x}" for code in _SPACE) + "]+")
_NOT_SPACES = re.compile("[^" + "".join(f"\\x{code:02x}" for code in _SPACE) + "]+")
_RUN = re.compile(r"(.)\1*", re.DOTALL)
_DIGITS = "0123456789"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_PRINTABLE = "".join(chr(code) for code in range(33, 127))
_ALPHABETS = (
    ("hex", _DIGITS + "abcdef"),
    ("alnum", _DIGITS + _LOWER),
    ("alnum", _LOWER + _DIGITS),
    ("alnum62", _DIGITS + _UPPER + _LOWER),
    ("alnum62", _UPPER + _LOWER + _DIGITS),
    ("ascii", _PRINTABLE),
)


def _shifted(alphabet: str, shift: int) -> dict[int, int]:
    return str.maketrans(alphabet, alphabet[shift:] + alphabet[:shift])


def substitution_forms(value: str) -> Iterator[tuple[str, str]]:
    """``(transform, form)`` of the enumerable substitutions of ``value``: an ASCII one with
    at least :data:`MIN_LETTERS_DIGITS` letters and digits (hundreds of shifts of a short value
    would match ordinary words)."""
    if not value.isascii() or len(_skeleton.skeleton(value)) < MIN_LETTERS_DIGITS:
        return
    lower = value.lower()
    for name, alphabet in _ALPHABETS:
        # the hexadecimal and 36-character alphabets are case-blind (the matcher folds case)
        source = lower if len(alphabet) <= 36 else value
        for shift in range(1, len(alphabet)):
            yield f"shifted_{name}", source.translate(_shifted(alphabet, shift))
        yield f"atbash_{name}", source.translate(str.maketrans(alphabet, alphabet[::-1]))
    for letters in range(26):
        for digits in range(1, 10):
            table = {**_shifted(_LOWER, letters), **_shifted(_DIGITS, digits)}
            yield "shifted_letters_digits", lower.translate(table)
    for constant in range(1, 256):
        yield "xor", "".join(chr(ord(char) ^ constant) for char in value)


def shape_core(value: str) -> str | None:
    """The part of ``value`` whose shape is looked for (its core, case kept), else ``None``."""
    if _runs.core(value) is None or not value.isascii():
        return None
    part = _skeleton.body(value) or value
    if len(part) < MIN_LENGTH or len(part) - len(set(part)) < MIN_REPEATS:
        return None
    return part


@dataclass(frozen=True)
class _Filter:
    """Equal pairs of a core at one distance: ``core[i] == core[i + distance]`` for each
    ``i`` of ``offsets``."""

    secret: int
    core: str
    distance: int
    offsets: tuple[int, ...]


def _filter(secret: int, core: str) -> _Filter:
    pairs: Counter[int] = Counter()
    for i, char in enumerate(core):
        following = core.find(char, i + 1)
        if following > 0:
            pairs[following - i] += 1
    distance = min(pairs, key=lambda d: (-pairs[d], d))
    offsets = [i for i in range(len(core) - distance) if core[i] == core[i + distance]][
        :FILTER_PAIRS
    ]
    return _Filter(secret, core, distance, tuple(offsets))


class ShapeIndex:
    """The cores of a list of ``(secret, value)`` pairs, found through any substitution, read
    forwards or backwards."""

    def __init__(self, values: list[tuple[int, str]]) -> None:
        # a core read backwards too: `tr … | rev` is a substitution of the reversed value
        self._filters = [
            _filter(secret, written)
            for secret, value in values
            if (core := shape_core(value)) is not None
            for written in (core, core[::-1])
        ]
        self.empty = not self._filters
        #: the shortest core: a text shorter than it (spaces and all) holds none
        self._shortest = min((len(check.core) for check in self._filters), default=0)
        self._wide = (0, 0, 0)  # lanes, high, low: one attribute, so threads see one set

    def _masks(self, size: int) -> tuple[int, int]:
        """``0x80`` and ``0x7f`` in each of ``size`` byte lanes (cut from a wider pair kept)."""
        lanes, high, low = self._wide
        if lanes < size:
            lanes = max(size, 2 * lanes, 4096)
            high = int.from_bytes(b"\x80" * lanes, "little")
            low = (high >> 7) * 0x7F
            self._wide = (lanes, high, low)
        cut = 8 * (lanes - size)
        return high >> cut, low >> cut

    def hits(self, text: str) -> list[tuple[int, int, int]]:
        """``(secret, start, end)`` of every window of ``text`` with the shape of a core that
        is not the core itself (that is the main matcher's)."""
        if self.empty or len(text) < self._shortest:
            return []
        # ASCII whitespace out (a spaced-out copy is found, and runs of blanks are no
        # candidates); a character outside ASCII reads as ``?`` to the filter (a window
        # passing it is compared in the text itself)
        data = text.encode("ascii", "replace").translate(None, _SPACE)
        view = ""
        squeezed: list[str] = []  # the text without its ASCII whitespace, made on first need

        def real() -> str:
            if not squeezed:
                squeezed.append(_SPACES.sub("", text))
            return squeezed[0]

        size = len(data)
        lanes = int.from_bytes(data, "little")
        high, low = self._masks(size)
        found: list[tuple[int, int, int]] = []
        differs: dict[int, int] = {}
        for check in self._filters:
            if len(check.core) > size:
                continue
            if check.distance not in differs:
                differs[check.distance] = lanes ^ (lanes >> (8 * check.distance))
            diff = differs[check.distance]
            first = check.offsets[0]
            joined = 0
            for offset in check.offsets:
                joined |= diff >> (8 * (offset - first))
            # the top bit of a lane is set when the lane is not zero (no carry across lanes)
            zero = high ^ ((((joined & low) + low) | joined) & high)
            if zero:
                view = view or data.decode("ascii")
                found += self._verify(check, view, None if text.isascii() else real, zero, first)
        if not found:
            return []
        pieces = _matcher.Pieces()
        at = 0
        for run in _NOT_SPACES.finditer(text):
            width = run.end() - run.start()
            pieces.add(at, run.start(), width, width)
            at += width
        return [(secret, pieces.start(start), pieces.end(end)) for secret, start, end in found]

    def _verify(
        self,
        check: _Filter,
        text: str,
        real: Callable[[], str] | None,
        zero: int,
        first: int,
    ) -> Iterator[tuple[int, int, int]]:
        """The first window passing the filter (``zero``) that has the core's shape; ``text``
        is what the filter read (``?`` for a character beyond ASCII), ``real`` gives the
        characters themselves when there are such."""
        size = len(check.core)
        marks = zero.to_bytes(len(text), "little")
        doubled = check.core[first] == check.core[first + 1]
        at = marks.find(0x80)
        for _ in range(MAX_CANDIDATES):
            if at < 0:
                return
            start = at - first
            window = text[start : start + size]
            if real is not None and "?" in window:
                window = real()[start : start + size]
            if start >= 0 and window != check.core and _token_shapes.same_shape(check.core, window):
                yield check.secret, start, start + size
                return
            pair = text[at : at + 2]
            if not doubled and pair[:1] == pair[1:] and (real is None or pair != "??"):
                # inside a run of one character: the core's is no run there
                run = _RUN.match(text, at)
                at = max(at, run.end() - 2) if run is not None else at
            at = marks.find(0x80, at + 1)


class SendIndex:
    """What a payload about to leave is also read for: runs of a value (:mod:`._runs`) and
    its core through any substitution (:class:`ShapeIndex`)."""

    def __init__(self, values: list[tuple[int, str]]) -> None:
        self._runs = _runs.RunIndex(values)
        self._shapes = ShapeIndex(values)
        cores = [(secret, core) for secret, value in values if (core := shape_core(value))]
        self._words = _token_shapes.TokenShapes(cores)

    def hits(
        self,
        text: str,
        before: str = "",
        shapes_only: bool = False,
        memory: _runs.PieceMemory | None = None,
        views: Sequence[str] | None = None,
        *,
        words: bool = False,
    ) -> list[tuple[int, int, int, str]]:
        """``(secret, start, end, transform)``: ``run`` hits (unless ``shapes_only``; with
        ``memory``, pieces earlier texts held too, their short words with ``words``: see
        :meth:`._runs.RunIndex.hits`; with ``views``, runs in the text's
        decodings), then ``substituted`` ones, then ``codebook`` ones (one word a character:
        :mod:`._token_shapes`)."""
        runs = [] if shapes_only else self._runs.hits(text, before, memory, views, words=words)
        found = [(*hit, "run") for hit in runs]
        found += [(*hit, "substituted") for hit in self._shapes.hits(text)]
        found += [(*hit, "codebook") for hit in self._words.hits(text)]
        return found
