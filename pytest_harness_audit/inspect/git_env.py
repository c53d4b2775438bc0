"""The environment of every git the harness runs itself in a workspace the agent can write.

The agent can write the repository's ``.git/config`` (``git config core.fsmonitor ./x`` reads
as an ordinary command). git runs the ``core.fsmonitor`` program whenever it reads the index, so
the harness's own ``git ls-files`` or ``git diff`` would run the agent's program outside any
call's window: in the test process, the proxy or a hook (where it could write an answer of its
own, see :mod:`pytest_harness_audit.doors.hook_git`). :data:`GIT_ISOLATION_ENV` turns it off with
the precedence of ``git -c`` (``GIT_CONFIG_COUNT``, git 2.31 or later), which no configuration
file overrides, and leaves out the user's global and system configuration, so their settings
cannot change commit ids or output either.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: Configuration keys set for every git the harness starts: those under which reading the
#: index runs a program.
ISOLATING_SETTINGS = (("core.fsmonitor", "false"),)


def _config_entries(settings: tuple[tuple[str, str], ...], first: int = 0) -> dict[str, str]:
    entries = {"GIT_CONFIG_COUNT": str(first + len(settings))}
    for offset, (key, value) in enumerate(settings):
        entries[f"GIT_CONFIG_KEY_{first + offset}"] = key
        entries[f"GIT_CONFIG_VALUE_{first + offset}"] = value
    return entries


GIT_ISOLATION_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    # `git status` must not take the index lock as a side effect.
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    **_config_entries(ISOLATING_SETTINGS),
}
"""Environment entries for every git command the harness runs in a workspace."""


def isolating_entries(environ: Mapping[str, str]) -> dict[str, str]:
    """The ``GIT_CONFIG_*`` entries that add :data:`ISOLATING_SETTINGS` after the ones
    ``environ`` already holds (a count that is not a number is replaced); none when they are
    its last entries already (a process that isolates itself again adds nothing)."""
    given = environ.get("GIT_CONFIG_COUNT", "0")
    count = int(given) if given.isdigit() else 0
    first = count - len(ISOLATING_SETTINGS)
    if first >= 0 and all(
        environ.get(f"GIT_CONFIG_KEY_{first + offset}") == key
        and environ.get(f"GIT_CONFIG_VALUE_{first + offset}") == value
        for offset, (key, value) in enumerate(ISOLATING_SETTINGS)
    ):
        return {}
    return _config_entries(ISOLATING_SETTINGS, count)


#: What runs a filter driver's program: each is emptied (git then runs nothing for it).
_FILTER_PROGRAMS = ("clean", "smudge", "process")


def without_filters(listing: str) -> dict[str, str]:
    """:data:`GIT_ISOLATION_ENV` plus the settings that empty the program of every filter
    driver ``listing`` names (the output of ``git config -z --get-regexp '^filter[.]'``) and make
    it optional: git runs a driver's ``clean`` program on the working tree's files whenever it
    compares them with a commit, so the harness's own diff would run the agent's program."""
    drivers = set()
    for entry in listing.split("\0"):
        key = entry.split("\n", 1)[0]
        section, dot, rest = key.partition(".")
        name, _, _variable = rest.rpartition(".")
        if section.lower() == "filter" and dot and name:
            drivers.add(name)
    settings = list(ISOLATING_SETTINGS)
    for name in sorted(drivers):
        settings += [(f"filter.{name}.{program}", "") for program in _FILTER_PROGRAMS]
        settings.append((f"filter.{name}.required", "false"))
    return {**GIT_ISOLATION_ENV, **_config_entries(tuple(settings))}


__all__ = ["GIT_ISOLATION_ENV", "ISOLATING_SETTINGS", "isolating_entries", "without_filters"]
