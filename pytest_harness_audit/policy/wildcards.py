"""Shell wildcard matching (:func:`fnmatch.fnmatchcase`) at a cost that grows with the pattern.

:func:`fnmatch.translate` scans on from every ``[`` for its ``]``; a pattern of 20,000 ``[``
that close nowhere (``[*[*[*…``) took seconds to translate. A ``[`` that closes nowhere stands
for itself, and so does every ``[`` after it (none of them closes either), so they are written
as the class ``[[]`` that matches just ``[`` before the pattern is handed over: the same matches,
each bracket scanned once.
"""

from __future__ import annotations

import fnmatch as _fnmatch
import os


def fnmatch(name: str, pattern: str) -> bool:
    """Whether ``name`` matches ``pattern`` in the platform's case (as :func:`fnmatch.fnmatch`)."""
    return fnmatchcase(os.path.normcase(name), os.path.normcase(pattern))


def fnmatchcase(name: str, pattern: str) -> bool:
    """Whether ``name`` matches the shell wildcard ``pattern`` (as :func:`fnmatch.fnmatchcase`)."""
    return _fnmatch.fnmatchcase(name, closed_brackets(pattern))


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


__all__ = ["closed_brackets", "first_unclosed", "fnmatch", "fnmatchcase"]
