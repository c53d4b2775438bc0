"""The canonical JSON of a message: RFC 8785 (JSON Canonicalization Scheme).

Post content is measured (the 32,768-byte content limit), stored and hashed in this form, so a
post's size and hash never depend on how its JSON happened to be written. It is not the
audit chain's canonical JSON (:mod:`pytest_harness_audit.audit.canonical`, which hashes call
parameters and outputs); the two differ in key order, escaping and numbers.

Keys are sorted by UTF-16 code units, strings are escaped as ECMAScript ``JSON.stringify`` does,
and numbers are written as ECMAScript ``Number.prototype.toString`` writes them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_SAFE_INTEGER = 2**53
_SURROGATE = re.compile("[\ud800-\udfff]")


class MessageJsonError(ValueError):
    """A value has no canonical message JSON (non-finite number, lone surrogate, non-JSON type)."""


def lone_surrogate_index(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (ill-formed Unicode), or None."""
    for index, char in enumerate(text):
        if 0xD800 <= ord(char) <= 0xDFFF:
            return index
    return None


def _string(text: str) -> str:
    if lone_surrogate_index(text) is not None:
        raise MessageJsonError("string is not well-formed Unicode")
    out = ['"']
    for char in text:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif ord(char) < 0x20:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _number(value: float) -> str:
    if not math.isfinite(value):
        raise MessageJsonError("numbers must be finite")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr() gives the shortest round-tripping digits, as ECMAScript does.
    parts = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(digit) for digit in parts.digits)
    # The value is 0.<digits> x 10**point (the exponent is an int: the value is finite).
    point = len(digits) + int(parts.exponent)
    count = len(digits)
    if count <= point <= 21:
        return sign + digits + "0" * (point - count)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exponent = point - 1
    exponent_part = f"e{'+' if exponent >= 0 else '-'}{abs(exponent)}"
    if count == 1:
        return sign + digits + exponent_part
    return sign + digits[0] + "." + digits[1:] + exponent_part


def canonical_message_json(value: object) -> str:
    """The RFC 8785 canonical JSON text of ``value`` (message content, answers, checks)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value) if abs(value) < _SAFE_INTEGER else _number(float(value))
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        keys = list(value.keys())
        if not all(isinstance(key, str) for key in keys):
            raise MessageJsonError("object keys must be strings")
        ordered = sorted(keys, key=lambda key: key.encode("utf-16-be", "surrogatepass"))
        return (
            "{"
            + ",".join(f"{_string(key)}:{canonical_message_json(value[key])}" for key in ordered)
            + "}"
        )
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return "[" + ",".join(canonical_message_json(item) for item in value) + "]"
    raise MessageJsonError(f"{type(value).__name__} is not a JSON value")


def message_json_size(value: object) -> int:
    """The number of UTF-8 bytes of ``value``'s canonical message JSON."""
    return len(canonical_message_json(value).encode("utf-8"))


def json_strings(value: object) -> list[str]:
    """Every string of a message JSON ``value`` — object keys included — and every number's
    canonical text, in document order (what the firewall's secret guard reads besides the text).

    Iterative, so any depth is walked; raises :class:`MessageJsonError` for a value that is not
    JSON (the caller fails closed).
    """
    found: list[str] = []
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif item is None or isinstance(item, bool):
            continue
        elif isinstance(item, (int, float)):
            found.append(canonical_message_json(item))
        elif isinstance(item, Mapping):
            for key, child in reversed(list(item.items())):
                stack.append(child)
                stack.append(key)
        elif isinstance(item, Sequence) and not isinstance(item, (bytes, bytearray)):
            stack.extend(reversed(list(item)))
        else:
            raise MessageJsonError(f"{type(item).__name__} is not a JSON value")
    return found


def readable_strings(value: object) -> list[str]:
    """Every string of any Python ``value`` a send was given — mapping keys included, bytes
    decoded, any other leaf as its ``str`` — each with its lone surrogates left out, in
    document order (what a secret scan reads of a send that may not even be JSON).

    Iterative and cycle-safe, so any depth or shape is walked; never raises.
    """
    found: list[str] = []
    stack: list[object] = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(_well_formed(item))
        elif isinstance(item, (bytes, bytearray)):
            found.append(bytes(item).decode("utf-8", "replace"))
        elif item is None or isinstance(item, bool):
            continue
        elif isinstance(item, (Mapping, Sequence, set, frozenset)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, Mapping):
                for key, child in reversed(list(item.items())):
                    stack.append(child)
                    stack.append(key)
            else:
                stack.extend(reversed(list(item)))
        else:
            found.append(_leaf_text(item))
    return found


def _well_formed(text: str) -> str:
    return _SURROGATE.sub("", text)


def _leaf_text(item: object) -> str:
    try:
        return _well_formed(str(item))
    except Exception:  # an object whose str() fails hides nothing readable
        return ""
