"""Commands that do nothing but search and show what they find.

A recursive search opens every file under its folders, a ``.env`` included; when its lines go to
the agent, the inspection scans them for the workspace's secrets, so the reading lets it run
(:mod:`.tree_reads`). The kernel still sees the ``.env`` read
(:mod:`pytest_harness_audit.inspect.credential_reads`). :func:`only_searches` tells when such a
read needs no further judgement: every command of the text is a search, a line filter reading
its input, or a builtin that opens no file, and no search's own exit status is shown (a filter
may pass none of its lines on). A call of a function the text defines and ``bash -c TEXT`` whose
``TEXT`` is itself only searches run nothing else (``f() { grep -rn TODO .; }; f | head``): the
commands of the body and of the script are the text's own, judged with it. Any other command in
the same text (``python3 x.py``, a command substitution, ``xargs``) could have made the read
itself, so the read counts.
:func:`search_opens` tells how often the searches open a file: an open beyond that was another
process's.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from typing import Final

from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.shell.nodes import Budget, Unreadable
from pytest_harness_audit.policy.shell.option_words import split_options
from pytest_harness_audit.policy.shell.reading import read_command
from pytest_harness_audit.policy.shell.search_oracles import (
    SEARCH_VALUED,
    pattern_given,
    searched,
)
from pytest_harness_audit.policy.shell.syntax import Parser
from pytest_harness_audit.policy.shell.tree_reads import LINE_FILTERS, SEARCHERS

#: Builtins and commands that open no file's content.
OPENING_NOTHING: Final = frozenset(
    {"cd", "pushd", "popd", "echo", "printf", "true", "false", "pwd", ":", "sleep"}
)
#: Commands that open nothing and change no folder: what may come before an exhaustive search.
_PAUSES: Final = OPENING_NOTHING - {"cd", "pushd", "popd"}
#: What may keep a search from running to its end whatever other processes do: a pipe (its
#: reader may stop early), a condition, a background job, an expansion, a redirection, a
#: compound command.
_NOT_A_SEQUENCE: Final = re.compile(
    r"[|&`$()<>{}\n\\]|\b(?:if|while|until|for|case|select|function|coproc|time)\b"
)
#: The options of an exhaustive grep, spelled in full: none stops it before it opened every file
#: it names (``-q`` stops at a match, ``-m 00`` reads no line, ``-f /dev/null`` and a pattern
#: file another call empties match nothing, ``-d skip`` enters no folder, ``--exclude-from``
#: is a file another call may rewrite); GNU grep takes any unambiguous prefix of a long name
#: (``--max=0``), so a name is taken only in full.
_EXACT_SHORT: Final = frozenset("rRnHhiywxlLcsoEFGPaIUvzZTb0123456789")
_EXACT_VALUED_SHORT: Final = frozenset("eABC")
#: A match count that lets grep read a line of each file.
_POSITIVE: Final = re.compile(r"[1-9][0-9]*")
_EXACT_LONG_NAMES: Final = """recursive dereference-recursive line-number with-filename no-filename
    ignore-case no-ignore-case word-regexp line-regexp files-with-matches files-without-match count
    only-matching no-messages extended-regexp fixed-strings basic-regexp perl-regexp text
    binary invert-match null null-data byte-offset initial-tab line-buffered color colour"""
_EXACT_LONG: Final = frozenset("--" + name for name in _EXACT_LONG_NAMES.split())
_EXACT_VALUED_LONG: Final = frozenset(
    {
        "--regexp",
        "--include",
        "--exclude",
        "--exclude-dir",
        "--after-context",
        "--before-context",
        "--context",
        "--color",
        "--colour",
        "--label",
        "--binary-files",
    }
)
#: What shows a piped search's own exit status: whether it matched, when a filter after it
#: passed none of its lines on (``grep -r KEY=a . | head -n 0; echo ${PIPESTATUS[0]}``).
_STATUS_WORDS: Final = ("PIPESTATUS", "pipefail")
#: An assignment where a command starts (``PATH=bin:$PATH grep …``, ``LD_PRELOAD=x grep``): the
#: search that follows may be another program, or load one.
STARTING_ASSIGNMENT: Final = re.compile(
    r"(?:^|[;&|(){}!`\n]|\b(?:then|do|else|elif|if|while|until|time)\s)\s*"
    r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?="
)
#: Where a program named by its path is the system's own (``./grep`` is the workspace's).
_SYSTEM_DIRS: Final = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
#: Options with which a search runs other programs: ``rg --pre CMD`` on each file, ``rg -z``
#: a decompressor, ``rg --hostname-bin``; ``ack`` reads its options from an ``.ackrc`` of the
#: workspace (``--pager=CMD``).
_RUNNING: Final = ("--pre", "--pre-glob", "--hostname-bin", "--search-zip")
#: Shells whose ``-c TEXT`` is read as a script of the same text (its commands are the text's).
_SHELLS: Final = frozenset({"sh", "bash", "dash"})
#: Options of the line filters that take the next word as their value.
_VALUED: Final = frozenset({"-n", "-c", "-k", "-t", "-f", "-s", "-w", "-S", "-T"})


def system_program(word: str) -> bool:
    """Whether ``word`` names a program found on the search path or in a system folder."""
    return "/" not in word or (word.startswith(_SYSTEM_DIRS) and ".." not in word)


def runs_programs(name: str, args: list[str]) -> bool:
    """Whether the search ``name args`` may run another program (see :data:`_RUNNING`)."""
    if name == "ack":
        return True
    if name != "rg":
        return False
    for word in args:
        if word == "--":
            return False
        if word.split("=", 1)[0] in _RUNNING:
            return True
        if word.startswith("-") and not word.startswith("--") and "z" in word:
            return True
    return False


def file_operands(args: list[str]) -> list[str]:
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
    if any(word in text for word in _STATUS_WORDS) or STARTING_ASSIGNMENT.search(text):
        return False
    reading = read_command(text, root)
    if reading.unreadable is not None or not reading.commands:
        return False
    searched: set[str] = {"/dev/null"}
    moved: list[str] = []
    functions = _defined(text)
    for argv in reading.commands:
        if argv and argv[0] in functions:
            continue  # `f`: its body's commands are among the text's
        if not argv or not system_program(argv[0]):
            return False
        name = posixpath.basename(argv[0])
        if name in _SHELLS and len(argv) == 3 and argv[1] == "-c" and only_searches(argv[2], root):
            functions |= _defined(argv[2])
            continue  # `bash -c 'grep -rn TODO .'`: its commands are among the text's
        if name in SEARCHERS:
            if runs_programs(name, argv[1:]):
                return False
            searched.update(argv)  # `/usr/bin/grep`: the reading takes the program for a file
            continue
        if name in OPENING_NOTHING:
            if name in ("cd", "pushd"):
                moved.extend(argv[1:])
            continue
        if name in LINE_FILTERS and not file_operands(argv[1:]):
            searched.update(argv[1:])  # `head -n 3`: the reading may take the 3 for a file
            continue
        return False
    # every file read is a search's operand, also as seen from where `cd` went: no input
    # redirected from elsewhere (`wc -c < $f`)
    searched.update(moved)
    searched.update(posixpath.normpath(posixpath.join(d, w)) for d in moved for w in list(searched))
    return all(path in searched or posixpath.normpath(path) in searched for path in reading.reads)


def exhaustive_searches(text: str, root: str | None = None) -> bool:
    """Whether ``text`` is :func:`only_searches` that surely run to their end: pauses that open
    nothing (``sleep 1``), then one ``grep`` ending the text, all joined by ``;`` alone (no
    pipe, condition, background job, expansion or redirection), with no option that stops it
    at its first match or before it searches (``-q``, ``--help``). When such a call exits by
    the search's own status, 0 or 1, the search opened each file it names as often as
    :func:`search_opens` counts: an open beyond that was another process's."""
    if _NOT_A_SEQUENCE.search(text) or not only_searches(text, root):
        return False
    commands = read_command(text, root).commands
    if not commands or not commands[-1] or commands[-1][0] not in ("grep", "egrep", "fgrep"):
        return False
    if any(not argv or argv[0] not in _PAUSES for argv in commands[:-1]):
        return False
    options, operands = split_options(commands[-1][1:], SEARCH_VALUED["grep"])
    return _runs_to_its_end(options) and not _skips_operand(options, [*operands, "."])


