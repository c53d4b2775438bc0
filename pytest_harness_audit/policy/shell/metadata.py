"""git commands that act on a file's name or git status, never on what it holds.

``git rm --cached .env`` (untracking a committed secret), ``git check-ignore .env``, ``git
ls-files .env``, ``git status -- .env`` and ``git log --oneline -- .env`` read nothing of the
file: their operands are no file reads, so naming a credential file there is no credential
access. What shows content stays a read: ``git add`` (the file into the index), ``git show``/
``git diff``, ``git log -p``/``-L``/``-S``/``-G`` (patches, pickaxe), ``git status -v`` (the
staged diff), ``git rm`` without ``--cached`` (read as before). ``chmod``/``touch`` operands
stay reads: the store guard sees a mode change of the audit store through them.
"""

from __future__ import annotations

from typing import Final

_GIT_NAMES_ONLY: Final = frozenset({"check-ignore", "ls-files", "check-attr"})
#: ``git log`` options that show no file content (every other option may: a patch, a pickaxe).
_LOG_OPTIONS: Final = frozenset(
    {"--oneline", "--stat", "--shortstat", "--numstat", "--name-only", "--name-status",
     "--follow", "--all", "--graph", "--decorate", "--no-decorate", "--no-merges", "--merges",
     "--reverse", "--abbrev-commit", "--no-color", "--first-parent", "--summary", "--"}
)  # fmt: skip
_LOG_VALUE_PREFIXES: Final = (
    "--max-count=", "--since=", "--until=", "--after=", "--before=", "--author=",
    "--committer=", "--format=", "--pretty=", "--date=", "--grep=", "--skip=",
)  # fmt: skip
_LOG_WITH_VALUE: Final = frozenset(
    {"-n", "--max-count", "--author", "--since", "--until", "--grep"}
)


def git_names_only(sub: str, args: list[str]) -> bool:
    """Whether ``git SUB ARGS`` reads no content of its operand files (module docstring)."""
    if sub in _GIT_NAMES_ONLY:
        return True
    if sub == "rm":
        return "--cached" in args
    if sub == "status":
        return not any(a in ("-v", "-vv", "--verbose") for a in args)
    if sub == "log":
        return _log_names_only(args)
    return False


def _log_names_only(args: list[str]) -> bool:
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word == "--":
            return True  # the rest are paths
        if not word.startswith("-"):
            continue  # a revision or a path
        if word in _LOG_WITH_VALUE:
            skip = True
        elif not (
            word in _LOG_OPTIONS
            or word.startswith(_LOG_VALUE_PREFIXES)
            or (word[1:].isdigit() and len(word) > 1)  # `-5`
        ):
            return False
    return True
