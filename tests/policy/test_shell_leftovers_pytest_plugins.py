"""pytest imports the plugins it is told of — ``-p NAME``, ``PYTEST_ADDOPTS``, ``addopts`` of
its settings files, ``PYTEST_PLUGINS`` and ``pytest_plugins`` in a ``conftest.py`` — so a
workspace module named there is read as program text; a plugin turned off (``-p no:x``) or
installed (not a workspace file) loads nothing the reading can see."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, SECRET, UNREADABLE, safety_in, secret_workspace

EVIL = "print(open('.env').read())\n"
BASE = {
    "evil.py": EVIL,
    "lib/libevil.py": EVIL,
    "plugins/ev/__init__.py": EVIL,
    "tests/test_a.py": "def test_x():\n    pass\n",
}


def workspace(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    return secret_workspace(tmp_path, {**BASE, **(extra or {})})


@pytest.mark.parametrize(
    "command",
    [
        "pytest -p evil",
        "pytest -pevil tests",
        "python -m pytest -p evil",
        "uv run pytest -p evil -q",
        'PYTEST_ADDOPTS="-p evil" pytest',
        'export PYTEST_ADDOPTS="-p evil"; pytest -q',
        "PYTEST_PLUGINS=plugins.ev pytest",
        "PYTHONPATH=lib pytest -p libevil",
        'pytest -o addopts="-p evil" -q',
        "pytest --override-ini=addopts=-pevil",
        "pytest -o pythonpath=lib -p libevil",
    ],
)
def test_a_plugin_named_on_the_command_line_is_read(tmp_path: Path, command: str) -> None:
    assert safety_in(command, workspace(tmp_path)) == SECRET


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\naddopts = -q\n    -p evil\n"),
        (".pytest.ini", "[pytest]\naddopts = -p evil\n"),
        (
            "pyproject.toml",
            '[tool.pytest.ini_options]\naddopts = ["-p", "libevil"]\npythonpath = ["lib"]\n',
        ),
        ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = "-q -p evil"\n'),
        ("setup.cfg", "[tool:pytest]\naddopts = -p evil\n"),
        ("tox.ini", "[pytest]\naddopts = -p evil\n"),
        ("pytest.toml", '[pytest]\naddopts = ["-p", "evil"]\n'),
        (".pytest.toml", '[pytest]\naddopts = ["-p", "libevil"]\npythonpath = ["lib"]\n'),
        ("pyproject.toml", '[tool.pytest]\naddopts = ["-p", "evil"]\n'),
        ("tests/pytest.ini", "[pytest]\naddopts = -p plugins.ev\n"),
        ("conftest.py", 'pytest_plugins = "evil"\n'),
        ("tests/conftest.py", 'pytest_plugins = [\n    "plugins.ev",\n]\n'),
        ("conftest.py", 'pytest_plugins = ("pytester", "evil")\n'),
        (
            "pyproject.toml",
            '[project]\nname = "x"\n[project.entry-points.pytest11]\nmine = "plugins.ev"\n',
        ),
    ],
)
def test_a_plugin_named_in_a_settings_file_is_read(tmp_path: Path, name: str, text: str) -> None:
    assert safety_in("pytest -q tests", workspace(tmp_path, {name: text})) == SECRET


def test_a_settings_file_given_by_option_is_read(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"cfg.ini": "[pytest]\naddopts = -p evil\n"})
    assert safety_in("pytest -c cfg.ini tests", root) == SECRET
    assert safety_in("pytest tests", root) == ALLOWED


def test_too_many_plugins_is_unreadable(tmp_path: Path) -> None:
    options = " ".join(f"-p p{i}" for i in range(40))
    assert safety_in(f"pytest {options} -p evil", workspace(tmp_path)) == UNREADABLE


def test_a_settings_file_that_cannot_be_parsed_is_unreadable(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"pyproject.toml": "[tool.pytest.ini_options\naddopts = 1\n"})
    assert safety_in("pytest -q tests", root) == UNREADABLE


@pytest.mark.parametrize(
    "command",
    [
        "pytest -p no:cacheprovider",
        "pytest -p pytester",
        "pytest -q tests",
        "pytest -p no:evil tests",
        'PYTEST_ADDOPTS="-p no:randomly" pytest tests',
        "pytest -o xfail_strict=true -q tests",
    ],
)
def test_benign_plugin_options_are_allowed(tmp_path: Path, command: str) -> None:
    root = workspace(
        tmp_path,
        {
            "conftest.py": 'pytest_plugins = ["pytester"]\n',
            "pyproject.toml": (
                "[tool.pytest.ini_options]\naddopts = \"-p no:cacheprovider -m 'not slow'\"\n"
            ),
        },
    )
    assert safety_in(command, root) == ALLOWED
