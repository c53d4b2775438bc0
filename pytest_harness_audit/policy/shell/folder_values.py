"""Values that name a folder of the shell's own: ``${PWD%/*}``, ``$(cd ..; pwd)``,
``$(dirname "$PWD")``, ``$(realpath ..)``, ``$(readlink -f ..)``.

``rm -rf "$(cd ..; pwd)"`` deletes the folder above the workspace, the audit store beside it
included; read as a value not known, the reading saw no path at all. These values are worked
out from where the script is (:class:`~.place.Place`):

* an operator on ``$PWD`` or ``$OLDPWD`` the script did not set (``${PWD%/*}``,
  ``${OLDPWD%/*}``) is applied to the absolute folder (from the workspace root), when known;
  ``${DIRSTACK[N]}`` (and ``~N``, :mod:`.tildes`) is an entry of the directory stack;
* a command substitution of ``cd`` commands (``;``/``&&`` between them) and then ``pwd``,
  ``echo "$PWD"``, ``dirname PATH``, ``realpath PATH`` or ``readlink -f PATH`` gives that
  folder, as a path from where the script is (as ``$(pwd)`` is ``.``): the reading places it
  like any path; ``$(dirs -l +N)`` gives an entry of the stack. Links are not followed (a
  folder reached through one is read as written);
* ``$(git rev-parse --show-toplevel)`` is the workspace root (when the root holds ``.git``, a
  repository of its own, and the script is inside it, in no repository nested in it, with no
  ``GIT_DIR``/``GIT_WORK_TREE`` set), ``$(git rev-parse --show-cdup)`` the climb to it (``../``
  a folder, nothing at the top);
* ``$(dirname "$0")`` at the top of a command is ``.``: ``$0`` is the shell's own name there
  (``bash -c`` runs the command), so ``$(cd "$(dirname "$0")/.." && pwd)`` is ``..``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Final, Protocol

from pytest_harness_audit.policy.path_forms import join_path, normal_path
from pytest_harness_audit.policy.shell.fieldtext import Field
from pytest_harness_audit.policy.shell.nodes import Param, Sub, Word
from pytest_harness_audit.policy.shell.params import operated
from pytest_harness_audit.policy.shell.pipelines import own_commands
from pytest_harness_audit.policy.shell.place import Place, command_name


class Expanding(Protocol):
    """What these values need of the expander (:class:`~.expand.Expander`)."""

    root: str | None
    variables: dict[str, str]
    lists: dict[str, list[str]]
    keys: dict[str, list[str]]
    place: Place

    def expand(self, word: Word) -> list[Field]:
        """The fields of ``word``."""


_FOLDER_NAMES: Final = frozenset({"PWD", "OLDPWD", "DIRSTACK"})
_SUBSCRIPT: Final = re.compile(r"\[(-?\d{1,4})\]")
_RESOLVERS: Final = frozenset(
    {"realpath", "readlink", "dirname", "pwd", "dirs", "echo", "printf", "git"}
)
#: ``git rev-parse`` options that print where the repository's top is.
_TOP_OPTIONS: Final = frozenset({"--show-toplevel", "--show-cdup"})
_MAX_MOVES: Final = 8


def folder_operated(part: Param, expander: Expanding) -> str | None:
    """``${NAME<op>}`` (:func:`~.params.operated`), and ``${PWD<op>}``/``${OLDPWD<op>}`` of a
    script that set neither on the absolute folder (``None``: not known, no workspace root)."""
    value = operated(part, expander.variables, expander.lists, expander.keys)
    if value is not None:
        return value
    name = part.name
    if name not in _FOLDER_NAMES or name in expander.variables or part.op is None:
        return None
    place, root = expander.place, expander.root
    if name == "DIRSTACK":  # `${DIRSTACK[1]}`, `~1`: an entry of the stack
        subscript = _SUBSCRIPT.fullmatch(part.op)
        return place.entry(int(subscript[1]), root) if subscript else None
    if name == "OLDPWD":
        value = place.variable(name, root)
    elif place.unknown or not root or not root.startswith("/"):
        value = None
    else:
        value = normal_path(join_path(root, place.cwd))
    if value is None:
        return None
    return operated(dataclasses.replace(part, name=name), {name: value}, {}, {})


def folder_output(sub: Sub, expander: Expanding) -> str | None:
    """The folder ``$(cd …; pwd)``, ``$(dirname P)``, ``$(realpath P)``, ``$(readlink -f P)``,
    ``$(cd …; echo "$PWD")`` or ``$(dirs -l +N)`` prints, from where the script is (``None``:
    another substitution, or one not known)."""
    if sub.arithmetic or sub.process:
        return None
    commands = own_commands(sub)
    if not commands or len(commands) > _MAX_MOVES or not commands[-1].words:
        return None
    if any(c.piped or c.stdin is not None or c.redirects for c in commands):
        return None
    argvs: list[list[str]] = []
    for command in commands:
        if _shell_dirname(command.words, expander):
            argvs.append(["dirname", "bash"])  # `$(dirname "$0")`: of the shell's name
            continue
        fields = [field for word in command.words for field in expander.expand(word)]
        if not fields or any(field.dynamic for field in fields):
            return None
        argvs.append([field.text for field in fields])
    name = command_name(argvs[-1][0])
    if name not in _RESOLVERS:
        return None
    if name == "git":
        return _repository_top(argvs, expander)
    place = Place()  # the subshell starts where the script is
    for argv in argvs[:-1]:
        if command_name(argv[0]) != "cd":
            return None
        place.change(argv, [False] * len(argv), expander.variables)
    if place.unknown:
        return None
    words = argvs[-1][1:]
    operands = [word for word in words if not word.startswith("-") or word[1:].isdigit()]
    if name == "pwd":
        return place.cwd
    if name in ("echo", "printf"):  # `$(cd ..; echo "$PWD")`: the folder moved to
        last = commands[-1].words[-1][0] if len(commands[-1].words[-1]) == 1 else None
        pwd = isinstance(last, Param) and last.name == "PWD" and not last.opaque
        return place.cwd if pwd and "PWD" not in expander.variables else None
    if len(operands) != 1:
        return None
    if name == "dirs":  # `$(dirs -l +1)`: an entry of the script's stack
        if len(argvs) > 1 or operands[0][:1] not in "+-" or not operands[0][1:].isdigit():
            return None
        number = int(operands[0][1:])
        return expander.place.entry(number if operands[0][0] == "+" else -number - 1, expander.root)
    if name == "readlink" and not any(
        w[:1] == "-" and w[1:2] != "-" and w[-1:] in "fem" for w in words
    ):
        return None  # (`readlink LINK` prints where a link points)
    path = normal_path(join_path(place.cwd, operands[0]))
    if name != "dirname":
        return path
    if path in ("/", ".") or path == ".." or path.endswith("/.."):
        return "/" if path == "/" else normal_path(path + "/..")
    head = path.rpartition("/")[0]
    return head or ("/" if path.startswith("/") else ".")


def _shell_dirname(words: list[Word], expander: Expanding) -> bool:
    """Whether ``words`` are ``dirname "$0"`` where ``$0`` is the shell's own name (a
    command's top level, ``0`` not set by a script the reading entered)."""
    if len(words) != 2 or len(words[1]) != 1 or "0" in expander.variables:
        return False
    part = words[1][0]
    if not isinstance(part, Param) or part.name != "0" or part.op is not None:
        return False
    fields = expander.expand(words[0])
    return len(fields) == 1 and fields[0].text == "dirname"


