"""Git pointed at a work tree or repository outside the workspace, and ``git config`` writes of
the keys git runs.

* **Another work tree**: ``--work-tree=DIR``, ``GIT_WORK_TREE=DIR``, ``-c core.worktree=DIR``,
  ``--git-dir=DIR``/``GIT_DIR=DIR`` (its work tree) or ``-C DIR`` outside the workspace: no
  snapshot sees what the command does there, so a subcommand that takes files away from it is
  read from its text. ``checkout -f``, ``reset --hard``, ``clean -f`` and ``restore`` are
  destructive wherever they run (:func:`.tools.git`); here ``switch -f``/``--discard-changes``
  is too, and ``stash`` (``push``, ``save``, ``-u``) deletes the files it puts away.
* **A key git runs, written**: ``git config KEY VALUE`` (``--add``, ``set``, ``--global``,
  ``--system``, ``--file F``) of a *command key* writes the file as ``>> .git/config`` does
  (the keys of :mod:`pytest_harness_audit.inspect.exec_config`, which judges the file after the
  call: ``core.fsmonitor``, ``core.hooksPath``, ``core.worktree``, filters, ``include.path``, an
  alias that runs a command …). ``-c KEY=VALUE`` writes nothing: the command it runs is read as
  a script (:mod:`.embedded`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pytest_harness_audit.policy.git_command_keys import command_key as command_key

#: ``git config`` options and subcommands that read or remove, never set, a value.
_NOT_SETTING: Final = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
     "-l", "--list", "--unset", "--unset-all", "--remove-section", "--rename-section",
     "-e", "--edit", "get", "list", "unset", "remove-section", "rename-section", "edit"}
)  # fmt: skip
#: The system configuration file ``git config --system`` writes.
SYSTEM_CONFIG: Final = "/etc/gitconfig"
#: ``git stash`` subcommands that put no work-tree change away.
_STASH_OTHERS: Final = frozenset(
    {"list", "show", "apply", "pop", "drop", "clear", "branch", "create", "store"}
)


def config_written(options: list[str], operands: list[str], written: str | None) -> str | None:
    """The file ``git config`` writes (``written``: the one of :func:`.gitcommand.config_target`,
    ``None`` for ``--system``, the system file), or ``None`` when it only reads or removes."""
    if any(word in _NOT_SETTING for word in [*options, *operands[:1]]):
        return None
    if written is None and "--system" in options:
        return SYSTEM_CONFIG
    return written


def outside(path: str, workspace_folder: Callable[[str], str | None], known: bool) -> bool:
    """Whether the folder ``path`` is outside the workspace: a relative path that does not climb
    out is inside; another, outside unless the workspace (``known``) holds it."""
    if not path:
        return False
    climbs = path == ".." or path.startswith("../") or "/../" in path or path.endswith("/..")
    if not (path.startswith(("/", "~", "$")) or climbs):
        return False
    return not known or workspace_folder(path) is None


def elsewhere(
    head: list[str],
    settings: list[tuple[str, str]],
    folder: str,
    variable: Callable[[str], str | None],
    is_outside: Callable[[str], bool],
) -> bool:
    """Whether git, with its global options ``head``, the settings it takes and its ``-C``
    folder, works in a work tree or repository outside the workspace."""
    places = [folder, variable("GIT_WORK_TREE") or "", variable("GIT_DIR") or ""]
    for index, word in enumerate(head):
        name, equals, value = word.partition("=")
        if name in ("--work-tree", "--git-dir"):
            given = value if equals else (head[index + 1] if index + 1 < len(head) else "")
            places.append(given if given.startswith("/") or not folder else f"{folder}/{given}")
    places.extend(value for key, value in settings if key.lower() == "core.worktree")
    return any(is_outside(place) for place in places)


def foreign_rewrite(sub: str, rest: list[str]) -> str:
    """What ``git SUB REST`` does to the files of the work tree it runs in, beyond what its
    reading in the workspace records: ``"destroy"`` (``switch -f``), ``"delete"`` (``stash``
    putting changes away) or ``""``."""
    if sub == "switch" and any(w in ("-f", "--force", "--discard-changes") for w in rest):
        return "destroy"
    if sub == "stash" and (not rest or rest[0] not in _STASH_OTHERS):
        return "delete"
    return ""


__all__ = [
    "SYSTEM_CONFIG",
    "command_key",
    "config_written",
    "elsewhere",
    "foreign_rewrite",
    "outside",
]
