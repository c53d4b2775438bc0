"""The text of expanded fields: descriptor paths, file keys, the known ending of a path built at
run time, and words with parts the reading cannot know read as the globs they could be.

A part of a word whose value cannot be known (``$unset``, ``${x@A}``, ``$(whoami)``) could be
anything, the empty text too: ``.env$unset`` is ``.env`` when ``unset`` is not set, as it is in
the contained command's environment unless the harness gave it. So the word is also read as the
glob it could be, each unknown part a ``*`` (``.env*``, ``.e*v``), and as every sensitive name
that glob matches (:func:`~pytest_harness_audit.policy.sensitive.glob_candidates`). A word with
no known character besides an extension (``$f``, ``$f.md``) names no file in particular: nothing.

Bracket expressions with POSIX classes (``[[:alpha:]]``), equivalence classes (``[[=e=]]``) and
collating symbols (``[[.e.]]``) are read as the sets they stand for (in the C locale) before a
glob is matched: Python's matching knows none of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from pytest_harness_audit.policy.path_forms import normal_path


@dataclass(slots=True)
class Field:
    """One expanded word: its text, and whether part of it could not be known."""

    text: str
    dynamic: bool = False

    # (an own __init__: the compiled build compiles it, not the one dataclass would generate)
    def __init__(self, text: str, dynamic: bool = False) -> None:
        self.text = text
        self.dynamic = dynamic


#: The flag of a character that came from an expansion the reading cannot know (:mod:`.expand`).
UNKNOWN: Final = 8

_DESCRIPTOR: Final = re.compile(r"/(?:dev/fd|proc/self/fd|dev/std(in|out|err))(?:/(\d+))?")


def descriptor_path(path: str) -> str:
    """The one name of an open file descriptor (``/proc/self/fd/3``, ``/dev/stdin`` →
    ``/dev/fd/3``, ``/dev/fd/0``); any other path as it is."""
    match = _DESCRIPTOR.fullmatch(path)
    if match is None:
        return path
    std, number = match.groups()
    if std is not None:
        return "" if number else f"/dev/fd/{('in', 'out', 'err').index(std)}"
    return f"/dev/fd/{number}" if number else path


def file_key(path: str) -> str:
    """How a file written or run in one command is known: its path normalised (``./s.sh`` and
    ``s.sh`` are one file)."""
    return normal_path(path) if path else path


#: Expansions a field keeps as text when their value cannot be known.
_UNKNOWN_PART: Final = re.compile(r"\$(?:\(…\)|\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|.)")


def known_ending(path: str) -> str:
    """The workspace path a path built at run time names by its known ending
    (``$(pwd)/tools/x.sh`` → ``tools/x.sh``); empty when it ends in an unknown part."""
    ending = _UNKNOWN_PART.split(path)[-1]
    return ending.lstrip("/") if ending.startswith("/") and len(ending) > 1 else ""


def needs_work(text: str) -> bool:
    """Whether an unquoted literal has a brace or a glob character, or starts with ``~``
    (:mod:`.tildes`; else it stands as it is)."""
    return "{" in text or "*" in text or "?" in text or "[" in text or text[:1] == "~"


def unknown_glob(chars: list[tuple[str, int]], glob_flag: int) -> str:
    """The glob a word with unknown parts could be: each run of unknown characters a ``*``,
    a known glob character kept when it globs (``glob_flag``), else bracketed."""
    out: list[str] = []
    for char, flags in chars:
        if flags & UNKNOWN:
            if not out or out[-1] != "*":
                out.append("*")
        elif char in "*?[]" and not flags & glob_flag:
            out.append(f"[{char}]")
        else:
            out.append(char)
    return "".join(out)


_CLASSES: Final = {
    "alpha": "a-zA-Z", "lower": "a-z", "upper": "A-Z", "digit": "0-9", "alnum": "a-zA-Z0-9",
    "xdigit": "0-9a-fA-F", "word": "a-zA-Z0-9_", "punct": ":-@!-.[-`{-~", "space": " \t\n\r\f\v",
    "blank": " \t", "print": " -~", "graph": ":-~!-9", "cntrl": "\x01-\x1f\x7f",
}  # fmt: skip
_BRACKET = re.compile(r"\[[!^]?\]?(?:\[:\w+:\]|\[=[^\]]=\]|\[\.[^\]]\.\]|[^\]])*\]")
_CLASS: Final = re.compile(r"\[:(\w+):\]|\[=([^\]])=\]|\[\.([^\]])\.\]")


def posix_brackets(pattern: str) -> str:
    """``pattern`` with the POSIX classes, equivalence classes and collating symbols of its
    bracket expressions spelt as the characters they match (``.[[:alpha:]]nv`` →
    ``.[a-zA-Z]nv``); an unknown class matches nothing in bash, and here any letter."""
    if "[:" not in pattern and "[=" not in pattern and "[." not in pattern:
        return pattern
    # every expression ends at a `]`: past the last one, none starts (and none is scanned for
    # from each `[` there, a cost that grew with the square of a run of `[` closing nowhere)
    end = pattern.rfind("]") + 1
    head = _BRACKET.sub(lambda m: _CLASS.sub(_members, m.group()), pattern[:end])
    return head + pattern[end:]


def _members(match: re.Match[str]) -> str:
    name, equal, symbol = match.groups()
    if name is not None:
        return _CLASSES.get(name, "a-zA-Z")
    return equal if equal is not None else symbol


__all__ = [
    "UNKNOWN",
    "descriptor_path",
    "file_key",
    "known_ending",
    "needs_work",
    "posix_brackets",
    "unknown_glob",
]
