"""The characters of a ``tr`` set, as GNU ``tr`` reads it.

Ranges (``a-z``), POSIX classes (``[:upper:]``), backslash escapes (``\\n``, ``\\t``, ``\\056``,
and ``\\-``, ``\\\\``, ``\\[`` standing for the character itself, which then starts or ends no
range: ``tr -d '\\-'`` deletes dashes), and plain characters; a repeat (``[c*n]``) or an
equivalence class (``[=e=]``) gives ``None``: not worked out.
"""

from __future__ import annotations

import re
from typing import Final

_CLASSES: Final = {"upper": "A-Z", "lower": "a-z", "digit": "0-9", "alpha": "a-zA-Z",
                   "alnum": "a-zA-Z0-9", "space": " \t\n\r\f\v", "blank": " \t"}  # fmt: skip
_CLASS: Final = re.compile(r"\[:(upper|lower|digit|alpha|alnum|space|blank):\]")
_OCTAL: Final = re.compile(r"[0-7]{1,3}")
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "b": "\b"}
#: Most characters of one set.
MAX_SET: Final = 1024


def tr_set(spec: str) -> str | None:
    """The characters of ``tr`` set ``spec`` in order (module doc); ``None``: not worked out."""
    spec = _CLASS.sub(lambda m: _CLASSES[m[1]], spec)  # `[:upper:]`: `A-Z`
    tokens: list[tuple[str, bool]] = []  # each character, and whether it was escaped
    index = 0
    while index < len(spec):
        char = spec[index]
        if char == "\\" and index + 1 == len(spec):
            return None  # a backslash ending the set
        if char == "\\":
            octal = _OCTAL.match(spec, index + 1)
            if octal is not None:
                tokens.append((chr(int(octal[0], 8) & 0xFF), True))
                index = octal.end()
                continue
            following = spec[index + 1]
            tokens.append((_ESCAPES.get(following, following), True))
            index += 2
            continue
        if char == "[":
            return None  # `[c*n]`, `[=e=]`: not worked out
        tokens.append((char, False))
        index += 1
    out: list[str] = []
    index = 0
    while index < len(tokens):
        low = tokens[index][0]
        dash = index + 2 < len(tokens) and tokens[index + 1] == ("-", False)
        if dash and ord(low) <= ord(tokens[index + 2][0]):
            out.extend(chr(c) for c in range(ord(low), ord(tokens[index + 2][0]) + 1))
            index += 3
        else:
            out.append(low)
            index += 1
    return "".join(out)[:MAX_SET]


__all__ = ["MAX_SET", "tr_set"]
