"""What a listing command prints: the names of files, for the command they reach.

``ls -a | xargs cat``, ``find . -name '.e*' | xargs cat``, ``cat $(ls -a)``, ``for f in $(find
. -type f); do cat "$f"; done``: the names a listing prints become the operands of a reader, so
the reading needs them as it needs ``echo .env | xargs cat``'s. With a workspace, ``ls`` prints
the entries of its folders (dotfiles with ``-a``/``-A``) and ``find`` the files under its
roots that its ``-name``/``-path`` tests keep (every file when a test is negated or or-ed:
one name too many, never too few), ``git ls-files`` the files its index names, ``git status``
every file but the untracked ones ``.gitignore`` leaves out, and ``fd``, ``rg --files``, ``du
-a``, ``tree`` and ``compgen -f`` every file under their folders (dotfiles where they show
them). A folder outside the workspace (``ls -a ~``, ``find ~/.aws``) prints the credential files
it holds (:mod:`.outside_listings`), with or without a workspace. With no workspace, ``ls``
prints the operands it is given and ``find`` its roots and the sensitive names a glob test could
match (``-name '.e*'`` → ``.env``, ``-name '*.pem'``), as :func:`~.tools.find` does for
``-exec``; a bare ``ls`` prints nothing known. When there are more names than are passed on, the
credential files go first. What a filter the reading cannot work out keeps of them is
:mod:`.name_streams`'.
"""

from __future__ import annotations

import os
import posixpath
from typing import Final, Protocol

from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.sensitive import glob_candidates, is_credential_path
from pytest_harness_audit.policy.shell.outside_listings import (
    CREDENTIAL_FOLDERS,
    ignored,
    outside_names,
)

#: The listing commands read here (the cheap test before any work).
LISTERS: Final = frozenset(
    {"ls", "dir", "vdir", "find", "gfind", "git", "fd", "fdfind", "rg", "du", "tree", "compgen"}
)
#: Most names one listing gives.
_MAX_NAMES: Final = 512
#: ``find`` options taking a value that are not name tests.
_FIND_VALUED: Final = frozenset(
    {"-maxdepth", "-mindepth", "-type", "-xtype", "-newer", "-user", "-group", "-perm", "-size",
     "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin", "-regex", "-iregex", "-fstype",
     "-links", "-inum", "-samefile", "-printf", "-fprint", "-fprintf", "-fls", "-fprint0",
     "-regextype", "-used", "-uid", "-gid", "-context"}
)  # fmt: skip
_NAME_TESTS: Final = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename"})
_BRANCHES: Final = frozenset({"-o", "-or", "!", "-not", "(", ")", ",", "-prune"})


class Lister(Protocol):
    """What a listing needs of the expander (or a command's context): the workspace files."""

    def workspace_folder(self, folder: str) -> str | None:
        """The real path of a workspace folder (``None``: none, or outside the workspace)."""
        ...

    def workspace_files(self, folder: str) -> list[str] | None:
        """The files under a workspace folder (``None``: too many)."""
        ...

    def real_path(self, path: str) -> str | None:
        """The real path of ``path`` from where the script is (``None``: no workspace)."""
        ...


def listing_output(argv: list[str], lister: Lister) -> str | None:
    """The names ``argv`` (a :data:`LISTERS` command) prints, one a line; ``None`` when they
    cannot be known."""
    name = argv[0].rsplit("/", 1)[-1].lower()
    known = getattr(lister, "root", None) is not None
    if name == "git":
        names = _git(argv[1:], lister) if known else None
    elif name in _WALKERS:
        names = walked_names(name, argv[1:], lister, known)
    else:
        ls = not name.endswith("find")
        names = _ls(argv[1:], lister) if ls else find_names(argv[1:], lister, known)
    if names is None:
        return None
    if len(names) > _MAX_NAMES:  # the credential files first: they are what the rules judge
        names = [n for n in names if is_credential_path(n)] + names
    return "".join(f"{entry}\n" for entry in dict.fromkeys(names[: _MAX_NAMES * 2]))


def _git(args: list[str], lister: Lister) -> list[str] | None:
    """``git ls-files`` (:func:`_tracked`); ``git status``: the files it may name (every file but
    the untracked ones the workspace's ``.gitignore`` surely leaves out; with ``--ignored``,
    every file)."""
    if args[:1] == ["status"]:
        files = lister.workspace_files(".")
        if files is None or any(a.startswith("--ignored") for a in args):
            return files
        tracked = set(_tracked([], lister) or files)
        return [f for f in files if f in tracked or not ignored(f, lister)]
    return _tracked(args[1:], lister) if args[:1] == ["ls-files"] else None


