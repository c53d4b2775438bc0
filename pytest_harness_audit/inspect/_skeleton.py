"""More ways a secret is written: other encodings, and its letters and digits alone.

:func:`extra_forms` adds encodings an agent can produce with one shell command or one line of
code: rot13 and every other letter rotation (``tr 'a-z' 'b-za'``), base32, base64 of the value
reversed, of its own base64, of its rot13 or of its hex, its base64 in rot13 or in hex, hex
read backwards (``xxd -p | rev``), percent-encoded two or three times, and UTF-16 (hex and
base64, as PowerShell writes ``-EncodedCommand``). These are contiguous strings: the main
automaton (:mod:`._matcher`) finds them.

The *skeleton* of a text is its ASCII letters and digits alone, lower-cased: every separator a
value can be spread with or rewritten by (``-`` → ``_``, ``s-k-…`` by ``sed 's/./&-/g'``, a
character a line, ``\\x73\\x6b``, ``&#115;&#107;``, ``115,107,…``) is gone from it. A second
automaton matches the skeletons of a value's forms (at least :data:`SKELETON_MIN` characters,
so a short value is not found across ordinary words). A value's *body* — the value without a
vendor prefix such as ``sk-test-`` or ``whsec_`` — is matched on its own too (:func:`body`);
other parts of a value are not (the message fragments of :mod:`._fragments` aside). Positions
in the skeleton are mapped back to the text (:class:`~._matcher.Pieces`) for redaction.
"""

from __future__ import annotations

import base64
import codecs
import re
from collections.abc import Iterator

from pytest_harness_audit.inspect import _matcher

#: A skeleton pattern shorter than this is dropped (it could span ordinary words).
SKELETON_MIN = 12
#: A value's body (its vendor prefix removed) is matched on its own from this length.
BODY_MIN = 16
#: Letter rotations are tried for values with at least this many letters.
ROTATION_LETTERS = 4
#: A value with each character written 2 to this many times (``sed 's/./&&&/g'``) is matched.
REPEATS_MAX = 6

_ALNUM_RUN = re.compile(r"[0-9A-Za-z]+")
_PREFIX = re.compile(r"(?:[A-Za-z]{2,12}[-_])+")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_NOT_ALNUM_TEXT = re.compile(r"[^0-9A-Za-z]+")
_ALNUM_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NOT_ALNUM_BYTES = bytes(c for c in range(128) if chr(c) not in _ALNUM_CHARS)
_LOWER = "abcdefghijklmnopqrstuvwxyz"


_ROT47 = str.maketrans(
    "".join(chr(c) for c in range(33, 127)),
    "".join(chr(33 + (c - 33 + 47) % 94) for c in range(33, 127)),
)
_ATBASH = str.maketrans(_LOWER, _LOWER[::-1])


def skeleton(text: str) -> str:
    """The ASCII letters and digits of ``text``, lower-cased."""
    return _NOT_ALNUM.sub("", text.lower())


def _rotate(text: str, shift: int) -> str:
    rotated = _LOWER[shift:] + _LOWER[:shift]
    return text.translate(str.maketrans(_LOWER, rotated))


