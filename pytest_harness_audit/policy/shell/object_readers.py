"""Commands whose reads of git's stored objects the reading judges itself.

The kernel sees a credential file's stored copy read (its loose object under ``.git/objects``,
:mod:`pytest_harness_audit.inspect.credential_objects`) whoever asked git for it: ``git log
--stat`` and ``git show --stat`` read it to count its lines, ``git gc`` to pack it, as surely
as a program that prints it scrambled. :func:`objects_read_in_view` tells when such a read
needs no judgement of its own: every program the text runs is git itself, run by its own name
with a command of its own that runs no other program, a search or line filter whose lines
the agent receives, or a builtin or a command of names. What such a text does with a
credential's committed text is then the reading's to judge (``git show HEAD:.env`` and ``git
archive HEAD | tar x -O`` are read as reads of ``.env``), and what it prints is scanned. Any
other program in the text (an interpreter, a script, a program the reading does not know)
could have asked git for the blob and hidden what it got, so the read counts; so does a text
that sends what it prints to a file outside the workspace, where no check reads it.
"""

from __future__ import annotations

import os
import posixpath
from typing import Final

from pytest_harness_audit.policy.shell.reading import read_command
from pytest_harness_audit.policy.shell.search_only import (
    OPENING_NOTHING,
    STARTING_ASSIGNMENT,
    file_operands,
    runs_programs,
    system_program,
)
from pytest_harness_audit.policy.shell.tree_reads import LINE_FILTERS, SEARCHERS

#: Commands that act on names, not on what files hold.
_NAME_COMMANDS: Final = frozenset(
    {"ls", "stat", "du", "realpath", "readlink", "basename", "dirname"}
)
#: git's own commands that run no program but git's (a hook aside: hooks are protected files).
_GIT_COMMANDS: Final = frozenset(
    {"status", "log", "show", "diff", "diff-tree", "diff-index", "diff-files", "blame",
     "annotate", "shortlog", "whatchanged", "ls-files", "ls-tree", "rev-parse", "rev-list",
     "cat-file", "branch", "tag", "add", "commit", "reset", "restore", "checkout", "switch",
     "stash", "merge", "cherry-pick", "revert", "rebase", "gc", "repack", "prune", "fsck",
     "count-objects", "describe", "grep", "mv", "rm", "clean", "init", "reflog", "notes",
     "show-ref", "for-each-ref", "symbolic-ref", "update-ref", "update-index", "hash-object",
     "verify-pack", "name-rev", "merge-base", "range-diff", "cherry", "version", "var",
     "check-ignore", "check-attr", "format-patch", "apply", "am", "archive", "bundle",
     "fast-export", "unpack-objects", "pack-objects", "worktree", "maintenance", "config",
     "remote", "fetch", "pull", "push", "clone", "prune-packed", "pack-refs", "commit-graph",
     "multi-pack-index", "index-pack", "fsck-objects", "read-tree", "write-tree", "mktree",
     "show-branch", "merge-tree", "merge-file", "check-ref-format"}
)  # fmt: skip
#: git's options before its command that take the next word as their value.
_GIT_VALUED: Final = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})
#: git's options before its command that make it run a program or take another's settings.
_GIT_RUNNING: Final = ("-c", "--config-env", "--exec-path")
#: Options of git's commands that name a program for it to run.
_GIT_PROGRAM_OPTIONS: Final = (
    "--exec",
    "--upload-pack",
    "--receive-pack",
    "--extcmd",
    "--ext-diff",
)


def _git_command(args: list[str]) -> str | None:
    """The command ``git args`` runs, when it runs no program but git's; else ``None``."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option = args[index]
        if option.startswith(_GIT_RUNNING):
            return None
        index += 2 if option in _GIT_VALUED else 1
    if index >= len(args) or args[index] not in _GIT_COMMANDS:
        return None  # an alias, an external git-* command, or nothing
    command, rest = args[index], args[index + 1 :]
    if any(word.startswith(_GIT_PROGRAM_OPTIONS) for word in rest):
        return None
    if command == "rebase" and any(w == "-x" or w.startswith("-x") for w in rest):
        return None
    return command


def _inside(root: str | None, path: str) -> bool:
    """Whether a file the text writes is in the workspace (where a copy of a secret in clear
    is found), or ``/dev/null``."""
    if path == "/dev/null":
        return True
    if root is None or path.startswith("~"):
        return False
    resolved = os.path.normpath(os.path.join(root, path))
    return resolved.startswith(os.path.normpath(root) + os.sep)


def objects_read_in_view(text: str, root: str | None = None) -> bool:
    """Whether ``text`` reads cleanly as git's own commands, searches, line filters of their
    input, builtins that open nothing and commands of names, writing no file outside the
    workspace (see the module doc)."""
    if STARTING_ASSIGNMENT.search(text):
        return False  # GIT_EXTERNAL_DIFF=…, PATH=…: git or a search may run another program
    reading = read_command(text, root)
    if reading.unreadable is not None or reading.code or not reading.commands:
        return False
    moved = False
    for argv in reading.commands:
        if not argv or not system_program(argv[0]):
            return False
        name = posixpath.basename(argv[0])
        if name == "git":
            if _git_command(argv[1:]) is None:
                return False
        elif name in SEARCHERS:
            if runs_programs(name, argv[1:]):
                return False
        elif name in LINE_FILTERS:
            if file_operands(argv[1:]):
                return False
        elif name in OPENING_NOTHING or name in _NAME_COMMANDS:
            moved = moved or name in ("cd", "pushd")
        else:
            return False
    if reading.writes and moved:
        return False  # where a relative name lands is not told
    return all(_inside(root, path) for path in reading.writes)


__all__ = ["objects_read_in_view"]