def _runs_to_its_end(options: list[str]) -> bool:
    """Whether a grep's ``options`` (with their values) are all of :data:`_EXACT_SHORT` and
    :data:`_EXACT_LONG`, spelled in full; a match count (``-m 3``) only in plain digits, not 0
    (``-m 00`` and ``--max-count=+0`` read no line)."""
    pending = ""  # the option whose value is the next word
    for option in options:
        if pending:
            if pending in ("-m", "--max-count") and not _POSITIVE.fullmatch(option):
                return False
            pending = ""
        elif option.startswith("--"):
            name, equals, value = option.partition("=")
            if name == "--max-count" and equals:
                if not _POSITIVE.fullmatch(value):
                    return False
            elif not (name in _EXACT_VALUED_LONG if equals else name in _EXACT_LONG):
                if equals or name not in _EXACT_VALUED_LONG | {"--max-count"}:
                    return False
                if name not in SEARCH_VALUED["grep"] and name != "--max-count":
                    return False
                pending = name
        elif option.startswith("-") and len(option) > 1:
            for index, letter in enumerate(option[1:], start=1):
                if letter in _EXACT_VALUED_SHORT or letter == "m":
                    rest = option[index + 1 :]
                    if letter == "m" and rest and not _POSITIVE.fullmatch(rest):
                        return False
                    pending = "" if rest else f"-{letter}"
                    break
                if letter not in _EXACT_SHORT:
                    return False
        else:
            return False
    return not pending


