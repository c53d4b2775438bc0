"""Programs that delete files under another name than ``rm``.

* ``rimraf DIR`` (also ``npx``/``pnpm dlx``/``bunx rimraf``, Node projects' ``clean`` scripts),
  ``del-cli``, ``cmake -E rm -r``/``remove_directory``, ``shx rm -rf`` (shelljs) delete a folder
  with what it holds, as ``rm -r`` does (a destruction); ``cmake -E rm``/``remove`` without
  ``-r``, ``shx rm`` without it, one file each (a deletion).
* ``trash``, ``trash-put``, ``gio trash``, ``gvfs-trash`` move what they are given out of the
  workspace, as ``mv app /tmp`` does: a folder is destroyed, a file deleted.
* ``git rm -r`` (not ``--cached``, ``-n``) deletes the tracked files of its pathspecs from the
  work tree, folders with their files (a destruction), and so does a glob pathspec (``git rm
  'app/*'``, which matches across folders); ``git rm FILE`` of one tracked file, whose text
  HEAD keeps, is left to the effect inspection.
"""

from __future__ import annotations

import os
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.option_words import split_options

#: The commands read here (the cheap test before any parsing).
REMOVERS: Final = frozenset(
    {"rimraf", "del-cli", "cmake", "shx", "trash", "trash-put", "gio", "gvfs-trash"}
)
_GIT_RM_VALUED: Final = frozenset({"--pathspec-from-file", "--chmod"})
_GLOB: Final = frozenset("*?[")


def removed(name: str, args: list[str], ctx: Context) -> None:
    """Record what ``name args`` deletes or destroys (module doc)."""
    record = ctx.reading
    if name in ("rimraf", "del-cli"):
        record.destroys.extend(_operands(args) or ["*"])
    elif name == "cmake":
        if args[:1] != ["-E"] or len(args) < 2:
            return
        tool, rest = args[1], args[2:]
        if tool == "remove_directory":
            record.destroys.extend(rest or ["*"])
        elif tool in ("rm", "remove"):
            options, operands = split_options(rest, frozenset())
            recursive = any(o in ("-r", "-R") or "r" in o.lower()[1:] for o in options)
            (record.destroys if recursive else record.deletes).extend(operands or ["*"])
    elif name == "shx":
        if args[:1] == ["rm"]:
            ctx.script(shlex.join(args))  # shelljs's `rm`: read as the shell's
    elif name == "gio" or name == "gvfs-trash" or name.startswith("trash"):
        if name == "gio" and args[:1] != ["trash"]:
            return
        operands = _operands(args[1:] if name == "gio" else args)
        for operand in operands:
            real = ctx.workspace_folder(operand)
            folder = real is None or os.path.isdir(real)  # (not known: a folder, maybe)
            (record.destroys if folder else record.deletes).append(operand)


def git_rm(args: list[str], ctx: Context) -> None:
    """``git rm [-r] PATHSPEC…`` (module doc); ``args``: the words after ``rm``."""
    options, operands = split_options(args, _GIT_RM_VALUED)
    if any(o in ("--cached", "-n", "--dry-run") for o in options):
        return
    recursive = any(o == "-r" or (o[:1] == "-" and o[1:2] != "-" and "r" in o) for o in options)
    if recursive:
        ctx.reading.destroys.extend(operands[:256])
    else:  # a file (its text is in HEAD: left to the effect inspection), or a glob of many
        ctx.reading.destroys.extend(s for s in operands[:256] if _GLOB & set(s) or s[:1] == ":")


def _operands(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


__all__ = ["REMOVERS", "git_rm", "removed"]
