"""The git part of a command's reading context: the variables a command is given, the
repository git works in, and the configuration ``git config`` writes (:mod:`.gitenv`,
:mod:`.gitcommand`)."""

from __future__ import annotations

import posixpath
from typing import Protocol

from pytest_harness_audit.policy.shell.embedded import Runner
from pytest_harness_audit.policy.shell.expand import Expander
from pytest_harness_audit.policy.shell.gitcommand import config_with, existing_text
from pytest_harness_audit.policy.shell.gitenv import (
    environment,
    include,
    relevant,
    repository,
    repository_config,
)
from pytest_harness_audit.policy.shell.streams import remember_write


class _Host(Runner, Protocol):
    """What the git readings need of the context they are part of."""

    env: dict[str, str | None]
    made: Expander | None
    _root: str | None

    @property
    def expander(self) -> Expander:
        """The script's expander (made when first asked for)."""
        ...

    def workspace_text(self, path: str) -> str | None:
        """The text of a workspace file, when the reading can see it."""
        ...


class GitReadings:
    """The git readings of a command's context (a mixin: the context holds the state)."""

    __slots__ = ()

    def environment(self: _Host, variables: dict[str, str | None]) -> None:
        """The command runs with ``variables`` added to its environment (:mod:`.gitenv`)."""
        self.env.update(variables)
        if any(relevant(name) for name in variables):
            inherited = self.made.variables if self.made is not None else {}
            environment(variables, inherited, self, self.workspace_text)

    def variable(self: _Host, name: str) -> str | None:
        """The value of a variable the command sees, when known."""
        if name in self.env:
            return self.env[name]
        return self.made.variables.get(name) if self.made is not None else None

    def repository(self: _Host, git_dir: str) -> None:
        """Git works in the repository ``git_dir``: its hooks and configuration."""
        repository(git_dir, self, self.workspace_text)

    def config_include(self: _Host, key: str, value: str) -> bool:
        """A git configuration ``include.path``: read the included file."""
        return include(key, value, self, self.workspace_text)

    def config_written(self: _Host, path: str, key: str, value: str) -> None:
        """``git config`` sets ``key`` in the file ``path``: the later git commands of the
        same command read the file with it."""
        text = config_with(self.workspace_text(path), key, value)
        remember_write(self.expander, path, text, append=False)

    def repository_config(self: _Host, sub: str, folder: str) -> None:
        """``git SUB`` run in ``folder`` (``-C``): the repository's hooks and configuration
        (none without a workspace to read them from)."""
        if (self.made.root if self.made is not None else self._root) is not None:
            expander = self.expander
            text = existing_text(expander, self.workspace_text)
            here = expander.place.here or ""
            inside = "" if folder.startswith("/") else posixpath.join(here, folder)
            inside = posixpath.normpath(inside) if inside else ""
            levels = 0 if inside in ("", ".") or inside.startswith("..") else inside.count("/") + 1
            home = "../" * (here.count("/") + 1) if here not in ("", ".") else ""
            repository_config(sub, folder, self, text, levels, home)


__all__ = ["GitReadings"]
