"""The git a hook process runs runs none of the project's code.

A hook step lists the project's tracked files (``git ls-files``) and reads its git objects and
aliases, in the project's own repository, whose ``.git/config`` the agent can write
(``git config core.fsmonitor ./x`` reads as an ordinary command). git runs the
``core.fsmonitor`` command whenever it reads the index: the agent's program would then run
inside the hook, where it can write an answer of its own on the hook's standard output (the host
reads the JSON "on every exit code") and kill the hook, or make it hang past the host's timeout.
:func:`isolate_git` sets the key for every git the process starts, with the precedence of
``git -c`` (``GIT_CONFIG_COUNT``, git 2.31 or later), which no configuration file overrides.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

from pytest_harness_audit.inspect.git_env import ISOLATING_SETTINGS, isolating_entries

#: Configuration keys set for every git a hook process starts: those under which reading the
#: index runs a program.
SETTINGS = ISOLATING_SETTINGS


def isolate_git(environ: MutableMapping[str, str] | None = None) -> None:
    """Add :data:`SETTINGS` to ``environ`` (default ``os.environ``) after the
    ``GIT_CONFIG_COUNT`` entries it holds (a count that is not a number is replaced)."""
    env = os.environ if environ is None else environ
    env.update(isolating_entries(env))


__all__ = ["SETTINGS", "isolate_git"]
