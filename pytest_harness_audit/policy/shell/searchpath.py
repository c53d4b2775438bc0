"""Workspace programs found through ``PATH``: ``PATH=.:$PATH tidy.sh``, ``PATH=bin:$PATH x``,
``export PATH="$(pwd)/bin:$PATH"; x``.

The shell looks a command name up in each ``PATH`` entry in turn (relative entries from where
it is at that moment, ``PATH=dir cmd`` with the new value already); a name that a workspace
entry holds is read as that workspace program (:func:`~.projects.program_file`). Entries that
cannot point into the workspace (``$PATH``, ``/usr/local/bin``) are skipped (``~`` is taken as the
workspace root, as :mod:`.place` takes it);
one built at run time is read by its known ending (``$(pwd)/bin`` → ``bin``), as a path built
at run time is. Every workspace entry holding the name is read, not only the first the shell
would take: one reading too many, never too few. Shell builtins and keywords are not looked up
(the shell runs its own). Nothing of this runs unless the command sets ``PATH``.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from pytest_harness_audit.policy.shell.native_loaders import NATIVE_ENV
from pytest_harness_audit.policy.shell.nodes import Lit, Param, Word

#: Names the shell runs itself, never from ``PATH``.
SHELL_BUILTINS: Final = frozenset(
    {"alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
     "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval",
     "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history",
     "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd",
     "read", "readarray", "readonly", "return", "set", "shift", "shopt", "source", "suspend",
     "test", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias",
     "unset", "wait", ".", ":", "[", "[[", "]]", "{", "}", "!", "if", "then", "else", "elif",
     "fi", "case", "esac", "for", "while", "until", "do", "done", "function", "select",
     "time", "coproc"}
)  # fmt: skip
#: Variables holding folder lists a command looks names up in (:mod:`.lookups`).
PATH_LISTS: Final = frozenset({"PATH", "PYTHONPATH", "NODE_PATH"})
#: Variables of a command's environment whose unknown parts are kept as their ``$NAME`` text:
#: the folder lists, and the native libraries a program loads (:mod:`.native_loaders`).
KEPT_AS_TEXT: Final = PATH_LISTS | NATIVE_ENV
#: The variables of :data:`NATIVE_ENV` whose own value a guard adds only when it is set.
_GUARDED: Final = NATIVE_ENV


def kept_text(name: str, word: Word, variables: dict[str, str]) -> Word:
    """The value ``word`` of ``NAME=word`` (a variable of :data:`KEPT_AS_TEXT`) to expand for
    its text: ``${NAME:+:$NAME}`` of a ``NAME`` not known kept as written, so that the reading
    of :mod:`.native_loaders` can tell it (no entry when ``NAME`` is unset) from ``:$NAME`` (an
    empty entry then: the current folder)."""
    if name not in _GUARDED or name in variables:
        return word
    kept: Word = []
    for part in word:
        if isinstance(part, Param) and part.name == name and part.alternate and part.nonempty:
            inner = "".join(
                f"${each.name}"
                if isinstance(each, Param)
                and each.name == name
                and each.alternate is None
                and each.default is None
                and not each.opaque
                else each.text
                if isinstance(each, Lit)
                else "\0"
                for each in part.alternate
            )
            if inner in (f":${name}", f"${name}:"):
                kept.append(Lit(f"${{{name}:+{inner}}}", True))
                continue
        kept.append(part)
    return kept


#: Most ``PATH`` entries looked at.
MAX_ENTRIES = 32
_VARIABLE: Final = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_UNKNOWN_ONLY: Final = re.compile(r"\$(?:\(…\)|\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|.)")


def workspace_entries(value: str, root: str) -> list[str]:
    """The entries of a ``PATH`` value that may be workspace folders: absolute ones inside
    ``root``, relative ones as written (``.`` for an empty one), and one built at run time as
    its known ending (``$(pwd)/bin`` → ``bin``)."""
    found: list[str] = []
    inside = root.rstrip("/") + "/"
    for entry in value.split(":")[:MAX_ENTRIES]:
        if not entry or entry == ".":
            found.append(".")  # an empty entry is the current folder too
        elif entry == "~" or entry.startswith("~/"):  # home is taken as the root (:mod:`.place`)
            found.append(posixpath.join(root, entry[2:]))
        elif entry.startswith("~"):
            continue  # another user's home
        elif entry.startswith("/"):
            if (entry.rstrip("/") + "/").startswith(inside):
                found.append(entry)
        elif "$" in entry:
            ending = _UNKNOWN_ONLY.split(entry)[-1]
            if ending.startswith("/") and len(ending) > 1:  # `$(pwd)/bin`, `$VENV/bin`
                found.append(ending.lstrip("/"))
        else:
            found.append(entry)
    return found


def unknown_entry(value: str, built: set[str]) -> bool:
    """Whether a ``PATH`` value has an entry the command built at run time with no known
    ending (``$(cat dir.txt)``, or ``$D`` of a ``D`` the script so set, named in ``built``): a
    folder that may be any of the workspace's. A variable of the environment (``$GOBIN``) is
    not the command's doing."""
    if "$" not in value:
        return False
    for entry in value.split(":")[:MAX_ENTRIES]:
        unknown = "$(…)" in entry or any(
            name in built for name in _VARIABLE.findall(entry) if name != "PATH"
        )
        if unknown:
            ending = _UNKNOWN_ONLY.split(entry)[-1]
            if not (ending.startswith("/") and len(ending) > 1):
                return True
    return False


def candidates(name: str, value: str, root: str, bases: tuple[str, ...]) -> list[str]:
    """The workspace files a command ``name`` may be found at through ``value`` (a ``PATH``),
    as paths from the workspace root: a relative entry from each of ``bases`` (folders of the
    workspace: where the script is now, and where it was when it set ``PATH``, as ``$PWD/bin``
    was expanded then)."""
    if not name or "/" in name or name in SHELL_BUILTINS:
        return []
    found: dict[str, None] = {}
    top = root.rstrip("/")
    for entry in workspace_entries(value, root):
        if entry.startswith("/"):
            entry = posixpath.relpath(entry, top)
            bases = ("",)
        for base in bases:
            path = posixpath.normpath(posixpath.join(base, entry, name))
            if not path.startswith("../"):
                found[path] = None
    return list(found)


__all__ = [
    "KEPT_AS_TEXT",
    "MAX_ENTRIES",
    "PATH_LISTS",
    "SHELL_BUILTINS",
    "candidates",
    "kept_text",
    "unknown_entry",
    "workspace_entries",
]