def _repository_top(argvs: list[list[str]], expander: Expanding) -> str | None:
    """What ``$(git rev-parse --show-toplevel)`` (the workspace root, as a path from where the
    script is) or ``$(git rev-parse --show-cdup)`` (``../`` a folder up to it) prints: known
    only when the workspace root is a repository's top and the script is inside it."""
    argv = argvs[-1]
    if len(argvs) != 1 or len(argv) != 3 or argv[1] != "rev-parse" or argv[2] not in _TOP_OPTIONS:
        return None
    root, place = expander.root, expander.place
    if not root or not root.startswith("/") or place.unknown:
        return None
    if "GIT_DIR" in expander.variables or "GIT_WORK_TREE" in expander.variables:
        return None  # (the work tree they name)
    cwd = normal_path(place.cwd)
    if cwd.startswith(("/", "..")) or not os.path.exists(os.path.join(root, ".git")):
        return None  # outside the workspace, or a repository whose top is elsewhere
    parts = [] if cwd == "." else [part for part in cwd.split("/") if part]
    for end in range(len(parts), 0, -1):  # `cd vendor/lib`: a repository of its own there
        if os.path.exists(os.path.join(root, *parts[:end], ".git")):
            return None
    depth = len(parts)
    if argv[2] == "--show-cdup":
        return "../" * depth
    return "/".join([".."] * depth) or "."


__all__ = ["Expanding", "folder_operated", "folder_output"]