#: Listings that walk their folders: ``fd``, ``rg --files``, ``du -a``, ``tree``, ``compgen -f``.
_WALKERS: Final = frozenset({"fd", "fdfind", "rg", "du", "tree", "compgen"})


def walked_names(name: str, args: list[str], lister: Lister, known: bool) -> list[str] | None:
    """The files a walking listing (:data:`_WALKERS`) prints (every file under its folders: one
    too many), dotfiles only where it shows them (``fd -H``, ``rg --hidden``, ``tree -a``;
    ``du`` always)."""
    flags = "".join(a[1:] for a in args if a[:1] == "-" and a[1:2] != "-")
    words = [a for a in args if a[:1] == "-"]
    if name == "rg" and "--files" not in words:
        return None  # a search: :mod:`.search_oracles`
    if name == "du" and "a" not in flags and "--all" not in words:
        return None  # folders only
    if name == "compgen" and "f" not in flags and "G" not in flags:
        return None  # not file names
    hidden = name in ("du", "compgen") or "--hidden" in words or "u" in flags or "H" in flags
    hidden = hidden or (name == "tree" and "a" in flags)
    operands = [a for a in args if a[:1] != "-"]
    folders = [a for a in operands if a[:1] in ("/", "~") or _is_folder(lister, a, known)]
    if not folders or (name in ("compgen", "fd", "fdfind") and len(operands) < 2):
        folders.append(".")  # `fd PATTERN`: from here (a value or a pattern is no folder)
    found: list[str] = []
    for folder in folders:
        real = lister.workspace_folder(folder) if known else None
        if real is None:
            found.extend(outside_names(folder, lister.real_path(folder), hidden, True))
            continue
        files = lister.workspace_files(folder)
        if files is None:
            return None
        found.extend(f for f in files if hidden or not _hidden(f))
    if name == "compgen" and operands and found:
        found = _completed(flags, operands[-1], found) or found
    return found


def _completed(flags: str, word: str, files: list[str]) -> list[str]:
    """The files ``compgen -G GLOB`` (``-f PREFIX``) prints: those the glob matches (that
    start with the prefix), as bash names them; none matching: ``[]``."""
    kept: list[str] = []
    for path in files:
        name = path[2:] if path.startswith("./") else path
        if "G" in flags:
            if wildcards.fnmatchcase(name, word) and (word[:1] == "." or name[:1] != "."):
                kept.append(name)
        elif name.startswith(word.removeprefix("./")):
            kept.append(name)
    return kept


def _ls(args: list[str], lister: Lister) -> list[str] | None:
    options = [a for a in args if a.startswith("-") and a != "-"]
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    hidden = any(
        o in ("--all", "--almost-all") or (o[1:2] != "-" and ("a" in o or "A" in o))
        for o in options
    )
    recursive = any(o == "--recursive" or (o[1:2] != "-" and "R" in o) for o in options)
    if getattr(lister, "root", None) is None:  # `ls .env` prints the name; `ls ~/.ssh` its keys
        found = [n for o in operands for n in [o, *outside_names(o, None, hidden, recursive)]]
        return found or None  # a relative folder's entries are not known
    found = []
    for operand in operands or ["."]:
        real = lister.workspace_folder(operand)
        if real is None:  # out of the workspace: its credential files (`ls -a ~`)
            found.extend(outside_names(operand, lister.real_path(operand), hidden, recursive))
            if "*" in operand or "?" in operand or "[" in operand:
                found.append(operand)  # `ls -d ../*`: what it matches, not listed (as the glob)
            continue
        if not os.path.lexists(real):
            usual = CREDENTIAL_FOLDERS.get(posixpath.basename(real))
            if usual is None:
                return None  # not there yet (`mkdir d && ls d`)
            # `cd ~/.ssh && ls`: a folder that holds credentials only names its usual files
            found.extend(
                ("" if operand in (".", "./") else operand.rstrip("/") + "/") + name
                for name in usual
            )
            continue
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


def search_names(argv: list[str], lister: Lister) -> list[str] | None:
    """The files a recursive search that prints file names may print (``grep -rl KEY ~/.ssh``,
    ``rg -l --hidden KEY``): every file under its folders (one too many); ``None`` for any
    other command."""
    name = argv[0].rsplit("/", 1)[-1]
    options = [a for a in argv[1:] if a[:1] == "-"]
    flags = "".join(o[1:] for o in options if o[1:2] != "-")
    listed = "l" in flags or "L" in flags or any(o.startswith("--files-with") for o in options)
    walks = name in ("rg", "ag") or "r" in flags or "R" in flags or "--recursive" in options
    if name not in ("grep", "egrep", "fgrep", "rg", "ag") or not listed or not walks:
        return None
    hidden = name not in ("rg", "ag") or "--hidden" in options or "uu" in flags or "." in flags
    operands = [a for a in argv[1:] if a[:1] != "-"]
    given = any(o.startswith(("--regexp", "--file=")) for o in options)
    given = given or "e" in flags or "f" in flags
    known = getattr(lister, "root", None) is not None
    found: list[str] = []
    for folder in operands[0 if given else 1 :] or ["."]:
        real = lister.workspace_folder(folder) if known else None
        if real is None:
            found.extend(outside_names(folder, lister.real_path(folder), hidden, True))
            continue
        files = lister.workspace_files(folder) if os.path.isdir(real) else [folder]
        found.extend(f for f in files or [] if hidden or not _hidden(f))
    return found


