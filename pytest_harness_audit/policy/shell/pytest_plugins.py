"""The plugins pytest imports besides its test files and ``conftest.py`` files: ``-p NAME``
on its command line, in ``PYTEST_ADDOPTS`` or in the ``addopts`` of its settings file
(:mod:`.pytest_settings`), the names of ``PYTEST_PLUGINS``, and the ``pytest_plugins`` a
``conftest.py`` lists. Each is a module looked
up in the workspace root, the settings' ``pythonpath`` folders and the ``PYTHONPATH`` given
(:mod:`.pymodules`), and read as program text; ``-p no:NAME`` turns a plugin off and loads
nothing. A module pytest would not find there (an installed plugin) is not in the workspace and
is not read.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.pymodules import module_files
from pytest_harness_audit.policy.shell.pytest_settings import (
    overrides,
    settings_files,
    split_words,
)
from pytest_harness_audit.policy.shell.tomlfiles import parse_toml, table

_CONFTEST_PLUGINS: Final = re.compile(r"(?m)^pytest_plugins\s*(?::[^=\n]*)?=\s*([\[(]?[^\n]*)")
_LISTED: Final = re.compile(r"""['"]([\w.]+)['"]""")
#: Most plugin modules read for one pytest command.
MAX_PLUGINS: Final = 32


def plugins(
    args: list[str], conftests: list[str], runner: Runner, settings: dict[str, str | None]
) -> None:
    """Read the workspace modules pytest run with ``args`` loads as plugins (module doc);
    ``conftests``: the ``conftest.py`` files it collects; ``settings``: the text of each of
    :data:`~.pytest_settings.SETTINGS_FILES` at the root (``None``: not there)."""
    runner.python_startup()  # pytest is a Python process: a `PYTHONPATH` sitecustomize runs
    words = [*split_words(runner.variable("PYTEST_ADDOPTS") or ""), *args]
    found = settings_files(words, runner, settings)
    for extra in (*(f.addopts for f in found), *map(split_words, overrides(words, "addopts"))):
        words.extend(extra)
    pythonpath = [
        posixpath.normpath(posixpath.join(f.folder, p)) for f in found for p in f.pythonpath
    ]
    pythonpath += [p for value in overrides(words, "pythonpath") for p in value.split()]
    names = _plugin_options(words)
    names += [n.strip() for n in (runner.variable("PYTEST_PLUGINS") or "").split(",")]
    for conftest in conftests:
        names += _conftest_plugins(runner.workspace_text(conftest) or "")
    names += _entry_points(settings.get("pyproject.toml"))
    names = [n for n in dict.fromkeys(names) if n and not n.startswith("no:")]
    if len(names) > MAX_PLUGINS:
        runner.unknown(f"pytest loads more than {MAX_PLUGINS} plugins")
        return
    if not names:
        return
    folders = [".", *pythonpath, *runner.python_folders("", "")]
    for name in names:
        for path in module_files(name, folders):
            if runner.workspace_text(path) is not None:
                runner.load_code(path)


def _entry_points(pyproject: str | None) -> list[str]:
    """The ``pytest11`` entry points of the project (pytest loads them once it is installed,
    as in development it is): their modules."""
    if not pyproject or "pytest11" not in pyproject:
        return []
    points = table(parse_toml(pyproject), "project", "entry-points", "pytest11")
    return [str(value).split(":", 1)[0].strip() for value in points.values()]


def _plugin_options(words: list[str]) -> list[str]:
    """The ``-p NAME`` (``-pNAME``) values of pytest's words."""
    found: list[str] = []
    for index, word in enumerate(words):
        if word == "-p" and index + 1 < len(words):
            found.append(words[index + 1])
        elif word.startswith("-p") and len(word) > 2 and not word.startswith("-p="):
            found.append(word[2:])
        elif word.startswith("-p="):
            found.append(word[3:])
    return found


def _conftest_plugins(text: str) -> list[str]:
    """The modules a ``conftest.py`` names in ``pytest_plugins`` (a string or a list)."""
    if "pytest_plugins" not in text:
        return []
    found: list[str] = []
    for value in _CONFTEST_PLUGINS.findall(text):
        if value[:1] in "[(":  # a list over several lines: up to its closing bracket
            start = text.find(value)
            closer = "]" if value[0] == "[" else ")"
            end = text.find(closer, start)
            value = text[start : end if end >= 0 else start + 4096]
        found.extend(_LISTED.findall(value))
    return found


__all__ = ["MAX_PLUGINS", "plugins"]
