"""The plugins pytest imports besides its test files and ``conftest.py`` files: ``-p NAME``
on its command line, in ``PYTEST_ADDOPTS`` or in the ``addopts`` of its settings file
(``pytest.ini``, ``.pytest.ini``, ``pyproject.toml`` ``[tool.pytest.ini_options]``,
``tox.ini`` ``[pytest]``, ``setup.cfg`` ``[tool:pytest]``, or ``-c FILE``), the names of
``PYTEST_PLUGINS``, and the ``pytest_plugins`` a ``conftest.py`` lists. Each is a module looked
up in the workspace root, the settings' ``pythonpath`` folders and the ``PYTHONPATH`` given
(:mod:`.pymodules`), and read as program text; ``-p no:NAME`` turns a plugin off and loads
nothing. A module pytest would not find there (an installed plugin) is not in the workspace and
is not read.
"""

from __future__ import annotations

import configparser
import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.pymodules import module_files
from pytest_harness_audit.policy.shell.tomlfiles import parse_toml, table

#: The files pytest may take its settings from.
SETTINGS_FILES: Final = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_SECTIONS: Final = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest",
             "setup.cfg": "tool:pytest"}  # fmt: skip
_CONFTEST_PLUGINS: Final = re.compile(r"(?m)^pytest_plugins\s*(?::[^=\n]*)?=\s*([\[(]?[^\n]*)")
_LISTED: Final = re.compile(r"""['"]([\w.]+)['"]""")
#: Most plugin modules read for one pytest command.
MAX_PLUGINS: Final = 32


def plugins(
    args: list[str], conftests: list[str], runner: Runner, settings: dict[str, str | None]
) -> None:
    """Read the workspace modules pytest run with ``args`` loads as plugins (module doc);
    ``conftests``: the ``conftest.py`` files it collects; ``settings``: the text of each of
    :data:`SETTINGS_FILES` (``None``: not there)."""
    runner.python_startup()  # pytest is a Python process: a `PYTHONPATH` sitecustomize runs
    addopts, pythonpath = _settings(args, runner, settings)
    words = list(args)
    for extra in (runner.variable("PYTEST_ADDOPTS"), *addopts, *_overrides(words, "addopts")):
        if extra:
            words.extend(_split(extra))
    pythonpath += [f for value in _overrides(words, "pythonpath") for f in value.split()]
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


def _overrides(words: list[str], name: str) -> list[str]:
    """The values ``-o NAME=VALUE`` (``--override-ini``) gives the setting ``name``."""
    found: list[str] = []
    for index, word in enumerate(words):
        value = None
        if word in ("-o", "--override-ini") and index + 1 < len(words):
            value = words[index + 1]
        elif word.startswith(("--override-ini=", "-o")) and word not in ("-o",):
            value = word.partition("=")[2] if word.startswith("--") else word[2:].lstrip("=")
        if value is not None and value.partition("=")[0].strip() == name:
            found.append(value.partition("=")[2])
    return found


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


def _settings(
    args: list[str], runner: Runner, settings: dict[str, str | None]
) -> tuple[list[str], list[str]]:
    """``(addopts, pythonpath)`` of every settings file pytest may read (``-c FILE`` too):
    the union, as which one pytest takes depends on where it runs."""
    addopts: list[str] = []
    pythonpath: list[str] = []
    given = _config_option(args)
    for path in (given, *SETTINGS_FILES) if given else SETTINGS_FILES:
        text = settings[path] if path in settings else runner.workspace_text(path)
        if not text or ("addopts" not in text and "pythonpath" not in text):
            continue
        values = _values(path.endswith(".toml"), path.rsplit("/", 1)[-1], text)
        if values is None:
            runner.unknown(f"pytest reads a settings file the reading cannot parse: {path}")
            continue
        options, folders = values
        addopts.extend(options)
        pythonpath.extend(folders)
    return addopts, pythonpath


def _config_option(args: list[str]) -> str | None:
    for index, word in enumerate(args):
        if word in ("-c", "--config-file") and index + 1 < len(args):
            return args[index + 1]
        if word.startswith("--config-file="):
            return word.partition("=")[2]
    return None


#: The values of settings files read, by kind, name and text (read by command after command).
_VALUES: Final[dict[tuple[bool, str, str], tuple[list[str], list[str]] | None]] = {}


def _values(toml: bool, name: str, text: str) -> tuple[list[str], list[str]] | None:
    key = (toml, name, text)
    if key not in _VALUES:
        if len(_VALUES) >= 64:
            _VALUES.clear()
        _VALUES[key] = _toml_values(text) if toml else _ini_values(name, text)
    return _VALUES[key]


def _toml_values(text: str) -> tuple[list[str], list[str]] | None:
    document = parse_toml(text)
    if document is None:
        return None
    section = table(document, "tool", "pytest", "ini_options")
    return _words(section.get("addopts")), _words(section.get("pythonpath"))


def _ini_values(path: str, text: str) -> tuple[list[str], list[str]] | None:
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    sections = [_SECTIONS.get(path.rsplit("/", 1)[-1], "pytest"), "pytest", "tool:pytest"]
    for section in dict.fromkeys(sections):
        if parser.has_section(section):
            addopts = parser.get(section, "addopts", fallback="")
            pythonpath = parser.get(section, "pythonpath", fallback="")
            return [addopts], pythonpath.split()
    return [], []


def _words(value: object) -> list[str]:
    if isinstance(value, str):
        return _split(value)
    if isinstance(value, list):
        return [str(item) for item in value]
    return []


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


__all__ = ["MAX_PLUGINS", "SETTINGS_FILES", "plugins"]