def _is_folder(lister: Lister, word: str, known: bool) -> bool:
    """Whether ``word`` names a folder of the workspace."""
    real = lister.workspace_folder(word) if known else None
    return real is not None and os.path.isdir(real)


def _tracked(args: list[str], lister: Lister) -> list[str] | None:
    """``git ls-files`` of the workspace: the files git's index names (``-o``: those it does
    not, ``-i`` ignored or not: one too many); ``None`` when the index cannot be read plainly
    (a version 4 index, other options). A repository with no index yet tracks nothing."""
    args = [f"-{c}" for a in args for c in (a[1:] if a[:1] == "-" and a[1:2] != "-" else "")] + [
        a for a in args if a[:2] == "--" or a[:1] != "-"
    ]  # `-oi`: `-o -i` (an operand: not worked out)
    if any(a not in _LS_FILES_OPTIONS for a in args):
        return None
    folder = lister.workspace_folder(".git")
    try:
        with open(os.path.join(folder or "", "index"), "rb") as handle:
            index = handle.read(_MAX_INDEX + 1)
    except FileNotFoundError:
        if folder is None or not os.path.isfile(os.path.join(folder, "HEAD")):
            return None  # no repository here: git looks for one above
        index = _PLAIN_INDEX[0]  # no commit, nothing added yet: every file is untracked
    except OSError:
        return None
    if folder is None or len(index) > _MAX_INDEX or index[:8] not in _PLAIN_INDEX:
        return None
    files = lister.workspace_files(".")
    if files is None:
        return None
    others = any(a in ("-o", "--others") for a in args)
    listed = [f for f in files if (f.encode() + b"\0" in index) != others]
    if others and "--exclude-standard" in args and not {"-i", "--ignored"} & set(args):
        listed = [f for f in listed if not ignored(f, lister)]  # what .gitignore leaves out
    return listed


#: ``git ls-files`` options whose listing is worked out.
_LS_FILES_OPTIONS: Final = frozenset(
    {"-c", "--cached", "-o", "--others", "-i", "--ignored", "--exclude-standard", "-z"}
)
#: Git index versions whose entries hold their paths in full, and the most of one read.
_PLAIN_INDEX: Final = (b"DIRC\0\0\0\2", b"DIRC\0\0\0\3")
_MAX_INDEX: Final = 4 * 1024 * 1024


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
            real = lister.real_path(root) if workspace else None
            outside = [] if only_folders else outside_names(root, real, True, True)
            found.extend(f for f in outside if all(_passes(t, p, f) for t, p in tests))
            continue
        files = [] if only_folders else lister.workspace_files(root)
        if files is None:
            return None
        found.extend(f for f in files if all(_passes(test, pattern, f) for test, pattern in tests))
    return found


def _candidates(root: str, tests: list[tuple[str, str]]) -> list[str]:
    """The files ``find ROOT`` names that the reading cannot list: the root, a literal name its
    tests give (or a glob naming credential files only: ``*.pem``), the credential names a glob
    test could match."""
    found = [root]
    for test, pattern in tests:
        name = pattern.rpartition("/")[2] if "path" in test else pattern
        if not any(char in name for char in "*?[") or is_credential_path(name):
            found.append(posixpath.join(root, name))  # `-name '*.pem'`: the files it names
        if any(char in name for char in "*?["):
            found.extend(posixpath.join(root, n) for n in glob_candidates(name))
    return found


def _passes(test: str, pattern: str, path: str) -> bool:
    """Whether ``path`` passes ``find``'s name test (``-iname``, ``-ipath``: any case)."""
    subject = path if "path" in test or "wholename" in test else posixpath.basename(path)
    if test.startswith("-i"):
        return wildcards.fnmatchcase(subject.lower(), pattern.lower())
    if subject is path and not pattern.startswith(("./", "/", "*")):
        subject = path.removeprefix("./")
    return wildcards.fnmatchcase(subject, pattern) or wildcards.fnmatchcase(f"./{subject}", pattern)


__all__ = ["LISTERS", "Lister", "find_names", "listing_output", "search_names", "walked_names"]