def _cores(data: bytes, width: int) -> Iterator[str]:
    """The characters of an encoding of ``data`` that do not depend on its neighbours, at each
    byte alignment (``width`` bytes per group: 3 for base64, 5 for base32)."""
    bits = 6 if width == 3 else 5
    for shift in range(width):
        if width == 3:
            encoded = base64.b64encode(b"\0" * shift + data).decode("ascii")
        else:
            encoded = base64.b32encode(b"\0" * shift + data).decode("ascii")
        first_bit, last_bit = 8 * shift, 8 * (shift + len(data))
        yield encoded[-(-first_bit // bits) : last_bit // bits]


def extra_forms(value: str) -> Iterator[tuple[str, str]]:
    """``(transform, form)`` of the contiguous encodings beyond :func:`._matcher.forms`."""
    lower = value.lower()
    yield "rot13", codecs.encode(lower, "rot13")
    if sum(c in _LOWER for c in lower) >= ROTATION_LETTERS and len(skeleton(value)) >= 12:
        for shift in range(1, 26):
            if shift != 13:
                yield "rotated", _rotate(lower, shift)
    data = value.encode("utf-8", "surrogatepass")
    yield "hex+reversed", data.hex()[::-1]
    for core in _cores(data, 5):
        yield "base32", core
    for core in _cores(data[::-1], 3):
        yield "base64+reversed", core
    for _transform, once in _matcher.forms(value):
        if _transform == "base64":
            for core in _cores(once.encode("ascii"), 3):
                yield "base64+base64", core
    for core in _cores(codecs.encode(value, "rot13").encode("utf-8", "surrogatepass"), 3):
        yield "base64+rot13", core
    for core in _cores(data, 3):
        yield "rot13+base64", codecs.encode(core, "rot13")
        yield "hex+base64", core.encode("ascii").hex()
    for core in _cores(data.hex().encode("ascii"), 3):
        yield "base64+hex", core
    if value.isascii():
        yield "rot47", value.translate(_ROT47)
        yield "atbash", lower.translate(_ATBASH)
        for codec in ("utf-32-le", "utf-32-be"):
            yield "utf32", value.encode(codec).hex()
    yield "url+url", "".join(f"%25{byte:02x}" for byte in data)
    yield "url+url+url", "".join(f"%2525{byte:02x}" for byte in data)
    rest = body(value)
    if rest is not None:
        for transform, form in _matcher.forms(rest):
            yield f"body+{transform}", form
    if value.isascii():
        for name, codec in (("utf16", "utf-16-le"), ("utf16", "utf-16-be")):
            wide = value.encode(codec)
            yield name, wide.hex()
            for core in _cores(wide, 3):
                yield name, core


def skeleton_forms(value: str) -> Iterator[tuple[str, str]]:
    """``(transform, skeleton)`` of every form of ``value`` matched with separators ignored:
    the value and its encodings, its character codes (decimal, octal, binary, with or without
    ``0``/``0o``/``0b`` prefixes, ``\\xHH``, ``\\uHHHH``, ``\\u{HH}``) and its characters
    each written 2 to :data:`REPEATS_MAX` times (``sed 's/./&&/g'``)."""
    data = value.encode("utf-8", "surrogatepass")
    seen: set[str] = set()
    candidates = [
        *(pair for pair in _matcher.forms(value) if pair[0] in ("plain", "reversed", "hex")),
        *(pair for pair in extra_forms(value) if pair[0] in ("rot13", "rotated")),
        ("decimal", "".join(str(byte) for byte in data)),
        ("octal", "".join(f"{byte:o}" for byte in data)),
        ("octal", "".join(f"{byte:03o}" for byte in data)),
        ("octal", "".join(f"0{byte:03o}" for byte in data)),  # printf %b, echo -e: \0163
        ("octal", "".join(f"0o{byte:o}" for byte in data)),  # Python's oct()
        ("binary", "".join(f"{byte:08b}" for byte in data)),
        ("binary", "".join(f"{byte:b}" for byte in data)),
        ("binary", "".join(f"0b{byte:08b}" for byte in data)),
        ("binary", "".join(f"0b{byte:b}" for byte in data)),  # Python's bin()
        ("binary", "".join(f"{byte:08b}"[::-1] for byte in data)),  # basenc --base2lsbf
        ("doubled", "".join(char * 2 for char in value)),
        *(
            ("repeated", "".join(char * times for char in value))
            for times in range(3, REPEATS_MAX + 1)
        ),
        ("escaped", "".join(f"x{byte:02x}" for byte in data)),
        ("escaped", "".join(f"0x{byte:02x}" for byte in data)),  # xxd -i, C arrays
        ("escaped", "".join(f"u{ord(char):04x}" for char in value)),
        ("escaped", "".join(f"u{ord(char):x}" for char in value)),  # JavaScript's \u{73}
    ]
    rest = body(value)
    if rest is not None:
        candidates += [("body", rest), ("body+reversed", rest[::-1])]
    for transform, form in candidates:
        key = skeleton(form)
        if len(key) >= SKELETON_MIN and key not in seen:
            seen.add(key)
            yield transform, key


def body(value: str) -> str | None:
    """``value`` without a vendor prefix of words and separators (``sk-test-``, ``whsec_test_``,
    ``ghp_``), when what is left is at least :data:`BODY_MIN` characters: the prefix is public,
    the body is the secret."""
    match = _PREFIX.match(value)
    if match is None or len(value) - match.end() < BODY_MIN:
        return None
    return value[match.end() :]


def skeleton_text(chunk: str) -> str:
    """The skeleton of ``chunk`` (its ASCII letters and digits, lower-cased), by C passes."""
    if chunk.isascii():
        return chunk.encode("ascii").lower().translate(None, _NOT_ALNUM_BYTES).decode("ascii")
    return _NOT_ALNUM_TEXT.sub("", chunk).lower()


def skeleton_pieces(chunk: str) -> _matcher.Pieces:
    """The map from positions of :func:`skeleton_text` back to ``chunk`` (built on a hit)."""
    pieces = _matcher.Pieces()
    at = 0
    for match in _ALNUM_RUN.finditer(chunk):
        width = match.end() - match.start()
        pieces.add(at, match.start(), width, width)
        at += width
    return pieces


def _tail(chunk: str, count: int, offset: int) -> list[int]:
    """Positions (from ``offset``) of the last ``count`` letters and digits of ``chunk``."""
    found: list[int] = []
    index = len(chunk) - 1
    while index >= 0 and len(found) < count:
        if chunk[index] in _ALNUM_CHARS:
            found.append(offset + index)
        index -= 1
    return found[::-1]


def scan_skeleton(
    automaton: _matcher.Automaton,
    chunk: str,
    offset: int,
    carries: dict[str, _matcher.Carry],
    carry_on: bool = True,
) -> list[_matcher.Hit]:
    """Every skeleton hit in ``chunk`` (at ``offset`` of its text); the tail of the skeleton
    is carried into the next chunk or send (unless ``carry_on`` is false), as
    :func:`._matcher.scan_chunk` does."""
    if automaton.empty:
        return []
    view = skeleton_text(chunk)
    carry = carries.setdefault("skeleton", _matcher.Carry())
    haystack = carry.text + view
    carried = len(carry.text)
    hits: list[_matcher.Hit] = []
    seen: set[tuple[int, int, int]] = set()
    pieces: _matcher.Pieces | None = None
    for start, end, indices in automaton.matches(haystack):
        if end <= carried:
            continue
        if pieces is None:
            pieces = skeleton_pieces(chunk)
        split = start < carried
        if split:
            source_start = carry.positions[start]
            split = source_start < 0
            source_start = max(source_start, 0)
        else:
            source_start = offset + pieces.start(start - carried)
        source_end = offset + pieces.end(end - carried)
        for index in indices:
            if (index, source_start, source_end) not in seen:
                seen.add((index, source_start, source_end))
                hits.append(_matcher.Hit(index, source_start, source_end, "skeleton", split))
    if not carry_on:
        return hits
    keep = max(automaton.longest - 1, 0)
    tail = haystack[-keep:] if keep else ""
    fresh = min(len(tail), len(view))
    old = len(tail) - fresh
    positions = carry.positions[len(carry.positions) - old :] if old else []
    positions += _tail(chunk, fresh, offset)
    carries["skeleton"] = _matcher.Carry(tail, positions)
    return hits
