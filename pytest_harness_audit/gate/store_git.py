"""Git commands that carry an audit store kept inside the repository away, by no name of it.

A store inside a git work tree is ignored (its ``.gitignore`` is ``*``), and git handles ignored
files in bulk: ``git stash --all`` moves every one of them into a stash (the chain, its anchor
and the session file vanish, and a later ``stash pop`` brings an older chain back), and
``git add --force .`` puts them in the index, so a later plain ``git stash`` or ``git checkout``
rolls the chain back to what was committed. Neither names the store. When the store lies in the
work tree the workspace lies in, these commands are judged as touching it.

A command is judged by the words the shell reading gives it, so an option's value keeps its
boundaries: ``git stash push -m 'x -a'`` has the message ``x -a``, not the flag ``-a``.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_harness_audit.policy.shell import read_command

#: Global options of git that take a value (as a separate word).
_GLOBAL_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})
_STASH_SUBCOMMANDS = frozenset(
    {"list", "show", "drop", "pop", "apply", "branch", "clear", "create", "store"}
)
#: Subcommands the guard judges; any other built-in one is no alias to look up.
_BUILTIN = frozenset(
    (  # noqa: SIM905 - a word list reads better than 57 quoted names
        "add am annotate apply archive bisect blame branch bundle cat-file check-ignore checkout "
        "cherry-pick clean clone commit config describe diff fetch format-patch fsck gc grep "
        "help init log ls-files ls-remote ls-tree merge mv notes pull push range-diff rebase "
        "reflog remote repack replace reset restore rev-list rev-parse revert rm shortlog show "
        "sparse-checkout stash status submodule switch tag update-index version worktree"
    ).split()
)
_SHORT = re.compile(r"-[A-Za-z]+")
_WILD = re.compile(r"[*?\[]")


def worktree_top(path: str) -> str | None:
    """The top directory of the git work tree holding ``path`` (a ``.git`` entry), else None."""
    current = os.path.abspath(path)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


class CallCommands:
    """The simple commands of one call the store rule has read, joined as the targets list them.

    The targets of a call list its command and then each simple command's words joined by
    spaces, which no longer shows where a word ends (``-m 'x -a'`` reads ``-m x -a``). Met
    later as a text of its own, such a joined form was already judged with its word boundaries
    and is skipped — unless the call gave that very text as a parameter (then it is a command
    of its own, and judged as one).
    """

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._given = {value for value in params.values() if isinstance(value, str)}
        self._joined: set[str] = set()
        #: The simple commands of the files the commands read so far run as shell (``ran``).
        self.ran: list[list[str]] = []
        #: The program text the commands read so far run (inline code, script files: ``code``).
        self.code: list[str] = []

    def judged(self, text: str) -> bool:
        """Whether ``text`` is a simple command of a command read before in this call."""
        return text in self._joined and text not in self._given

    def read(self, text: str, root: str | None) -> list[list[str]]:
        """The simple commands of ``text`` (noting their joined forms)."""
        reading = read_command(text, root)
        commands = reading.commands
        self.ran.extend(reading.ran)
        self.code.extend(reading.code)
        for argv in commands:
            joined = " ".join(argv)
            if joined != text:
                self._joined.add(joined)
        return commands


def command_moves_ignored_files(
    text: str, repo: str | None, reaches: Callable[[str], bool], seen: CallCommands
) -> bool:
    """Whether the command ``text`` runs a git command that carries ignored files away (see
    :func:`moves_ignored_files`), judged on the words the shell reading gives each of its
    simple commands; ``seen`` holds what the call's earlier texts read (see
    :class:`CallCommands`)."""
    if seen.judged(text):
        return False
    return any(
        argv and os.path.basename(argv[0]) == "git" and moves_ignored_files(argv, repo, reaches)
        for argv in seen.read(text, repo)
    )


def moves_ignored_files(
    words: Sequence[str], repo: str | None, reaches: Callable[[str], bool]
) -> bool:
    """Whether the argv ``words`` (``git …``) stashes, force-adds or bulk-adds ignored files,
    or defines an alias that would; ``repo`` is where a configured alias is looked up, and
    ``reaches(path)`` tells whether a path named by a forced add is or holds the store."""
    if not words or os.path.basename(words[0]) != "git":
        return False
    index = 1
    while index < len(words) and words[index].startswith("-"):
        option = words[index]
        if option == "-c" and index + 1 < len(words) and _alias_value(words[index + 1]):
            return True
        index += 2 if option in _GLOBAL_VALUED else 1
    if index >= len(words):
        return False
    sub, rest = words[index], list(words[index + 1 :])
    if sub == "config":
        return any(_alias_value(f"{key}={value}") for key, value in itertools.pairwise(rest))
    if sub not in _BUILTIN and repo is not None:
        alias = _configured_alias(sub, repo)
        if alias is not None:
            expanded = alias.split()
            return _judged([*expanded, *rest], reaches) or moves_ignored_files(
                ["git", *expanded], None, reaches
            )
    return _judged([sub, *rest], reaches)


def _judged(words: list[str], reaches: Callable[[str], bool]) -> bool:
    sub, rest = words[0], words[1:]
    if sub == "stash":
        return _stash_takes_untracked(rest)
    if sub == "add":
        return _forced_add(rest, reaches)
    if sub == "update-index":
        return "--add" in rest and "--stdin" in rest
    return False


def _alias_value(setting: str) -> bool:
    """``alias.NAME=VALUE`` whose value stashes or adds (judged conservatively)."""
    key, sep, value = setting.partition("=")
    if not sep or not key.lower().startswith("alias."):
        return False
    first = value.lstrip("!").split()[:1]
    return bool(first) and first[0] in ("stash", "add", "update-index", "git")


def _stash_takes_untracked(rest: list[str]) -> bool:
    index = 0
    if rest and not rest[0].startswith("-"):
        if rest[0] in _STASH_SUBCOMMANDS:
            return False
        index = 1  # push / save
    while index < len(rest):
        word = rest[index]
        if word == "--":
            break
        if word in ("-m", "--message", "--pathspec-from-file"):
            index += 2
            continue
        if word in ("--all", "--include-untracked") or word.startswith("--include-untr"):
            return True
        if _SHORT.fullmatch(word):
            letters = word[1:].partition("m")[0]  # what follows -m is the message
            if "a" in letters or "u" in letters:
                return True
        index += 1
    return False


def _forced_add(rest: list[str], reaches: Callable[[str], bool]) -> bool:
    """A forced add of no path (names from ``xargs``), of a pathspec pattern, or of a path that
    is or holds the store; a forced add of other named files is ordinary."""
    options = rest[: rest.index("--")] if "--" in rest else rest
    forced = "--force" in options or any(_SHORT.fullmatch(w) and "f" in w for w in options)
    if not forced:
        return False
    if any(w.startswith("--pathspec-from-file") for w in options):
        return True
    operands = [w for w in options if not w.startswith("-")]
    if "--" in rest:
        operands += rest[rest.index("--") + 1 :]
    if not operands:
        return True
    return any(w.startswith(":") or _WILD.search(w) or reaches(w) for w in operands)


def _configured_alias(name: str, repo: str) -> str | None:
    """The value of ``alias.<name>`` in ``repo``'s configuration (None when unset)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
        return None
    try:
        done = subprocess.run(
            ["git", "config", "--get", f"alias.{name}"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "stash --all"  # cannot tell: judged as the worst it could be
    value = done.stdout.strip()
    return value.lstrip("!") if done.returncode == 0 and value else None
