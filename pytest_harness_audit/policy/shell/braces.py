"""Brace expansion (``a{b,c}`` → ``ab ac``, ``{1..3}``) of a word's characters, each with the
flags :mod:`.expand` gives it (only unquoted braces expand)."""

from __future__ import annotations

import itertools
import re
from typing import Final

from pytest_harness_audit.policy.shell.nodes import Unreadable

#: Most fields one word may expand to (braces, globs); the rest are dropped.
MAX_FIELDS: Final = 256
#: Most characters brace expansion reads, per character of the word: each step rereads the word,
#: and a word of thousands of brace pairs takes a step for each before its first field (2,000
#: ``{a,b}`` read for seconds). Twice the fields and 64 pairs deep is past any word written by hand.
WORK_PER_CHAR: Final = 2 * MAX_FIELDS + 64
#: Most characters brace expansion reads for one word (256 fields of a word of 4,000 characters).
MAX_WORK: Final = 2_000_000

#: The flag of a character that brace expansion applies to.
BRACE: Final = 1
#: A word's characters, each with its flags.
Chars = list[tuple[str, int]]
_SEQUENCE: Final = re.compile(r"^(-?\d{1,6})\.\.(-?\d{1,6})$|^([A-Za-z])\.\.([A-Za-z])$")
_BRACE: Final = BRACE
#: The longest text between the braces of a sequence (``-999999..-999999``).
_LONGEST_SEQUENCE: Final = 16


def brace_expand(chars: Chars) -> list[Chars]:
    """Brace expansion of the unquoted braces (``a{b,c}`` → ``ab ac``, ``{1..3}``)."""
    if not any(flags & _BRACE and char == "{" for char, flags in chars):
        return [chars]
    results: list[Chars] = []
    pending = [chars]
    work = min(WORK_PER_CHAR * len(chars), MAX_WORK)
    while pending and len(results) < MAX_FIELDS:
        current = pending.pop()
        work -= len(current)
        if work < 0:
            raise Unreadable("braces expand too far")
        found = _first_brace(current)
        if found is None:
            results.append(current)
            continue
        start, commas, end = found
        head, tail = current[:start], current[end + 1 :]
        if commas:
            bounds = [start, *commas, end]
            options = [current[a + 1 : b] for a, b in itertools.pairwise(bounds)]
        else:
            options = _sequence(current[start + 1 : end])
        pending.extend(head + option + tail for option in reversed(options))
    return results[:MAX_FIELDS]


def _first_brace(chars: Chars) -> tuple[int, list[int], int] | None:
    """The first expandable ``{…}``: its start, top-level commas and end. One pass: each
    brace is paired with its match as it closes (nested braces cost no second scan)."""
    found: tuple[int, list[int], int] | None = None
    opened: list[tuple[int, list[int]]] = []  # each open brace's place and top-level commas
    for cursor, (char, flags) in enumerate(chars):
        if not flags & _BRACE:
            continue
        if char == "{":
            opened.append((cursor, []))
        elif char == "}":
            if not opened:
                continue
            start, commas = opened.pop()
            if (found is None or start < found[0]) and (
                commas
                or (
                    cursor - start - 1 <= _LONGEST_SEQUENCE and _sequence(chars[start + 1 : cursor])
                )
            ):
                found = (start, commas, cursor)
        elif char == "," and opened:
            opened[-1][1].append(cursor)
    return found


def _sequence(chars: Chars) -> list[Chars]:
    match = _SEQUENCE.match("".join(char for char, _ in chars))
    if match is None:
        return []
    if match.group(1) is not None:
        first, last = int(match.group(1)), int(match.group(2))
        step = 1 if last >= first else -1
        values = [str(v) for v in range(first, last + step, step)][:MAX_FIELDS]
    else:
        first_c, last_c = ord(match.group(3)), ord(match.group(4))
        step = 1 if last_c >= first_c else -1
        values = [chr(v) for v in range(first_c, last_c + step, step)]
    return [[(char, 0) for char in value] for value in values]


__all__ = ["BRACE", "MAX_FIELDS", "MAX_WORK", "WORK_PER_CHAR", "Chars", "brace_expand"]
