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

import os
import posixpath
import re

from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.shell.nodes import Budget, Unreadable
from pytest_harness_audit.policy.shell.reading import read_command
from pytest_harness_audit.policy.shell.search_oracles import (
    SEARCH_VALUED,
    pattern_given,
    searched,
)
from pytest_harness_audit.policy.shell.syntax import Parser
from pytest_harness_audit.policy.shell.tools import split_options
from pytest_harness_audit.policy.shell.tree_reads import LINE_FILTERS, SEARCHERS

#: Builtins and commands that open no file's content.
OPENING_NOTHING = frozenset(
    {"cd", "pushd", "popd", "echo", "printf", "true", "false", "pwd", ":", "sleep"}
)
#: Commands that open nothing and change no folder: what may come before an exhaustive search.
_PAUSES = OPENING_NOTHING - {"cd", "pushd", "popd"}
#: What may keep a search from running to its end whatever other processes do: a pipe (its
#: reader may stop early), a condition, a background job, an expansion, a redirection, a
#: compound command.
_NOT_A_SEQUENCE = re.compile(
    r"[|&`$()<>{}\n\\]|\b(?:if|while|until|for|case|select|function|coproc|time)\b"
)
#: Options with which grep stops at its first match anywhere, or searches nothing at all.
_STOPPING_LONG = frozenset({"--quiet", "--silent", "--help", "--version"})
_STOPPING_SHORT = frozenset("qV")
#: What shows a piped search's own exit status: whether it matched, when a filter after it
#: passed none of its lines on (``grep -r KEY=a . | head -n 0; echo ${PIPESTATUS[0]}``).
_STATUS_WORDS = ("PIPESTATUS", "pipefail")
#: An assignment where a command starts (``PATH=bin:$PATH grep …``, ``LD_PRELOAD=x grep``): the
#: search that follows may be another program, or load one.
STARTING_ASSIGNMENT = re.compile(
    r"(?:^|[;&|(){}!`\n]|\b(?:then|do|else|elif|if|while|until|time)\s)\s*"
    r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?="
)
#: Where a program named by its path is the system's own (``./grep`` is the workspace's).
_SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
#: Options with which a search runs other programs: ``rg --pre CMD`` on each file, ``rg -z``
#: a decompressor, ``rg --hostname-bin``; ``ack`` reads its options from an ``.ackrc`` of the
#: workspace (``--pager=CMD``).
_RUNNING = ("--pre", "--pre-glob", "--hostname-bin", "--search-zip")
#: Shells whose ``-c TEXT`` is read as a script of the same text (its commands are the text's).
_SHELLS = frozenset({"sh", "bash", "dash"})
#: Options of the line filters that take the next word as their value.
_VALUED = frozenset({"-n", "-c", "-k", "-t", "-f", "-s", "-w", "-S", "-T"})


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
    options, _ = split_options(commands[-1][1:], SEARCH_VALUED["grep"])
    for option in options:
        if option.startswith("--"):
            if option.partition("=")[0] in _STOPPING_LONG:
                return False
        elif option.startswith("-") and not _STOPPING_SHORT.isdisjoint(option[1:]):
            return False
    return True


def _defined(text: str) -> frozenset[str]:
    """The names of the functions ``text`` defines (``f() { …; }``, ``function f { …; }``)."""
    parser = Parser(text, Budget())
    try:
        parser.parse()
    except Unreadable:
        return frozenset()
    return frozenset(parser.functions.bodies)


#: Options whose value is a file a search opens itself (its patterns, its names to leave out).
_FILE_OPTIONS = frozenset(
    {"-f", "--file", "--exclude-from", "--ignore-file", "-X", "--path-to-ignore"}
)
#: Options that follow symbolic links while recursing: each link to the file is one more open.
_FOLLOWING = ("-R", "--dereference-recursive", "-L", "--follow")
#: At most this many entries are walked to count the links a following search may take.
_MAX_WALK = 20_000


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
_EXCLUDE_FILES = frozenset({"--exclude-from", "--ignore-file", "--path-to-ignore"})
#: Largest exclusion file read (larger: it may leave anything out).
_MAX_EXCLUDE_BYTES = 1 << 16


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
