"""The settings pytest takes from its files, as the readings of a pytest run need them
(:mod:`.pytest_plugins`, :mod:`.pytest_runs`).

pytest reads one settings file: the first of ``pytest.toml``, ``.pytest.toml``, ``pytest.ini``,
``.pytest.ini``, ``pyproject.toml`` (``[tool.pytest]`` or ``[tool.pytest.ini_options]``),
``tox.ini`` (``[pytest]``) and ``setup.cfg`` (``[tool:pytest]``) found in the folder of the paths
it is given or above, or the file ``-c FILE`` (``--config-file``) names. Which one that is
depends on where it runs, so every such file of the workspace root, of the folders named on
its command line and of the folders above them is read, and their settings taken together.
"""

from __future__ import annotations

import configparser
import posixpath
import shlex
from typing import Final, NamedTuple

from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.tomlfiles import parse_toml, table

#: The files pytest may take its settings from, by name.
SETTINGS_FILES: Final = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini",
                  "pyproject.toml", "tox.ini", "setup.cfg")  # fmt: skip
_SECTIONS: Final = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest",
             "setup.cfg": "tool:pytest"}  # fmt: skip
#: The settings read besides ``addopts`` and ``pythonpath`` (each a path).
_PATH_KEYS: Final = ("cache_dir", "log_file")
#: Most folders whose settings files are looked for, and options whose value is no path.
_MAX_FOLDERS: Final = 8
_VALUED: Final = frozenset({"-k", "-m", "-c", "-p", "-o", "-W", "--rootdir", "--confcutdir",
                     "--basetemp", "--config-file", "--override-ini", "--deselect",
                     "--ignore", "--ignore-glob", "--junitxml", "--junit-xml", "--html",
                     "--log-file", "--report-log", "--cov", "--cov-report"})  # fmt: skip


class Settings(NamedTuple):
    """What one settings file gives pytest: the folder it is in (pytest's root folder when
    it is the one read), its ``addopts`` words, its ``pythonpath`` folders and the path
    settings it holds (``cache_dir``, ``log_file``)."""

    folder: str
    addopts: list[str]
    pythonpath: list[str]
    paths: dict[str, str]


def settings_files(
    words: list[str], runner: Context, known: dict[str, str | None] | None = None
) -> list[Settings]:
    """The settings of every file pytest run with ``words`` (its ``PYTEST_ADDOPTS`` and
    command-line words) may read (module doc); ``known``: the text of root files already read
    (``None``: not there). A file that does not parse makes the command unreadable."""
    given = _config_option(words)
    paths = [given] if given else []
    for folder in _folders(words):
        paths.extend(posixpath.join(folder, name) if folder else name for name in SETTINGS_FILES)
    found: list[Settings] = []
    for path in paths:
        if known is not None and path in known:
            text = known[path]
        else:
            text = runner.workspace_text(path) if path == given else runner.settings_text(path)
        if not text or not any(key in text for key in ("addopts", "pythonpath", *_PATH_KEYS)):
            continue
        values = _values(path.endswith(".toml"), path.rsplit("/", 1)[-1], text)
        if values is None:
            runner.unknown(f"pytest reads a settings file the reading cannot parse: {path}")
            continue
        found.append(Settings(posixpath.dirname(path) or ".", *values))
    return found


def overrides(words: list[str], name: str) -> list[str]:
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


def split_words(text: str) -> list[str]:
    """The words of an ``addopts``-like value, as pytest splits it (``shlex``)."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _config_option(words: list[str]) -> str | None:
    for index, word in enumerate(words):
        if word in ("-c", "--config-file") and index + 1 < len(words):
            return words[index + 1]
        if word.startswith("--config-file="):
            return word.partition("=")[2]
        if word.startswith("-c") and len(word) > 2 and word[2] != "-":
            return word[2:]
    return None


def _folders(words: list[str]) -> list[str]:
    """The workspace root (``""``), then the folders of the paths pytest is given and the
    folders above them (paths from the root, none outside it)."""
    folders: list[str] = [""]
    for index, word in enumerate(words):
        if word == "--" or len(folders) >= _MAX_FOLDERS:
            break
        if word.startswith("-") or (index and words[index - 1] in _VALUED):
            continue
        path = posixpath.normpath(word.split("::", 1)[0])
        if path.startswith(("/", "..", "~", "$")) or path == ".":
            continue
        folder = posixpath.dirname(path) if path.endswith(".py") else path
        while folder and folder not in folders and len(folders) < _MAX_FOLDERS:
            folders.append(folder)
            folder = posixpath.dirname(folder)
    return folders


#: The values of settings files read, by kind, name and text (read by command after command).
_VALUES: Final[dict[tuple[bool, str, str], tuple[list[str], list[str], dict[str, str]] | None]] = {}


def _values(toml: bool, name: str, text: str) -> tuple[list[str], list[str], dict[str, str]] | None:
    key = (toml, name, text)
    if key not in _VALUES:
        if len(_VALUES) >= 64:
            _VALUES.clear()
        _VALUES[key] = _toml_values(text) if toml else _ini_values(name, text)
    return _VALUES[key]


def _toml_values(text: str) -> tuple[list[str], list[str], dict[str, str]] | None:
    """``[tool.pytest.ini_options]``, ``[tool.pytest]`` (pytest's TOML form) and ``[pytest]``
    (``pytest.toml``), taken together."""
    document = parse_toml(text)
    if document is None:
        return None
    addopts: list[str] = []
    pythonpath: list[str] = []
    paths: dict[str, str] = {}
    for section in (
        table(document, "tool", "pytest", "ini_options"),
        table(document, "tool", "pytest"),
        table(document, "pytest"),
    ):
        addopts += _words(section.get("addopts"))
        pythonpath += _words(section.get("pythonpath"))
        paths.update({k: section[k] for k in _PATH_KEYS if isinstance(section.get(k), str)})
    return addopts, pythonpath, paths


def _ini_values(name: str, text: str) -> tuple[list[str], list[str], dict[str, str]] | None:
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    for section in dict.fromkeys((_SECTIONS.get(name, "pytest"), "pytest", "tool:pytest")):
        if parser.has_section(section):
            addopts = parser.get(section, "addopts", fallback="")
            pythonpath = parser.get(section, "pythonpath", fallback="")
            paths = {k: parser.get(section, k).strip() for k in _PATH_KEYS
                     if parser.has_option(section, k)}  # fmt: skip
            return split_words(addopts), pythonpath.split(), paths
    return [], [], {}


def _words(value: object) -> list[str]:
    if isinstance(value, str):
        return split_words(value)
    if isinstance(value, list):
        return [str(item) for item in value]
    return []


__all__ = ["SETTINGS_FILES", "Settings", "overrides", "settings_files", "split_words"]
