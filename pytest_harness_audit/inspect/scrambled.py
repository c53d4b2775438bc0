"""Tracked text files whose content was replaced by text sharing nothing with it: scrambled.

A file emptied, or overwritten with NULs or noise, is lost as a deleted one is
(:mod:`.lost_content`). Its content can be lost while it stays text too: every tracked file
overwritten with ``x``, shifted through ``tr a-z b-za``, or encrypted and written back as base64.
What is left shares no word with git's copy. An edit, even a rewrite from scratch, keeps words
of the file it changes (its names, keywords, the prose around them).

:func:`scrambled` tells which of several files modified by one call are so: git's copy (in
``HEAD`` or in the index) holds at least :data:`MIN_WORDS` distinct words, and fewer than
:data:`SHARED_SHARE` of the new text's distinct words are among them. It is asked only when one
call rewrote at least :data:`MIN_FILES` tracked text files and only counts when that many are
scrambled: one file rewritten is an edit the inspection cannot tell from a loss.

A file can also be lost to text made of its own words: its lines shuffled (``shuf -o f f``),
reversed, replaced by its sorted words, or cut to a few of them. Such a file is scrambled too
when (almost) every word of the new text is in git's copy (at least :data:`OWN_SHARE` of them:
nothing was written) and it kept fewer than :data:`KEPT_SHARE` of the copy's lines, or fewer
than :data:`KEPT_SHARE` of its pairs of neighbouring lines are neighbours in the copy (lines are
compared by their words alone). An edit keeps its neighbours (a line added or dropped breaks one
pair, a function moved two, a reindent, quotes changed or lines commented out none); a flat list
(no indented line) sorted is a sort.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Sequence

#: Words: a letter or ``_`` and two or more letters, digits or ``_``.
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{2,}")
#: git's copy must hold this many distinct words for its loss to be told.
MIN_WORDS = 8
#: Below this share of the new text's words found in git's copy, the text is another.
SHARED_SHARE = 0.1
#: Scrambled files count only when one call left at least this many.
MIN_FILES = 2
#: At least this share of the new text's words in git's copy: the text is made of its own words.
OWN_SHARE = 0.9
#: Below this share of git's copy's lines, or of its neighbouring line pairs, kept: lost.
KEPT_SHARE = 0.25
#: A text (git's copy for its length, the new one for its order) must have this many lines with
#: words for the loss to be told.
MIN_LINES = 8
#: Files read per call at most, and bytes of each.
MAX_FILES = 256
MAX_BYTES = 1 << 16

#: Git's copies of paths: ``"HEAD:a.py"``/``":a.py"`` → content (``None``: none), or ``None``.
Copies = Callable[[str, list[str]], "list[bytes | None] | None"]


def _words(data: bytes) -> set[bytes]:
    return set(_WORD.findall(data[:MAX_BYTES]))


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as stream:
            return stream.read(MAX_BYTES)
    except OSError:
        return None


def _lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` that hold words, each as its words alone."""
    lines = (b" ".join(_WORD.findall(line)) for line in data[:MAX_BYTES].splitlines())
    return [line for line in lines if line]


def _flat_sorted(new: list[bytes], copy: bytes) -> bool:
    """Whether ``new`` is git's ``copy``, a list with no indented line, sorted."""
    if any(line[:1].isspace() for line in copy.splitlines()):
        return False
    old = _lines(copy)
    return new in (sorted(old), sorted(set(old)))


def _lost_to_own_words(data: bytes, copies: list[bytes]) -> bool:
    """Whether ``data``, made of the words of ``copies`` (git's copies of a file), kept too few
    of their lines or put them in an order none of them has: see the module's text."""
    new, olds = _lines(data), [_lines(copy) for copy in copies]
    if not olds or any(_flat_sorted(new, copy) for copy in copies):
        return False
    if all(len(old) >= MIN_LINES and len(new) < KEPT_SHARE * len(old) for old in olds):
        return True  # cut to a few of its lines
    if len(new) < MIN_LINES:
        return False
    known = {pair for old in olds for pair in itertools.pairwise(old)}
    fresh = sum(pair not in known for pair in itertools.pairwise(new))
    return fresh > (1 - KEPT_SHARE) * (len(new) - 1)


def scrambled(root: str, paths: Sequence[str], copies: Copies) -> set[str]:
    """The files of ``paths`` (tracked text files one call rewrote, relative to ``root``) whose
    text shares (almost) no word with git's copy of them; empty when fewer than
    :data:`MIN_FILES` are so."""
    paths = list(paths)[:MAX_FILES]
    if len(paths) < MIN_FILES:
        return set()
    held = copies(root, [f"{rev}:{path}" for path in paths for rev in ("HEAD", "")])
    if held is None:
        return set()
    found: set[str] = set()
    for index, path in enumerate(paths):
        old: set[bytes] = set()
        for copy in held[2 * index : 2 * index + 2]:
            if copy is not None:
                old |= _words(copy)
        if len(old) < MIN_WORDS:
            continue
        data = _read(os.path.join(root, path))
        if data is None:
            continue
        new = _words(data)
        shared = len(new & old)
        copies_of = [c for c in held[2 * index : 2 * index + 2] if c is not None]
        if shared < SHARED_SHARE * max(1, len(new)) or (
            shared >= OWN_SHARE * len(new) and _lost_to_own_words(data, copies_of)
        ):
            found.add(path)
    return found if len(found) >= MIN_FILES else set()


__all__ = ["MIN_FILES", "scrambled"]
