"""Shell wildcard matching (:func:`fnmatch.fnmatchcase`) at a cost that grows with the pattern.

:func:`fnmatch.translate` scans on from every ``[`` for its ``]``; a pattern of 20,000 ``[``
that close nowhere (``[*[*[*…``) took seconds to translate. A ``[`` that closes nowhere stands
for itself, and so does every ``[`` after it (none of them closes either), so they are written
as the class ``[[]`` that matches just ``[`` before the pattern is handed over: the same matches,
each bracket scanned once.

A bracket expression is read as the shell reads it before it is handed over: a leading ``^``
negates as ``!`` does (``.[^.]*`` is every dotfile but ``.`` and ``..``, where
:mod:`fnmatch` read the set ``^``, ``.``), and a POSIX class (``[[:alpha:]]``) is the
characters it names (:mod:`fnmatch` has none, and read ``[[:alpha:]`` then ``]``).
"""

from __future__ import annotations

import fnmatch as _fnmatch
import os


def fnmatch(name: str, pattern: str) -> bool:
    """Whether ``name`` matches ``pattern`` in the platform's case (as :func:`fnmatch.fnmatch`)."""
    return fnmatchcase(os.path.normcase(name), os.path.normcase(pattern))


def fnmatchcase(name: str, pattern: str) -> bool:
    """Whether ``name`` matches the shell wildcard ``pattern`` (as :func:`fnmatch.fnmatchcase`)."""
    if "[" in pattern:
        pattern = shell_brackets(pattern)
    return _fnmatch.fnmatchcase(name, closed_brackets(pattern))


#: The POSIX classes of a bracket expression, as :mod:`fnmatch` ranges (the C locale's).
_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "xdigit": "0-9A-Fa-f",
    "space": " \t\n\r\f\v",
    "blank": " \t",
    "word": "a-zA-Z0-9_",
    # none starts with `!`, which would negate the set in first place
    "punct": ":-@!-/[-`{-~",
    "graph": '"-~!',
    "print": " -~",
    "cntrl": "\x00-\x1f\x7f",
}


def shell_brackets(pattern: str) -> str:
    """``pattern`` with each bracket expression in :mod:`fnmatch`'s terms: a leading ``^``
    as ``!``, each POSIX class (``[:alpha:]``) as its ranges; a ``[`` that closes nowhere is
    left for :func:`closed_brackets`, and an unknown class stands for nothing it could name."""
    out: list[str] = []
    i, end = 0, len(pattern)
    while i < end:
        if pattern[i] != "[":
            out.append(pattern[i])
            i += 1
            continue
        j, body = i + 1, []
        if j < end and pattern[j] in "!^":
            body.append("!")
            j += 1
        if j < end and pattern[j] == "]":
            body.append("]")
            j += 1
        while j < end and pattern[j] != "]":
            close = pattern.find(":]", j + 2) if pattern.startswith("[:", j) else -1
            if close >= 0:
                body.append(_CLASSES.get(pattern[j + 2 : close], ""))
                j = close + 2
            else:
                body.append(pattern[j])
                j += 1
        if j >= end:  # closes nowhere: the `[` stands for itself
            out.append("[")
            i += 1
            continue
        out.append("[" + "".join(body) + "]")
        i = j + 1
    return "".join(out)


def closed_brackets(pattern: str) -> str:
    """``pattern`` with each ``[`` that closes nowhere written as ``[[]`` (same matches)."""
    start = first_unclosed(pattern)
    if start is None:
        return pattern
    return pattern[:start] + pattern[start:].replace("[", "[[]")


def first_unclosed(pattern: str) -> int | None:
    """Where the first ``[`` that :func:`fnmatch.translate` finds no ``]`` for stands."""
    end = len(pattern)
    opener = pattern.find("[")
    while opener >= 0:
        # as translate: a leading `!` negates and a `]` right after it (or `[`) is a member
        inner = opener + 1
        if inner < end and pattern[inner] == "!":
            inner += 1
        if inner < end and pattern[inner] == "]":
            inner += 1
        closer = pattern.find("]", inner)
        if closer < 0:
            return opener
        opener = pattern.find("[", closer + 1)
    return None


__all__ = ["closed_brackets", "first_unclosed", "fnmatch", "fnmatchcase", "shell_brackets"]
