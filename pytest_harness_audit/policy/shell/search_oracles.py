"""Searches whose output says whether a file matched, not what it holds: one bit per call.

``grep -rc 'KEY=a' .`` prints ``./.env:1`` and ``grep -rq 'KEY=a' . && echo y`` prints ``y``
when the secret in ``.env`` starts with ``a``: no line of the file reaches the output, so the
output scan has nothing to find, yet a loop of such calls reads the secret a character at a
time. So a search whose output holds no matched line (:func:`hides_lines`: ``-l``, ``-L``,
``-c``, ``-q``, ``diff -q``; or a line search piped into ``wc``, ``head -c`` or a quiet search)
counts as reading each credential file its patterns may match (:func:`matching_files`).

"May match" is a superset of what the tool would match: only the literal runs every match must
hold are looked for, in any case, anywhere in the file. A pattern of any other syntax (a
bracket, a group, a backslash, a brace, an alternation, a non-ASCII character), an inverted
search, patterns from a file that cannot be read, or a file too large or unreadable, may match.
A search for ``TODO`` over a folder whose ``.env`` holds no ``todo`` stays allowed; a hit costs
the agent a denial, which the verdict shows.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import stat
from typing import Final

from pytest_harness_audit.own_opens import note_own_open
from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.option_words import split_options

#: Largest credential file searched for a pattern's literals (larger: it may match).
MAX_SEARCHED_BYTES: Final = 1 << 20
#: Long options that print no matched line, by tool family.
_HIDING_LONG: Final = {
    "grep": frozenset(
        {
            "--files-with-matches",
            "--files-without-match",
            "--count",
            "--quiet",
            "--silent",
            "--name-only",
        }
    ),  # `--name-only`: git grep's
    "rg": frozenset(
        {"--files-with-matches", "--files-without-match", "--count", "--count-matches", "--quiet"}
    ),
    "ag": frozenset({"--files-with-matches", "--files-without-matches", "--count"}),
    "ack": frozenset({"--files-with-matches", "--files-without-matches", "--count"}),
    "diff": frozenset({"--brief", "--quiet"}),
}
#: Short option letters that print no matched line (in any bundle: ``-rlc``).
_HIDING_SHORT: Final = {"grep": "lLcq", "rg": "lcq", "ag": "lLc", "ack": "lLc", "diff": "q"}
_FAMILY: Final = {
    "grep": "grep", "egrep": "grep", "fgrep": "grep", "rg": "rg", "ag": "ag", "ack": "ack",
    "diff": "diff",
}  # fmt: skip
#: Options of each search that take the next word as their value.
SEARCH_VALUED: Final = {
    "grep": frozenset(
        {"-e", "-f", "--regexp", "--file", "-m", "-A", "-B", "-C", "--exclude", "--include"}
    ),
    "rg": frozenset(
        {
            "-e",
            "-f",
            "--regexp",
            "--file",
            "-g",
            "--glob",
            "-t",
            "-T",
            "-m",
            "-A",
            "-B",
            "-C",
            "-j",
            "-r",
            "--replace",
        }
    ),
    "ag": frozenset({"-G", "--ignore", "-m", "-A", "-B", "-C", "-p", "--path-to-ignore"}),
    "ack": frozenset({"-m", "-A", "-B", "-C", "--type", "--ignore-dir", "--ignore-file"}),
    "diff": frozenset({"-x", "--exclude", "-X", "--exclude-from"}),
}
_FIXED: Final = {
    "grep": ("-F", "--fixed-strings"),
    "rg": ("-F", "--fixed-strings"),
    "ag": ("-Q", "--literal"),
    "ack": ("-Q", "--literal"),
}
_INVERT: Final = ("-v", "--invert-match")
#: Characters literal in every dialect (basic, extended, Perl and Rust regular expressions).
_PLAIN: Final = re.compile(r"[A-Za-z0-9 _=:,;@%#&!~<>'\"/-]*")
_RUN_ENDS: Final = frozenset(".^$+")
_OPTIONAL: Final = frozenset("*?")


def hides_lines(name: str, args: list[str]) -> bool:
    """Whether the search ``name args`` prints no matched line: names, counts or nothing."""
    family = _FAMILY.get(name)
    if family is None:
        return False
    long_options, letters = _HIDING_LONG[family], _HIDING_SHORT[family]
    options, _ = split_options(args, SEARCH_VALUED[family])
    for option in options:
        if option.startswith("--"):
            given = option.split("=", 1)[0]
            # GNU tools take any unambiguous prefix of a long option (`--cou`)
            if len(given) > 2 and any(o.startswith(given) for o in long_options):
                return True
        elif option.startswith("-") and any(letter in letters for letter in option[1:]):
            return True
    return False


def pattern_given(options: list[str]) -> bool:
    """Whether a search's patterns come from options (``-e``, ``-f``, ``--regexp=``): then
    every operand is a file; else the first is the pattern."""
    return any(
        o in ("-e", "-f", "--regexp", "--file") or o.startswith(("--regexp=", "--file="))
        for o in options
    )  # not `--files-with-matches`


def filter_hides_lines(name: str, args: list[str]) -> bool:
    """Whether a filter a search's lines are piped into prints no line of them: ``wc``,
    ``head -c``/``tail -c`` (a few bytes of a line), or a search that only names or counts."""
    if name == "wc":
        return True
    if name in ("head", "tail"):
        return any(word.startswith(("--bytes", "-c")) or _bytes_count(word) for word in args)
    return hides_lines(name, args)


def _bytes_count(word: str) -> bool:
    """``head -5c``: the old form of ``head -c 5``."""
    return word.startswith("-") and word[1:].rstrip("cbkKmM").isdigit() and word.endswith("c")


def searched(name: str, args: list[str], files: list[str]) -> list[str]:
    """The ``files`` a search opens given its name filters: with ``grep --include=GLOB`` or
    ``rg -g GLOB`` only names matching one of them (in any case, by name or path)."""
    family = _FAMILY.get(name)
    if family not in ("grep", "rg"):
        return files
    filters = ("--include",) if family == "grep" else ("-g", "--glob", "--iglob")
    globs: list[str] = []
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        if option == "--exclude" and family == "grep" and not globs:
            # GNU grep searches a name no filter matches unless the first filter is --include
            return files
        if option not in filters:
            continue
        if not equals:
            if index + 1 >= len(args):
                continue
            value = args[index + 1]
        if not value.startswith("!"):  # rg's `!GLOB` leaves names out: no filter of the rest
            globs.append(value.casefold())
    if not globs:
        return files
    return [
        path
        for path in files
        if any(
            fnmatch.fnmatch(posixpath.basename(path).casefold(), glob)
            or fnmatch.fnmatch(path.casefold(), glob)
            or fnmatch.fnmatch(path.casefold(), "*/" + glob.lstrip("/"))
            for glob in globs
        )
    ]


def matching_files(name: str, args: list[str], files: list[str], ctx: Context) -> list[str]:
    """The ``files`` (credential files a search covers) its patterns may match."""
    if not files:
        return []
    family = _FAMILY.get(name)
    if family is None or family == "diff":
        return list(files)  # `diff -rq`: whether two files are equal, whatever they hold
    options, operands = split_options(args, SEARCH_VALUED[family])
    if any(o in _INVERT for o in options) or any(
        o.startswith("-") and not o.startswith("--") and "v" in o[1:] for o in options
    ):
        return list(files)  # an inverted search matches nearly every file
    patterns = _patterns(family, options, operands, ctx)
    if patterns is None:
        return list(files)
    fixed = name == "fgrep" or any(o in _FIXED.get(family, ()) for o in options)
    return [path for path in files if _may_match(patterns, fixed, _folded_text(path, ctx))]


def _patterns(
    family: str, options: list[str], operands: list[str], ctx: Context
) -> list[str] | None:
    """The search's patterns (``-e``, ``--regexp=``, ``-f FILE`` or the first operand);
    ``None`` when they cannot be known."""
    patterns: list[str] = []
    given = False
    for index, option in enumerate(options):
        value: str | None = None
        if option in ("-e", "--regexp") and index + 1 < len(options):
            value = options[index + 1]
        elif option.startswith("--regexp="):
            value = option.partition("=")[2]
        elif option in ("-f", "--file") or option.startswith("--file="):
            path = option.partition("=")[2] if "=" in option else None
            if path is None:
                path = options[index + 1] if index + 1 < len(options) else None
            text = ctx.workspace_text(path) if path else None
            if text is None:
                return None
            patterns.extend(text.splitlines())
            given = True
            continue
        elif option.startswith("-") and not option.startswith("--") and option[-1:] in "ef":
            return None  # `-ie PATTERN`: a bundle ending in a valued letter, not split here
        if value is not None:
            patterns.append(value)
            given = True
    if not given:
        if not operands:
            return None
        patterns.append(operands[0])
    return patterns


def _folded_text(path: str, ctx: Context) -> str | None:
    """The case-folded text of a credential file (``None``: unknown, so it may match)."""
    real = ctx.real_path(path)
    if real is None:
        return None
    try:  # never blocks: a FIFO or a device in a credential file's place is not opened for reading
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        note_own_open(info)  # the auditor's own open, not the agent's (credential-read watch)
        if not stat.S_ISREG(info.st_mode):
            return None
        data = os.read(fd, MAX_SEARCHED_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_SEARCHED_BYTES:
        return None
    return data.decode("utf-8", "replace").casefold()


def _may_match(patterns: list[str], fixed: bool, text: str | None) -> bool:
    if text is None:
        return True
    for pattern in patterns:
        for line in pattern.split("\n"):
            required = _required_runs(line, fixed)
            if required is None or all(run in text for run in required):
                return True
    return False


def _required_runs(pattern: str, fixed: bool) -> list[str] | None:
    """The literal runs every match of ``pattern`` holds, case-folded (``None``: not known)."""
    if not pattern.isascii():
        return None
    if fixed:
        return [pattern.casefold()] if pattern else []
    runs: list[str] = []
    current: list[str] = []
    for char in pattern:
        if char in _OPTIONAL:  # the character before may be absent
            if current:
                current.pop()
            runs.append("".join(current))
            current = []
        elif char in _RUN_ENDS:
            runs.append("".join(current))
            current = []
        elif _PLAIN.fullmatch(char):
            current.append(char)
        else:
            return None  # a bracket, group, brace, alternation or escape: any dialect's own
    runs.append("".join(current))
    return [run.casefold() for run in runs if run]
