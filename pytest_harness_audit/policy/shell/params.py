"""The operators of ``${NAME<op>}`` on a known value, as bash applies them.

``${v:1:4}`` (a slice), ``${v#pat}``/``${v##pat}``/``${v%pat}``/``${v%%pat}`` (a prefix or
suffix removed), ``${v,,}``/``${v^^}``/``${v,}``/``${v^}`` (case), ``${v/pat/rep}``,
``${v//pat/rep}``, ``${v/#pat/rep}``, ``${v/%pat/rep}`` (replacement) and ``${v[N]}`` (an
array's element: every element, one reading too many); on ``${a[@]<op>}`` and ``${@<op>}``,
each word in turn (``${a[@]/#/.}`` of ``a=(env)`` names ``.env``). A value built so (``v=x.envx;
cat ${v:1:4}``) is then judged as what it names.
An operator this module does not know, or whose pattern is not a plain glob, gives ``None``:
the value stays unknown, as before.
"""

from __future__ import annotations

import fnmatch
import re

_SLICE = re.compile(r":\s*(-?\s*\d{1,6})\s*(?::\s*(-?\s*\d{1,6})\s*)?")
_PLAIN_PATTERN = re.compile(r"[^$`\"'\\{}()]*")
_MAX_VALUE = 4096
_MAX_WORDS = 256


def operate(value: str, op: str, items: list[str] | None = None, every: bool = False) -> str | None:
    """``${NAME<op>}`` for ``NAME``'s known ``value``; ``None`` when it cannot be worked out.
    ``items``: the words of an array ``NAME`` (else its value's); ``every``: ``NAME`` is ``@``
    or ``*``, whose operator applies to each word as an array's ``${a[@]<op>}`` does."""
    if len(value) > _MAX_VALUE or len(op) > _MAX_VALUE:
        return None
    if op[:1] == "[" and "]" in op and not op.endswith("]"):  # `${a[@]/#/.}`, `${a[0]%x}`
        words = value.split() if items is None else items  # (`[N]`: every word, one too many)
        return _each(words, op[op.index("]") + 1 :])
    if every:  # `${@/#/.}`
        return _each(value.split() if items is None else items, op)
    if op.startswith(":"):
        return _slice(value, op)
    if op in (",,", "^^", ",", "^"):
        if op == ",,":
            return value.lower()
        if op == "^^":
            return value.upper()
        head, rest = value[:1], value[1:]
        return (head.lower() if op == "," else head.upper()) + rest
    if op.startswith("[") and op.endswith("]") and len(op) <= 66:
        return value  # an element of an array (:mod:`.syntax` keeps them all as one value)
    if op.startswith(("#", "%")):
        return _remove(value, op)
    if op.startswith("/"):
        return _replace(value, op[1:])
    return None


def _each(words: list[str], op: str) -> str | None:
    """``${a[@]/#/.}``, ``${a[@]%x}``, ``${@,,}``: the operator on each word (an array's slice
    ``${a[@]:1}``: every word, one reading too many)."""
    if op.startswith(":"):
        return " ".join(words)
    done = [operate(word, op) for word in words[:_MAX_WORDS]]
    return None if any(word is None for word in done) else " ".join(map(str, done))


def _slice(value: str, op: str) -> str | None:
    match = _SLICE.fullmatch(op)
    if match is None:
        return None
    offset = int(match.group(1).replace(" ", ""))
    start = max(len(value) + offset, 0) if offset < 0 else min(offset, len(value))
    if match.group(2) is None:
        return value[start:]
    length = int(match.group(2).replace(" ", ""))
    stop = len(value) + length if length < 0 else start + length
    return value[start:stop] if stop >= start else None


def _remove(value: str, op: str) -> str | None:
    longest = op[:2] in ("##", "%%")
    pattern = op[2:] if longest else op[1:]
    if not _PLAIN_PATTERN.fullmatch(pattern):
        return None
    cuts = range(len(value) + 1)
    if op.startswith("#"):
        ordered = reversed(cuts) if longest else cuts
        for cut in ordered:
            if fnmatch.fnmatchcase(value[:cut], pattern):
                return value[cut:]
        return value
    ordered = cuts if longest else reversed(cuts)
    for cut in ordered:
        if fnmatch.fnmatchcase(value[cut:], pattern):
            return value[:cut]
    return value


def _replace(value: str, body: str) -> str | None:
    every = body.startswith("/")
    anchor = body[:1] if body[:1] in ("#", "%") else ""
    if every or anchor:
        body = body[1:]
    pattern, _, replacement = body.partition("/")
    if not _PLAIN_PATTERN.fullmatch(pattern + replacement) or not (pattern or anchor):
        return None  # (an empty pattern anchored: `${v/#/pre}` adds to the start)
    if any(char in pattern for char in "*?["):
        return None  # a glob pattern in a replacement: not worked out
    if anchor == "#":
        return replacement + value[len(pattern) :] if value.startswith(pattern) else value
    if anchor == "%":
        return (
            value[: len(value) - len(pattern)] + replacement if value.endswith(pattern) else value
        )
    return value.replace(pattern, replacement, -1 if every else 1)


__all__ = ["operate"]
