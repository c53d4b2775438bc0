"""What a short pipeline of text filters prints, when its text is all in the command.

``$(echo LmVudg== | base64 -d)``, ``$(echo vne. | rev)``, ``$(echo .ENV | tr A-Z a-z)``,
``$(printf 2e656e76 | xxd -r -p)``: a name decoded, reversed or translated inside the command is
still a constant, and the reading follows it. The filters are ``echo``/``printf`` (the source),
``cat``, ``base64 -d``, ``base32 -d``, ``xxd -r -p``, ``rev``, ``tr`` (ranges and ``-d``) and
``tr -d``, and the line filters a listing goes through (``ls -a | grep env``): ``grep [-ivEF]
PATTERN``, ``head``/``tail`` (every line: one too many, never too few) and ``sort``; anything
else (or a value the reading cannot know) gives ``None``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

#: Most commands of a pipeline worked out, and most characters passed between them.
MAX_FILTERS = 6
MAX_TEXT = 4096

_RANGE = re.compile(r"(.)-(.)", re.S)
_REPEATS = re.compile(r"[*+?{}()|\\\[\]]")


def run_filter(name: str, args: list[str], stdin: str | None) -> str | None:
    """What ``name args`` prints given ``stdin`` (``None``: not worked out)."""
    if stdin is not None and len(stdin) > (_MAX_LINES if name in _LINE_FILTERS else MAX_TEXT):
        return None
    if name == "cat" and not args:
        return stdin
    if stdin is None:
        return None
    handler = _FILTERS.get(name)
    return None if handler is None else handler(args, stdin)


def _decode(args: list[str], stdin: str, decoder: Callable[[bytes], bytes]) -> str | None:
    if not any(a in ("-d", "--decode", "-D") for a in args):
        return None
    try:
        return decoder("".join(stdin.split()).encode("ascii")).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        return None


def _xxd(args: list[str], stdin: str) -> str | None:
    if "-r" not in args or not ({"-p", "-ps", "-plain"} & set(args)):
        return None
    try:
        return bytes.fromhex("".join(stdin.split())).decode("utf-8")
    except (UnicodeError, ValueError):
        return None


def _rev(args: list[str], stdin: str) -> str | None:
    if args:
        return None
    return "\n".join(line[::-1] for line in stdin.split("\n"))


def _tr(args: list[str], stdin: str) -> str | None:
    if args[:1] == ["-d"] and len(args) == 2:
        deleted = _set(args[1])
        return None if deleted is None else stdin.translate({ord(c): None for c in deleted})
    if len(args) != 2 or args[0].startswith("-"):
        return None
    source, target = _set(args[0]), _set(args[1])
    if not source or not target:
        return None
    target = target + target[-1] * max(0, len(source) - len(target))
    return stdin.translate(str.maketrans(source, target[: len(source)]))


def _set(spec: str) -> str | None:
    """The characters of a ``tr`` set: ranges (``a-z``), ``\\n``/``\\t`` and plain
    characters."""
    spec = spec.replace("\\n", "\n").replace("\\t", "\t")
    if "[" in spec or "\\" in spec:
        return None
    out: list[str] = []
    index = 0
    while index < len(spec):
        match = _RANGE.match(spec, index)
        if match is not None and ord(match.group(1)) <= ord(match.group(2)):
            out.extend(chr(c) for c in range(ord(match.group(1)), ord(match.group(2)) + 1))
            index = match.end()
        else:
            out.append(spec[index])
            index += 1
    return "".join(out)[:1024]


def _grep(args: list[str], stdin: str) -> str | None:
    """``grep [-i] [-v] [-E|-F] PATTERN`` of the lines (no file operand, no other option)."""
    options = [a for a in args if a.startswith("-") and len(a) > 1]
    operands = [a for a in args if a not in options]
    letters = "".join(o[1:] for o in options)
    if len(operands) != 1 or any(o.startswith("--") for o in options) or set(letters) - set("ivEF"):
        return None
    pattern = re.escape(operands[0]) if "F" in letters else operands[0]
    if "F" not in letters and _REPEATS.search(pattern):
        return None  # only patterns matched in linear time (`.`, `^`, `$`): no backtracking
    found = re.compile(pattern, re.I if "i" in letters else 0)
    keep = "v" not in letters
    return "".join(f"{line}\n" for line in stdin.splitlines() if bool(found.search(line)) == keep)


_LINE_FILTERS = frozenset({"grep", "egrep", "fgrep", "head", "tail", "sort"})
_MAX_LINES = 64 * 1024
_FILTERS: dict[str, Callable[[list[str], str], str | None]] = {
    "grep": _grep,
    "egrep": lambda args, text: _grep(["-E", *args], text),
    "fgrep": lambda args, text: _grep(["-F", *args], text),
    "head": lambda args, text: text,
    "tail": lambda args, text: text,
    "sort": lambda args, text: "".join(f"{line}\n" for line in sorted(text.splitlines())),
    "base64": lambda args, text: _decode(args, text, base64.b64decode),
    "base32": lambda args, text: _decode(args, text, base64.b32decode),
    "xxd": _xxd,
    "rev": _rev,
    "tr": _tr,
}

#: Every filter :func:`run_filter` works out (``cat`` aside).
FILTER_NAMES = frozenset(_FILTERS)

__all__ = ["FILTER_NAMES", "MAX_FILTERS", "run_filter"]
