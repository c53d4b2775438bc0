"""Commands that rewrite workspace files with a text the reading cannot know.

``git stash pop && npm test``, ``git apply fix.diff && sh tidy.sh``, ``patch -p1 < p.diff; make``
or ``tar xf tools.tar && ./tools/run.sh`` run files that the first command has just changed: the
text on disk, which the reading would read, is not what runs. After such a command, every
workspace file the same command runs or loads is unknown (a file the command itself then
writes with a known text excepted), so the reading says the command is unreadable instead of
judging the old text.

Counted: the git subcommands that change the working tree (``apply`` but not ``--check``/
``--stat``, ``am``, ``merge``, ``pull``, ``rebase``, ``cherry-pick``, ``revert``, ``restore``,
``read-tree -u``, ``stash`` but not ``list``/``show``, ``checkout``/``switch`` but not to a new
branch, ``reset --hard``/``--merge``/``--keep``), ``patch`` (not ``--dry-run``), archives
extracted (``tar x``, ``unzip``, ``7z x``, ``cpio -i``, ``gunzip`` …), ``gawk -i inplace``, and a
recursive copy or ``rsync`` (which can put any file anywhere under its destination); and program
text that writes files (``open(p, "w")``, ``write_text``, ``writeFileSync``, ``File.write``,
``fopen(p, "w")``, ``shutil.copy``, ``os.rename`` …): ``python gen.py && sh out.sh``.
"""

from __future__ import annotations

from typing import Final

import re2

from pytest_harness_audit.policy.shell.gitcommand import GIT_GLOBAL_OPTIONS
from pytest_harness_audit.policy.shell.tools import option_value

_GIT_REWRITING: Final = frozenset(
    {"apply", "am", "merge", "pull", "rebase", "cherry-pick", "revert", "restore", "stash"}
)
_GIT_READ_ONLY: Final = {
    "apply": ("--check", "--stat", "--numstat", "--summary"),
    "stash": ("list", "show", "create"),
}
_DECOMPRESSORS: Final = frozenset(
    {"unzip", "gunzip", "bunzip2", "unxz", "unzstd", "uncompress", "unrar", "cpio", "ar"}
)
#: Commands tested here (the cheap test before any parsing).
REWRITERS: Final = frozenset(
    {"git", "patch", "tar", "bsdtar", "gtar", "7z", "7za", "7zz", "gawk", "awk", "cp", "rsync"}
    | _DECOMPRESSORS
    | {"gzip", "bzip2", "xz", "zstd"}
)


# RE2: linear in the program text, whatever it holds
_WRITES_FILES: Final = re2.compile(
    r"""\bopen\s*\([^()]*,\s*(?:mode\s*=\s*)?['"][^'"]*[wax+]"""
    r"|\.write_(?:text|bytes)\s*\(|\b(?:writeFileSync|appendFileSync|createWriteStream|copyFileSync"
    r"|renameSync|symlinkSync|linkSync|cpSync)\b|\bfs\.(?:promises\.)?(?:writeFile|appendFile"
    r"|copyFile|rename|cp|symlink)\b|\bFile\.(?:write|open|rename)\b|\bIO\.write\b"
    r"""|\bfopen\s*\([^()]*,\s*['"][wa]|\bfile_put_contents\b"""
    r"|\bshutil\.(?:copy\w*|move)\b|\bos\.(?:rename|replace|symlink|link)\b"
    r"|\bFileUtils\.(?:cp|mv|copy|move)|\bPath\([^()]*\)\.(?:rename|replace)\b"
)


def writes_files(code: str) -> bool:
    """Whether program text visibly writes, copies or renames files."""
    return _WRITES_FILES.search(code) is not None


def rewrites_tree(name: str, args: list[str]) -> bool:
    """Whether ``name args`` may rewrite workspace files with a text the reading cannot know."""
    if name not in REWRITERS:
        return False
    if name == "git":
        return _git_rewrites(args)
    if name == "patch":
        return "--dry-run" not in args
    if name in ("tar", "bsdtar", "gtar"):
        first = args[0] if args else ""
        bundled = first and not first.startswith("-") and "x" in first
        return bool(bundled) or any(
            a in ("-x", "--extract", "--get") or (a[:1] == "-" and a[1:2] != "-" and "x" in a)
            for a in args
        )
    if name in ("7z", "7za", "7zz"):
        return args[:1] in (["x"], ["e"])
    if name in ("gzip", "bzip2", "xz", "zstd"):
        return any(a in ("-d", "--decompress") for a in args)
    if name == "cpio":
        return any(a in ("-i", "--extract") or a.startswith("-i") for a in args)
    if name == "unzip":
        return not any(a in ("-l", "-t", "-v", "-Z") for a in args)
    if name in ("gawk", "awk"):
        return "inplace" in args or "-iinplace" in args
    if name in ("cp", "rsync"):
        return any(
            a in ("--recursive", "--archive")
            or (a[:1] == "-" and a[1:2] != "-" and any(c in a for c in "rRa"))
            for a in args
        )
    return name in _DECOMPRESSORS


def _git_rewrites(args: list[str]) -> bool:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in GIT_GLOBAL_OPTIONS else 1
    if index >= len(args):
        return False
    sub, rest = args[index], args[index + 1 :]
    if sub in ("checkout", "switch"):
        creating = any(o in ("-b", "-B", "-c", "-C", "--orphan") for o in rest)
        operands = [w for w in rest if not w.startswith("-")]
        return not (creating and len(operands) <= 1)  # a new branch where HEAD is: no change
    if sub == "reset":
        return any(o in ("--hard", "--merge", "--keep") for o in rest)
    if sub == "read-tree":
        return "-u" in rest
    if sub not in _GIT_REWRITING:
        return False
    return not any(word in _GIT_READ_ONLY.get(sub, ()) for word in rest[:2] + rest)


def extraction_folder(argv: list[str]) -> str | None:
    """The folder an archive is extracted into (``tar -C DIR -x``, ``unzip -d DIR``, ``7z x
    -oDIR``; ``.`` when it names none), ``None`` when ``argv`` extracts nothing."""
    if not argv:
        return None
    name, args = argv[0].rsplit("/", 1)[-1], argv[1:]
    if name in ("tar", "bsdtar", "gtar") and rewrites_tree(name, args):
        return option_value(args, ("-C", "--directory")) or "."
    if name == "unzip" and rewrites_tree(name, args):
        return option_value(args, ("-d",)) or "."
    if name in ("7z", "7za", "7zz") and rewrites_tree(name, args):
        return next((a[2:] for a in args if a.startswith("-o") and len(a) > 2), ".")
    if name == "cpio" and rewrites_tree(name, args):
        return option_value(args, ("-D", "--directory")) or "."
    return None
