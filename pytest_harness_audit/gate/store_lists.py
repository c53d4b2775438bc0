"""The names ``xargs`` takes from a file the shell reading does not read, for the store rule.

The shell reading reads the workspace's files; ``xargs -a /tmp/list chmod -R 000`` (or ``cat
/tmp/list | xargs …``) takes its names from a file outside it, which an earlier call may have
filled with the folder holding the audit store (``find "$(cd .. && pwd)" -maxdepth 1 >
/tmp/list``). The store rule reads such a file itself (``-a FILE``, ``cat FILE |``,
``< FILE``) when the call is decided, and judges each name as the path the command is given
(``-I R``: put into the command's words).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Final

#: Most of a names file read.
_MAX_TEXT: Final = 1 << 20
#: Most names of one file judged.
_MAX_NAMES: Final = 4096
#: ``xargs`` options whose value is the next word.
_VALUED: Final = frozenset(
    {"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P",
     "--max-procs", "-s", "--max-chars", "--process-slot-var"}
)  # fmt: skip
#: Commands whose operands, when they hold the store, change it (a read inside it is refused
#: whatever the command).
CHANGERS: Final = frozenset(
    {"rm", "rmdir", "unlink", "shred", "mv", "truncate", "cp", "rsync", "tar", "zip", "chmod",
     "chown", "chgrp", "chattr", "setfacl", "find", "ln", "install"}
)  # fmt: skip

#: An input redirection's file (``< F``, ``0<F``; not ``<<``, ``<<<``, ``<(…)``, ``<&N``).
_INPUT: Final = re.compile(r"(?<![<>&\d])\d?<(?![<(&>])\s*([^\s;&|()<>'\"`$]+)")
#: Commands that only name or list what they are given (their operands are no reads of it).
NAMERS: Final = frozenset(
    {"echo", "printf", "ls", "stat", "du", "dirname", "basename", "realpath", "readlink",
     "test", "[", "true", ":"}
)  # fmt: skip


def input_file(text: str) -> str | None:
    """The file a ``< FILE`` of the command ``text`` reads (the first; ``None``: none)."""
    found = _INPUT.search(text) if "<" in text else None
    return found[1] if found is not None else None


def listed_paths(
    argv: list[str], before: list[str], here: str, given: str | None = None
) -> Iterator[tuple[str, str]]:
    """For an ``xargs`` command ``argv`` (``before``: the command piping into it; ``given``:
    the file a ``< FILE`` of the command reads), each path its command is given from a names
    file outside the reading's reach, with the program it runs: ``(program, path)``, relative
    paths from ``here``."""
    listed, program, words, marker = _parts(argv)
    if listed is None and len(before) == 2 and os.path.basename(before[0]) == "cat":
        listed = before[1]  # `cat FILE | xargs …`
    listed = given if listed is None and not before else listed  # `xargs … < FILE`
    if listed is None or listed == "-" or listed.startswith("/dev/"):
        return
    for name in _names(os.path.join(here, os.path.expanduser(listed)), marker is not None):
        paths = [w.replace(marker, name) for w in words if marker in w] if marker else [name]
        for path in paths:
            yield program, os.path.join(here, os.path.expanduser(path))


def _parts(argv: list[str]) -> tuple[str | None, str, list[str], str | None]:
    """``xargs``'s names file (``-a FILE``), the program it runs, that program's words and the
    replace string (``-I R``)."""
    listed: str | None = None
    marker: str | None = None
    index = 1
    while index < len(argv) and argv[index].startswith("-") and argv[index] != "--":
        word = argv[index]
        value = argv[index + 1] if index + 1 < len(argv) else ""
        if word in ("-a", "--arg-file"):
            listed = value
        elif word.startswith("--arg-file="):
            listed = word.partition("=")[2]
        elif word.startswith("-a") and word[2:3] != "-":
            listed = word[2:]
        elif word == "-I":
            marker = value
        elif word.startswith("-I"):
            marker = word[2:]
        elif word.startswith("-i"):
            marker = word[2:] or "{}"
        elif word == "--replace" or word.startswith("--replace="):
            marker = word.partition("=")[2] or "{}"
        index += 2 if word in _VALUED else 1
    index += int(index < len(argv) and argv[index] == "--")
    words = argv[index:] or ["echo"]
    return listed, os.path.basename(words[0]), words[1:], marker or None


def _names(path: str, lines: bool) -> list[str]:
    """The names in the file ``path`` (between blanks; ``lines``: a line each; between NULs
    when it holds one), none when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_TEXT)
    except (OSError, ValueError):
        return []
    text = data.decode("utf-8", "replace")
    items = text.split("\0") if "\0" in text else text.splitlines() if lines else text.split()
    return [item.strip() for item in items if item.strip()][:_MAX_NAMES]


__all__ = ["CHANGERS", "NAMERS", "input_file", "listed_paths"]
