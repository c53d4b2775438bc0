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
"""

from __future__ import annotations

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
        if len(new & old) < SHARED_SHARE * max(1, len(new)):
            found.add(path)
    return found if len(found) >= MIN_FILES else set()


__all__ = ["MIN_FILES", "scrambled"]