def _skips_operand(options: list[str], operands: list[str]) -> bool:
    """Whether an ``--exclude-dir`` glob of grep may match a folder it is named (``.`` by
    ``'.*'``): grep then searches nothing there."""
    globs = [o.partition("=")[2].strip("/") for o in options if o.startswith("--exclude-dir=")]
    for word in operands if globs else ():
        parts = [*posixpath.normpath(word).split("/"), word, word.rstrip("/")]
        if any(fnmatch.fnmatch(part, glob) for part in parts for glob in globs):
            return True
    return False


def _defined(text: str) -> frozenset[str]:
    """The names of the functions ``text`` defines (``f() { …; }``, ``function f { …; }``)."""
    parser = Parser(text, Budget())
    try:
        parser.parse()
    except Unreadable:
        return frozenset()
    return frozenset(parser.functions.bodies)


#: Options whose value is a file a search opens itself (its patterns, its names to leave out).
_FILE_OPTIONS: Final = frozenset(
    {"-f", "--file", "--exclude-from", "--ignore-file", "-X", "--path-to-ignore"}
)
#: Options that follow symbolic links while recursing: each link to the file is one more open.
_FOLLOWING: Final = ("-R", "--dereference-recursive", "-L", "--follow")
#: At most this many entries are walked to count the links a following search may take.
_MAX_WALK: Final = 20_000


def search_opens(text: str, root: str, relative: str) -> int:
    """At most how often the searches of ``text`` (a text :func:`only_searches` accepts) open
    the file ``relative`` to ``root``: once per operand that is the file, or a folder holding
    it that the search recurses into and whose name filters keep it, once per file option
    (``-f .env``) naming it; one more a link to it for a search that follows links. An open
    beyond that was not the search's: a process that outlived an earlier call, say."""
    target = os.path.realpath(os.path.join(root, relative))
    reading = read_command(text, root)
    moved = [argv[1] for argv in reading.commands if argv[:1] in (["cd"], ["pushd"])]
    bases = [root, *(os.path.join(root, folder) for folder in moved if len(folder) > 0)]
    total = 0
    for argv in reading.commands:
        name = posixpath.basename(argv[0]) if argv else ""
        if name not in SEARCHERS:
            continue
        family = "grep" if name in ("egrep", "fgrep") else name
        options, operands = split_options(argv[1:], SEARCH_VALUED[family])
        named = family == "diff" or (family != "ag" and pattern_given(options))
        paths = operands if named else operands[1:]
        recursive = family in ("rg", "ag", "ack") or any(
            o in ("--recursive", "--dereference-recursive", "-d")
            or (o.startswith("-") and not o.startswith("--") and ("r" in o or "R" in o))
            for o in options
        )
        if not paths and recursive:
            paths = ["."]
        if family == "grep" and _searches_nothing(options, [*operands, "."], bases[-1]):
            paths = []  # only its pattern files are opened (below)
        for option, value in _option_values(options):
            if option in _FILE_OPTIONS:
                paths.append(value)
        for word in paths:
            for base in dict.fromkeys(bases):
                found = os.path.realpath(os.path.join(base, word))
                if found == target:
                    total += 1
                    break
                if recursive and target.startswith(found.rstrip("/") + "/"):
                    inner = os.path.relpath(target, found)
                    if _kept(family, argv[1:], options, inner, base):
                        total += 1
                    break
        if recursive and _follows(family, options):
            total += _links_to(root, target)
    return total


