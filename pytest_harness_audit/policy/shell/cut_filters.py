"""``head``, ``tail`` and ``cut`` on a text known exactly, as coreutils print it.

``cat "$(head -c4 <<< .envxx)"``, ``cat "$(cut -c1-4 <<< .envxx)"``, ``cut -d, -f2 <<< x,.env``:
the name is a part of a text the reading knows (a here-string, a heredoc, ``echo``'s words);
worked out, it is judged as what it names. Not on a listing, whose order the reading does not
know (:data:`~.filters.LINE_PICKERS`); an option these do not know gives ``None`` (not worked
out), as before.
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.shell.awk_text import awk_output
from pytest_harness_audit.policy.shell.filters import run_filter
from pytest_harness_audit.policy.shell.perl_text import perl_output
from pytest_harness_audit.policy.shell.sed_text import sed_output

#: Programs whose output is worked out over a text known exactly (``sed``, ``perl -p``, ``awk``).
PROGRAM_FILTERS: Final = frozenset({"sed", "gsed", "perl", "awk", "gawk", "mawk"})

_COUNT: Final = re.compile(r"[+-]?\d{1,9}")
_RANGE: Final = re.compile(r"(\d{0,9})(-?)(\d{0,9})")


def text_filter(
    name: str, args: list[str], text: str | None, loose: bool, exact: bool
) -> str | None:
    """:func:`~.filters.run_filter`, and ``head``/``tail``/``cut`` and the programs of
    :data:`PROGRAM_FILTERS` when ``text`` is ``exact`` (not a listing's names)."""
    done = run_filter(name, args, text, loose)
    if done is None and exact and text is not None:
        if name in ("head", "tail"):
            return head_tail(name, args, text)
        if name == "cut":
            return cut(args, text)
        if name in ("sed", "gsed"):
            return sed_output(args, text, ordered=True)  # `sed -n 2p` of a known text
        if name == "perl":
            return perl_output(args, text)
        if name in PROGRAM_FILTERS:
            return awk_output(args, text)
    return done


def head_tail(name: str, args: list[str], text: str) -> str | None:
    """``head``/``tail`` with ``-n N``, ``-c N`` (``-N``, ``+N`` of ``tail``)."""
    count, chars = "10", False
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word in ("-n", "-c", "--lines", "--bytes") and index < len(args):
            count, chars = args[index], word in ("-c", "--bytes")
            index += 1
        elif word[:2] in ("-n", "-c") and len(word) > 2:
            count, chars = word[2:], word[1] == "c"
        elif word[:1] == "-" and word[1:].isdigit():
            count = word[1:]
        else:
            return None
    if not _COUNT.fullmatch(count):
        return None
    number = int(count)
    if chars:
        if name == "head":
            return text[:number]  # (`-c -N`: all but the last N)
        return text[number - 1 :] if count[:1] == "+" else text[-abs(number) :] if number else ""
    lines = text.splitlines(keepends=True)
    if name == "head":
        kept = lines[:number]
    elif count[:1] == "+":
        kept = lines[max(number - 1, 0) :]
    else:
        kept = lines[-abs(number) :] if number else []
    return "".join(kept)


def cut(args: list[str], text: str) -> str | None:
    """``cut -c LIST``/``-b LIST``, ``-d D -f LIST`` on each line."""
    spec, fields, delimiter = None, False, "\t"
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        letter, value = word[1:2], word[2:]
        if word[:1] != "-" or letter not in "cbfd" or not letter:
            return None
        if not value:
            if index >= len(args):
                return None
            value, index = args[index], index + 1
        if letter == "d":
            delimiter = value[:1]
        else:
            spec, fields = value, letter == "f"
    if spec is None:
        return None
    ranges = []
    for item in spec.split(","):
        match = _RANGE.fullmatch(item)
        if match is None or not (match[1] or match[3]):
            return None
        start = int(match[1] or 1)
        stop = int(match[3]) if match[3] else (start if not match[2] else 1 << 30)
        ranges.append((start, stop))
    out = []
    for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        if fields:
            if delimiter not in line:
                out.append(line)
                continue
            parts = line.split(delimiter)
            keep = [p for i, p in enumerate(parts, 1) if _within(i, ranges)]
            out.append(delimiter.join(keep))
        else:
            out.append(
                "".join(c for i, c in enumerate(line, 1) if any(a <= i <= b for a, b in ranges))
            )
    return "".join(f"{line}\n" for line in out)


def _within(index: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= index <= stop for start, stop in ranges)


__all__ = ["cut", "head_tail", "text_filter"]
