"""Binary-to-text encodings beyond base64, base32 and hex, for the secret matcher.

:func:`more_forms` gives the contiguous forms of a value in encodings one command writes:
base32hex (``basenc --base32hex``), Ascii85 (``base64.a85encode``, ``btoa``'s ``<~ ~>``),
base85 (``base64.b85encode``, git's binary patches), Z85 (``basenc --z85``) and base64 read
backwards (``base64 | rev``), uuencode (``uuencode``, ``binascii.b2a_uu``; a space or a
backtick for zero); for a value whose secret part is hexadecimal, the bytes those digits stand
for in base64 (standard and url-safe), base32, the base85 family, base58 and base62, as one
number in every radix from 2 to 36 (``BigInt('0x' + key).toString(36)``, ``numpy.base_repr``)
and in the other byte order (``xxd -r -p | base64``, ``int(key, 16)``, ``bin(…)``,
``bytes.fromhex(key)[::-1].hex()``). As for base64, a form
holds only the characters that do not depend on the value's neighbours, at every byte
alignment it can have inside a longer text; the main automaton (:mod:`._matcher`) finds
them, wrapped over lines or not.

:data:`DECODERS` read the same encodings back (and hex, base64 and base32), for the
decode-and-rescan loop of :mod:`._layers`; :func:`inflate` undoes a compression a decoding
starts with (``gzip | base64``).
"""

from __future__ import annotations

import base64
import binascii
import bz2
import lzma
import re
import zlib
from collections.abc import Callable, Iterator
from functools import partial