#: GNU grep's long options (it takes any unambiguous prefix of one).
_GREP_LONG_NAMES: Final = """after-context before-context binary-files basic-regexp binary
    byte-offset context color colour count devices directories dereference-recursive exclude
    exclude-from
    exclude-dir extended-regexp file files-with-matches files-without-match fixed-strings help
    ignore-case no-ignore-case include initial-tab label line-buffered line-number line-regexp
    max-count no-filename no-group-separator group-separator no-messages null null-data
    only-matching perl-regexp quiet recursive regexp invert-match silent text
    unix-byte-offsets version with-filename word-regexp"""
_GREP_LONG: Final = tuple("--" + name for name in _GREP_LONG_NAMES.split())
#: Those that may keep it from opening a file it names (``--directories=skip``).
_NARROWING: Final = frozenset({"--directories", "--devices"})


def _long_name(word: str) -> str:
    """The grep long option ``word`` (``--max=0``) names in full, or ``""`` (none, or more)."""
    name = word.partition("=")[0]
    found = [n for n in _GREP_LONG if n.startswith(name)]
    return name if name in _GREP_LONG else found[0] if len(found) == 1 else ""


def _searches_nothing(options: list[str], operands: list[str], base: str) -> bool:
    """Whether grep's ``options`` may keep it from opening any file it names: a match count
    that is not plain positive digits (``-m 00``, ``--max=+0``), ``-d``/``--directories``
    (``skip``), an empty pattern file with no ``-e`` (nothing can match), or an
    ``--exclude-dir`` glob matching a folder it is named."""
    if _skips_operand(options, operands):
        return True
    patterns = pattern_file = False
    for index, option in enumerate(options):
        if option.startswith("--"):
            full, equals, value = _long_name(option), "=" in option, option.partition("=")[2]
            if not full:
                return True  # grep knows no such option (``--excl``): it opens nothing
            patterns = patterns or full == "--regexp"
            pattern_file = pattern_file or full == "--file"
            if full in _NARROWING or (
                full == "--max-count" and not (equals and _POSITIVE.fullmatch(value))
            ):
                return True
        elif option.startswith("-"):
            for at, letter in enumerate(option[1:], start=1):
                if letter in "dD":
                    return True
                patterns, pattern_file = patterns or letter == "e", pattern_file or letter == "f"
                if letter in "eABCmf":
                    rest = option[at + 1 :] or (options[index + 1 : index + 2] or [""])[0]
                    if letter == "m" and not _POSITIVE.fullmatch(rest):
                        return True
                    break
    files = [v for o, v in _option_values(options) if o.endswith("f") or _long_name(o) == "--file"]
    return pattern_file and not patterns and not all(_has_lines(base, f) for f in files)


def _has_lines(base: str, path: str) -> bool:
    """Whether the file ``path`` (from ``base``) holds anything (a pattern file of grep)."""
    try:
        return os.path.getsize(os.path.join(base, path)) > 0
    except OSError:
        return False


def _follows(family: str, options: list[str]) -> bool:
    """Whether a search follows links while recursing (``grep -R``, ``rg -L``)."""
    letter = "R" if family == "grep" else "L"
    return any(
        o in _FOLLOWING or (o.startswith("-") and not o.startswith("--") and letter in o)
        for o in options
    )


