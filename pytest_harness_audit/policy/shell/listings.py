"""What a listing command prints: the names of files, for the command they reach.

``ls -a | xargs cat``, ``find . -name '.e*' | xargs cat``, ``cat $(ls -a)``, ``for f in $(find
. -type f); do cat "$f"; done``: the names a listing prints become the operands of a reader, so
the reading needs them as it needs ``echo .env | xargs cat``'s. With a workspace, ``ls`` prints
the entries of its folders (dotfiles with ``-a``/``-A``) and ``find`` the files under its
roots that its ``-name``/``-path`` tests keep (every file when a test is negated or or-ed:
one name too many, never too few), and ``git ls-files`` the files its index names. With no
workspace (or a ``find`` root outside it), ``ls`` prints the operands it is given and ``find``
its roots and the sensitive names a glob test could match (``-name '.e*'`` → ``.env``), as
:func:`~.tools.find` does for ``-exec``; a bare ``ls`` prints nothing known.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from typing import Protocol

from pytest_harness_audit.policy.sensitive import glob_candidates

#: The listing commands read here (the cheap test before any work).
LISTERS = frozenset({"ls", "dir", "vdir", "find", "gfind", "git"})
#: Most names one listing gives.
_MAX_NAMES = 512
#: ``find`` options taking a value that are not name tests.
_FIND_VALUED = frozenset(
    {"-maxdepth", "-mindepth", "-type", "-xtype", "-newer", "-user", "-group", "-perm", "-size",
     "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin", "-regex", "-iregex", "-fstype",
     "-links", "-inum", "-samefile", "-printf", "-fprint", "-fprintf", "-fls", "-fprint0",
     "-regextype", "-used", "-uid", "-gid", "-context"}
)  # fmt: skip
_NAME_TESTS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename"})
_BRANCHES = frozenset({"-o", "-or", "!", "-not", "(", ")", ",", "-prune"})


class Lister(Protocol):
    """What a listing needs of the expander (or a command's context): the workspace files."""

    def workspace_folder(self, folder: str) -> str | None:
        """The real path of a workspace folder (``None``: none, or outside the workspace)."""
        ...

    def workspace_files(self, folder: str) -> list[str] | None:
        """The files under a workspace folder (``None``: too many)."""
        ...


def listing_output(argv: list[str], lister: Lister) -> str | None:
    """The names ``argv`` (a :data:`LISTERS` command) prints, one a line; ``None`` when they
    cannot be known."""
    name = argv[0].rsplit("/", 1)[-1].lower()
    known = getattr(lister, "root", None) is not None
    if name == "git":
        names = _tracked(argv[2:], lister) if argv[1:2] == ["ls-files"] and known else None
        return None if names is None else "".join(f"{entry}\n" for entry in names[:_MAX_NAMES])
    names = find_names(argv[1:], lister, known) if name.endswith("find") else _ls(argv[1:], lister)
    if names is None:
        return None
    return "".join(f"{entry}\n" for entry in names[:_MAX_NAMES])


def _ls(args: list[str], lister: Lister) -> list[str] | None:
    options = [a for a in args if a.startswith("-") and a != "-"]
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    hidden = any(
        o in ("--all", "--almost-all") or (o[1:2] != "-" and ("a" in o or "A" in o))
        for o in options
    )
    recursive = any(o == "--recursive" or (o[1:2] != "-" and "R" in o) for o in options)
    if getattr(lister, "root", None) is None:
        return operands or None  # `ls .env` prints the name; a folder's entries are not known
    found: list[str] = []
    for operand in operands or ["."]:
        real = lister.workspace_folder(operand)
        if real is None or not os.path.lexists(real):
            return None  # out of the workspace, or not there yet (`mkdir d && ls d`)
        if not os.path.isdir(real):
            found.append(operand)  # a file: its name
            continue
        if recursive:
            files = lister.workspace_files(operand)
            if files is None:
                return None
            entries = [posixpath.relpath(f, operand) if operand != "." else f for f in files]
        else:
            try:
                entries = sorted(os.listdir(real))
            except OSError:
                continue
        prefix = "" if operand in (".", "./") else operand.rstrip("/") + "/"
        found.extend(prefix + e for e in entries if hidden or not _hidden(e))
    return found


def _tracked(args: list[str], lister: Lister) -> list[str] | None:
    """``git ls-files`` of the workspace: the files git's index names (``-o``: those it does
    not); ``None`` when the index cannot be read plainly (a version 4 index, other options)."""
    if any(a not in ("-c", "--cached", "-o", "--others", "--exclude-standard", "-z") for a in args):
        return None
    folder = lister.workspace_folder(".git")
    try:
        with open(os.path.join(folder or "", "index"), "rb") as handle:
            index = handle.read(_MAX_INDEX + 1)
    except OSError:
        return None
    if folder is None or len(index) > _MAX_INDEX or index[:8] not in _PLAIN_INDEX:
        return None
    files = lister.workspace_files(".")
    if files is None:
        return None
    others = any(a in ("-o", "--others") for a in args)
    return [f for f in files if (f.encode() + b"\0" in index) != others]


#: Git index versions whose entries hold their paths in full, and the most of one read.
_PLAIN_INDEX = (b"DIRC\0\0\0\2", b"DIRC\0\0\0\3")
_MAX_INDEX = 4 * 1024 * 1024


def _hidden(path: str) -> bool:
    return any(part[:1] == "." for part in path.split("/"))


def find_roots(args: list[str]) -> tuple[list[str], int]:
    """The folders ``find ARGS`` starts from (``.`` when none) and the index of its first
    expression word."""
    index = 0
    roots: list[str] = []
    while index < len(args) and not args[index].startswith(("-", "(", "!")):
        roots.append(args[index])
        index += 1
    return roots or ["."], index


def find_names(args: list[str], lister: Lister, workspace: bool) -> list[str] | None:
    """The names ``find ARGS`` prints (before any ``-exec``), from the workspace's files when
    ``workspace`` (module doc); ``None``: too many files to look at."""
    roots, index = find_roots(args)
    tests: list[tuple[str, str]] = []
    branched = False
    only_folders = False
    while index < len(args):
        word = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        if word in _NAME_TESTS:
            tests.append((word, value))
            index += 1
        elif word in ("-type", "-xtype"):
            only_folders = value == "d"
            index += 1
        elif word in _FIND_VALUED:
            index += 1
        elif word in _BRANCHES:
            branched = True
        elif word in ("-exec", "-execdir", "-ok", "-okdir"):
            break  # what it prints from there on is another command's output
        index += 1
    named = tests  # what an or-ed or negated test could name still counts where none is listed
    if branched:
        tests = []
    found = list(roots) if not tests or not workspace else []
    for root in roots:
        if not workspace or lister.workspace_folder(root) is None:
            found.extend(_candidates(root, named))  # `find / -name .env`: what it could name
            continue
        files = [] if only_folders else lister.workspace_files(root)
        if files is None:
            return None
        found.extend(f for f in files if all(_passes(test, pattern, f) for test, pattern in tests))
    return found


def _candidates(root: str, tests: list[tuple[str, str]]) -> list[str]:
    """The files ``find ROOT`` names that the reading cannot list: the root, a literal name its
    tests give, the credential names a glob test could match."""
    found = [root]
    for test, pattern in tests:
        name = pattern.rpartition("/")[2] if "path" in test else pattern
        if not any(char in name for char in "*?["):
            found.append(posixpath.join(root, name))
        else:
            found.extend(posixpath.join(root, n) for n in glob_candidates(name))
    return found


def _passes(test: str, pattern: str, path: str) -> bool:
    """Whether ``path`` passes ``find``'s name test (``-iname``, ``-ipath``: any case)."""
    subject = path if "path" in test or "wholename" in test else posixpath.basename(path)
    if test.startswith("-i"):
        return fnmatch.fnmatchcase(subject.lower(), pattern.lower())
    if subject is path and not pattern.startswith(("./", "/", "*")):
        subject = path.removeprefix("./")
    return fnmatch.fnmatchcase(subject, pattern) or fnmatch.fnmatchcase(f"./{subject}", pattern)


__all__ = ["LISTERS", "Lister", "find_names", "listing_output"]
