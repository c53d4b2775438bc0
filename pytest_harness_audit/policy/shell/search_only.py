"""Commands that do nothing but search and show what they find.

A recursive search opens every file under its folders, a ``.env`` included; when its lines go to
the agent, the inspection scans them for the workspace's secrets, so the reading lets it run
(:mod:`.tree_reads`). The kernel still sees the ``.env`` read
(:mod:`pytest_harness_audit.inspect.credential_reads`). :func:`only_searches` tells when such a
read needs no further judgement: every command of the text is a search, a line filter reading
its input, or a builtin that opens no file. Any other command in the same text (``python3 x.py``,
a command substitution, ``xargs``) could have made the read itself, so the read counts.
"""

from __future__ import annotations

import posixpath

from pytest_harness_audit.policy.shell.reading import read_command
from pytest_harness_audit.policy.shell.tree_reads import LINE_FILTERS, SEARCHERS

#: Builtins and commands that open no file's content.
_OPENING_NOTHING = frozenset({"cd", "pushd", "popd", "echo", "printf", "true", "false", "pwd", ":"})
#: Options of the line filters that take the next word as their value.
_VALUED = frozenset({"-n", "-c", "-k", "-t", "-f", "-s", "-w", "-S", "-T"})


def _file_operands(args: list[str]) -> list[str]:
    """The words of a line filter's arguments that name files (not options, their values or
    counts)."""
    files: list[str] = []
    after_value = False
    for word in args:
        if after_value:
            after_value = False
        elif word in _VALUED:
            after_value = True
        elif not word.startswith("-") and not word.isdigit():
            files.append(word)
    return files


def only_searches(text: str, root: str | None = None) -> bool:
    """Whether ``text`` reads cleanly as searches (``grep -rn TODO .``, ``rg -n x | head``),
    line filters of their input and builtins that open nothing, and nothing else."""
    reading = read_command(text, root)
    if reading.unreadable is not None or not reading.commands:
        return False
    searched: set[str] = {"/dev/null"}
    moved: list[str] = []
    for argv in reading.commands:
        if not argv:
            return False
        name = posixpath.basename(argv[0])
        if name in SEARCHERS:
            searched.update(argv[1:])
            continue
        if name in _OPENING_NOTHING:
            if name in ("cd", "pushd"):
                moved.extend(argv[1:])
            continue
        if name in LINE_FILTERS and not _file_operands(argv[1:]):
            searched.update(argv[1:])  # `head -n 3`: the reading may take the 3 for a file
            continue
        return False
    # every file read is a search's operand, also as seen from where `cd` went: no input
    # redirected from elsewhere (`wc -c < $f`)
    searched.update(moved)
    searched.update(posixpath.normpath(posixpath.join(d, w)) for d in moved for w in list(searched))
    return all(path in searched or posixpath.normpath(path) in searched for path in reading.reads)