def _option_values(options: list[str]) -> list[tuple[str, str]]:
    """Each option with its value (``--file=x`` or ``-f x``)."""
    pairs: list[tuple[str, str]] = []
    for index, option in enumerate(options):
        if option.startswith("--") and "=" in option:
            key, _, value = option.partition("=")
            pairs.append((key, value))
        elif index + 1 < len(options) and not options[index + 1].startswith("-"):
            pairs.append((option, options[index + 1]))
    return pairs


def _kept(family: str, args: list[str], options: list[str], inner: str, base: str) -> bool:
    """Whether a recursive search keeps the file ``inner`` (relative to the folder searched)
    given its name filters (those of an exclusion file too, read from ``base``, the folder
    the search runs in), its match count and, for ``rg``/``ag``, hidden names. When a filter
    cannot be told, the file is left out: the count is an upper bound, and one too high
    would let another process's open pass for the search's."""
    if not searched(family, args, [inner]):
        return False
    parts = inner.split("/")
    filters = [o for o in options if o.startswith(("--include=", "--exclude="))]
    included = [o.partition("=")[2] for o in filters if o.startswith("--include=")]
    first_included = filters[:1] == [f"--include={included[0]}" if included else ""]
    if (
        family == "grep"
        and first_included
        and not any(fnmatch.fnmatchcase(parts[-1], glob) for glob in included)
    ):
        return False  # grep's --include tells case apart: ``--include=.ENV`` leaves .env out
    hidden = any(part.startswith(".") for part in parts)
    if hidden and family in ("rg", "ag") and not _shows_hidden(options):
        return False
    for option, value in _option_values(options):
        glob = value.lstrip("!") if family == "rg" and option in ("-g", "--glob", "--iglob") else ""
        if family == "rg" and not value.startswith("!"):
            glob = ""
        if option in ("--exclude", "--ignore") or (family == "diff" and option == "-x"):
            glob = value
        if glob and wildcards.fnmatch(parts[-1], glob):
            return False
        if option in ("--exclude-dir", "--ignore-dir") and (
            value.strip("/") == "."
            or any(wildcards.fnmatch(part, value.strip("/")) for part in parts[:-1])
        ):
            return False
        if option in _EXCLUDE_FILES and _excluded_by_file(os.path.join(base, value), inner):
            return False
        if option in ("-m", "--max-count") and value.strip() == "0":
            return False  # no line is read: the file may not be opened at all
    return not any(option in ("-m0", "--max-count=0") for option in options)


#: Options naming a file of globs whose names a search leaves out.
_EXCLUDE_FILES: Final = frozenset({"--exclude-from", "--ignore-file", "--path-to-ignore"})
#: Largest exclusion file read (larger: it may leave anything out).
_MAX_EXCLUDE_BYTES: Final = 1 << 16


def _excluded_by_file(path: str, inner: str) -> bool:
    """Whether a glob of the exclusion file ``path`` may leave ``inner`` out (by its name, or
    its path for an ignore file's); a file that cannot be read, or a negation: it may."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_EXCLUDE_BYTES + 1)
    except OSError:
        return True
    if len(data) > _MAX_EXCLUDE_BYTES:
        return True
    name = inner.rsplit("/", 1)[-1]
    for line in data.decode("utf-8", "replace").splitlines():
        glob = line.strip()
        if not glob or glob.startswith("#"):
            continue
        if glob.startswith("!"):
            return True
        bare = glob.strip("/")
        if wildcards.fnmatch(name, bare) or wildcards.fnmatch(inner, bare):
            return True
    return False


def _shows_hidden(options: list[str]) -> bool:
    return any(
        o in ("--hidden", "-.", "--unrestricted", "-a", "--all-types") or o.startswith("-uu")
        for o in options
    )


def _links_to(root: str, target: str) -> int:
    """The symbolic links under ``root`` that lead to ``target`` or a folder holding it (a
    walk of at most :data:`_MAX_WALK` entries; beyond it, as many as could be)."""
    count, seen = 0, 0
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f != ".git"]
        for entry in folders + files:
            seen += 1
            if seen > _MAX_WALK:
                return _MAX_WALK
            path = os.path.join(folder, entry)
            if os.path.islink(path):
                found = os.path.realpath(path)
                if found == target or target.startswith(found.rstrip("/") + "/"):
                    count += 1
    return count
