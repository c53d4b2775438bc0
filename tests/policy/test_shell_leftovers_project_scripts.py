"""Scripts of a Python project's tool tables run by name — ``pdm run``, ``hatch run``, ``rye
run``, ``pixi run``, ``poe`` — and entry points run through a launcher (``uv run NAME``): what
the table says runs is read, a name the table does not hold is a command as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET, UNREADABLE, safety_in, secret_workspace

PYPROJECT = """\
[project]
name = "x"
[project.scripts]
tidy = "pkg.cli:main"
[tool.poetry.scripts]
ptidy = "pkg.cli:main"
[tool.pdm.scripts]
lint = "flake8"
clean = {shell = "rm -rf app"}
leak = {call = "pkg.cli:main"}
all = {composite = ["lint", "clean"]}
envy = {cmd = "echo hi", env_file = ".env"}
listed = {cmd = ["rm", "-rf", "app"]}
pre_test = "cat .env"
test = "pytest -q"
[tool.hatch.envs.default.scripts]
wipe = "rm -rf app"
multi = ["echo a", "cat .env"]
again = "wipe --force"
ok = "echo ok"
[tool.hatch.envs.docs.scripts]
build = "cat .env"
[tool.poe]
envfile = ".env"
[tool.poe.tasks]
nuke = "rm -rf app"
seq = {sequence = ["fine", "nuke"]}
inline = {sequence = ["fine", {shell = "rm -rf app"}]}
fine = "echo fine"
scr = {script = "pkg.cli:main"}
sh = {shell = "cat .env"}
ex = {expr = "open('.env').read()"}
[tool.rye.scripts]
r = {chain = ["ok", "cat .env"]}
"""
PIXI = """\
[tasks]
wipe = "rm -rf app"
dep = {cmd = "echo x", depends-on = ["wipe"]}
fine = "echo fine"
[feature.dev.tasks]
leak = "cat .env"
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(
        tmp_path,
        {
            "pyproject.toml": PYPROJECT,
            "pixi.toml": PIXI,
            "src/pkg/__init__.py": "",
            "src/pkg/cli.py": "print(open('.env').read())\n",
            "app/x.txt": "x\n",
        },
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pdm run clean", DESTROYS),
        ("pdm clean", DESTROYS),
        ("pdm run leak", SECRET),
        ("pdm run all", DESTROYS),
        ("pdm run envy", SECRET),
        ("pdm run listed", DESTROYS),
        ("pdm run test", SECRET),
        ("hatch run wipe", DESTROYS),
        ("hatch run multi", SECRET),
        ("hatch run again", DESTROYS),
        ("hatch run docs:build", SECRET),
        ("poe nuke", DESTROYS),
        ("poe seq", DESTROYS),
        ("poe inline", DESTROYS),
        ("poe scr", SECRET),
        ("poe sh", SECRET),
        ("poe ex", SECRET),
        ("python -m poethepoet nuke", DESTROYS),
        ("pixi run wipe", DESTROYS),
        ("pixi run dep", DESTROYS),
        ("pixi run leak", SECRET),
        ("uv run tidy", SECRET),
        ("poetry run ptidy", SECRET),
        ("rye run r", SECRET),
    ],
)
def test_a_project_script_is_read(
    root: Path, command: str, expected: tuple[str, str | None]
) -> None:
    assert safety_in(command, root) == expected


@pytest.mark.parametrize(
    "command",
    [
        "pdm run lint",
        "hatch run ok",
        "pixi run fine",
        "uv run pytest",
        "pdm run python -V",
        "hatch run python -V",
        "uv sync",
        "pdm install",
    ],
)
def test_benign_project_scripts_are_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED


def test_poe_loads_its_global_env_file_for_any_task(root: Path) -> None:
    assert safety_in("poe fine", root) == SECRET  # [tool.poe] envfile = ".env"
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    (root / "pyproject.toml").write_text(text.replace('envfile = ".env"', ""), encoding="utf-8")
    assert safety_in("poe fine", root) == ALLOWED


def test_pdm_shared_settings_load_their_env_file(tmp_path: Path) -> None:
    text = '[tool.pdm.scripts]\n_ = {env_file = {override = ".env"}}\nlint = "flake8"\n'
    root = secret_workspace(tmp_path, {"pyproject.toml": text})
    assert safety_in("pdm run lint", root) == SECRET
    assert safety_in("pdm run python -V", root) == ALLOWED


def test_a_table_that_is_not_toml_is_unreadable(tmp_path: Path) -> None:
    root = secret_workspace(tmp_path, {"pyproject.toml": "[tool.pdm.scripts\nx = 1\n"})
    assert safety_in("pdm run x", root) == UNREADABLE


def test_scripts_that_run_each_other_without_end_are_bounded(tmp_path: Path) -> None:
    root = secret_workspace(
        tmp_path, {"pyproject.toml": '[tool.hatch.envs.default.scripts]\na = "a --again"\n'}
    )
    assert safety_in("hatch run a", root) == UNREADABLE