_B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_B85_TO_Z85 = str.maketrans(_B85, _Z85)
#: A hexadecimal secret part (after a vendor prefix such as ``sk-test-``), in whole bytes.
_HEX_PART = re.compile(r"(?:[A-Za-z]{2,12}[-_])*((?:[0-9A-Fa-f]{2}){8,})")
_Z85_TO_B85 = str.maketrans(_Z85, _B85)
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
#: base64's six-bit values as uuencode writes them: ``chr(32 + value)``, zero as a space or a
#: backtick (both are written, by different tools)
_B64_TO_UU = str.maketrans(_B64, "".join(chr(32 + value) for value in range(64)))
_B64_TO_UU_BACKTICK = str.maketrans(_B64, "`" + "".join(chr(32 + v) for v in range(1, 64)))
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _cores(data: bytes, group: int, chars: int, encode: Callable[[bytes], str]) -> Iterator[str]:
    """The characters of ``encode(data)`` that depend on ``data`` alone, at each of the
    ``group`` byte alignments (``group`` bytes written as ``chars`` characters)."""
    for shift in range(group):
        encoded = encode(b"\0" * shift + data)
        first = -(-shift // group) * chars  # the first group wholly of the value
        last = (shift + len(data)) // group * chars  # past the last such group
        if last > first:
            yield encoded[first:last]


def _b64(data: bytes, altchars: bytes | None = None) -> str:
    return base64.b64encode(data, altchars).decode("ascii")


def _b85(data: bytes) -> str:
    return base64.b85encode(data).decode("ascii")


def _z85(data: bytes) -> str:
    return _b85(data).translate(_B85_TO_Z85)


def _a85(data: bytes) -> str:
    # no `z` shorthand: a form is compared group by group with what a writer printed
    return base64.a85encode(data, foldspaces=False).decode("ascii")


def _b32hex_cores(data: bytes) -> Iterator[str]:
    for shift in range(5):
        encoded = base64.b32hexencode(b"\0" * shift + data).decode("ascii")
        first, last = -(-8 * shift // 5), 8 * (shift + len(data)) // 5
        yield encoded[first:last]


def more_forms(value: str) -> Iterator[tuple[str, str]]:
    """``(transform, form)`` of ``value`` in the encodings named in the module doc."""
    data = value.encode("utf-8", "surrogatepass")
    for core in _b32hex_cores(data):
        yield "base32hex", core
    for name, encode in (("ascii85", _a85), ("base85", _b85), ("z85", _z85)):
        for core in _cores(data, 4, 5, encode):
            yield name, core
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data).decode("ascii")
        core = encoded[-(-8 * shift // 6) : 8 * (shift + len(data)) // 6]
        yield "base64+reversed_text", core[::-1]
    for core in _cores(data, 3, 4, _b64):  # uuencode is base64 in another alphabet
        yield "uuencode", core.translate(_B64_TO_UU)
        yield "uuencode", core.translate(_B64_TO_UU_BACKTICK)
    yield from _hex_byte_forms(value)


def in_digits(number: int, alphabet: str) -> str:
    """``number`` written in the base of ``alphabet``'s length, with its digits."""
    base = len(alphabet)
    digits = []
    while number:
        number, digit = divmod(number, base)
        digits.append(alphabet[digit])
    return "".join(reversed(digits)) or alphabet[0]


def _b32(data: bytes) -> str:
    return base64.b32encode(data).decode("ascii")


def _hex_byte_forms(value: str) -> Iterator[tuple[str, str]]:
    """The bytes a hexadecimal secret part stands for, in either byte order
    (``bytes.fromhex(key)[::-1]``, ``int.from_bytes(…, "little")``): in base64, base32, the
    base85 family, base58 and base62, and as one number in every radix from 2 to 36 (the
    other order also as hex)."""
    match = _HEX_PART.fullmatch(value)
    if match is None:
        return
    raw = bytes.fromhex(match.group(1))
    yield "hex_bytes+byte_reversed", raw[::-1].hex()
    for order, data in (("hex_bytes", raw), ("hex_bytes_reversed", raw[::-1])):
        for name, altchars in (("base64", None), ("base64url", b"-_")):
            for core in _cores(data, 3, 4, partial(_b64, altchars=altchars)):
                yield f"{order}+{name}", core
        for core in _cores(data, 5, 8, _b32):
            yield f"{order}+base32", core
        for name, encode in (("ascii85", _a85), ("base85", _b85), ("z85", _z85)):
            for core in _cores(data, 4, 5, encode):
                yield f"{order}+{name}", core
        number = int.from_bytes(data, "big")
        yield f"{order}+decimal", str(number)
        yield f"{order}+octal", format(number, "o")
        yield f"{order}+binary", format(number, "b")
        for radix in range(3, 37):
            if radix not in (8, 10, 16):
                yield f"{order}+radix{radix}", in_digits(number, _DIGITS[:radix])
        yield f"{order}+base58", in_digits(number, _B58)
        yield f"{order}+base62", in_digits(number, _B62)


def _base64(text: str) -> bytes:
    text = text.translate(_URLSAFE).rstrip("=")
    if len(text) % 4 == 1:
        text = text[:-1]
    return binascii.a2b_base64(text + "=" * (-len(text) % 4))


_URLSAFE = str.maketrans("-_", "+/")


def _base32(text: str) -> bytes:
    text = text.upper().rstrip("=")
    text = text[: len(text) // 8 * 8 + _B32_TAIL.get(len(text) % 8, 0)]
    return base64.b32decode(text + "=" * (-len(text) % 8))


def _base32hex(text: str) -> bytes:
    text = text.upper().rstrip("=")
    text = text[: len(text) // 8 * 8 + _B32_TAIL.get(len(text) % 8, 0)]
    return base64.b32hexdecode(text + "=" * (-len(text) % 8))


# the lengths a last base32 group can have (others are cut to the one before)
_B32_TAIL = {1: 0, 2: 2, 3: 2, 4: 4, 5: 5, 6: 5, 7: 7}


def _hex(text: str) -> bytes:
    return bytes.fromhex(text[: len(text) // 2 * 2])


def _ascii85(text: str) -> bytes:
    text = text.removeprefix("<~").removesuffix("~>")
    if len(text.replace("z", "")) % 5 == 1:  # a last group of one character: cut it
        text = text[:-1]
    return base64.a85decode(text)


def _base85(text: str) -> bytes:
    return base64.b85decode(text[: len(text) - (1 if len(text) % 5 == 1 else 0)])


def _z85_decode(text: str) -> bytes:
    return _base85(text.translate(_Z85_TO_B85))


#: How to read back a run of characters (whitespace removed) in each encoding :mod:`._layers`
#: tries; a reader raises ``ValueError`` (``binascii.Error`` is one) on a run not of its kind.
DECODERS: dict[str, Callable[[str], bytes]] = {
    "hex": _hex,
    "base64": _base64,
    "base32": _base32,
    "base32hex": _base32hex,
    "ascii85": _ascii85,
    "base85": _base85,
    "z85": _z85_decode,
}


_GZIP = b"\x1f\x8b"
_BZIP2 = b"BZh"
_XZ = b"\xfd7zXZ\x00"


def _zlib_header(data: bytes) -> bool:
    """A zlib stream's two header bytes: deflate with a window of at most 32 KiB, and a check
    of the two as one number (RFC 1950)."""
    return (
        len(data) >= 2
        and data[0] & 0x0F == 8
        and data[0] >> 4 <= 7
        and ((data[0] << 8) | data[1]) % 31 == 0
    )


def inflate(data: bytes, limit: int) -> bytes:
    """What ``data`` decompresses to when it starts as a gzip, zlib, bzip2 or xz stream (at
    most ``limit`` bytes, so a bomb costs nothing; a cut stream gives what it holds), else
    ``b""``."""
    if limit <= 0:
        return b""
    try:
        if data.startswith(_GZIP) or _zlib_header(data):
            # 32 + 15: a gzip or a zlib header, read from the stream itself
            return zlib.decompressobj(47).decompress(data, limit)
        if data.startswith(_BZIP2):
            return bz2.BZ2Decompressor().decompress(data, limit)
        if data.startswith(_XZ):
            return lzma.LZMADecompressor().decompress(data, limit)
    except (zlib.error, OSError, EOFError, ValueError, lzma.LZMAError):
        return b""
    return b""
