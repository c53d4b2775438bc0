"""A command name found through a ``PATH`` that points into the workspace runs the workspace
program of that name, which is read as if run by its path; a ``PATH`` that cannot reach the
workspace, and the shell's own builtins, change nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import (
    ALLOWED,
    DESTROYS,
    SECRET,
    UNREADABLE,
    safety_in,
    secret_workspace,
    write_files,
)

from pytest_harness_audit.policy.shell.searchpath import (
    candidates,
    unknown_entry,
    workspace_entries,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(
        tmp_path,
        {
            "tidy.sh": "#!/bin/sh\nrm -rf app\n",
            "bin/tidy": "#!/bin/sh\nrm -rf app\n",
            "bin/leak": "cat .env\n",
            "bin/echo": "rm -rf app\n",
            "tools/run.py": "#!/usr/bin/env python3\nprint(open('.env').read())\n",
            "app/x.txt": "x\n",
        },
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("PATH=.:$PATH tidy.sh", DESTROYS),
        ("PATH=$PWD:$PATH tidy.sh", DESTROYS),
        ("PATH=$(pwd):$PATH tidy.sh", DESTROYS),
        ("PATH=`pwd`/bin:$PATH tidy", DESTROYS),
        ("D=bin; PATH=$D:$PATH tidy", DESTROYS),
        ("PATH=bin:$PATH tidy", DESTROYS),
        ("PATH=$PATH:bin leak", SECRET),
        ('PATH="${PWD}/bin:${PATH}" tidy', DESTROYS),
        ('export PATH="$(pwd)/bin:$PATH"; tidy', DESTROYS),
        ("export PATH=$PWD/bin:$PATH; cd app; tidy", DESTROYS),
        ("PATH=bin:$PATH; export PATH; tidy", DESTROYS),
        ("declare -x PATH=bin:$PATH; tidy", DESTROYS),
        ("export PATH=~/bin:$PATH; tidy", DESTROYS),
        ("cd app && PATH=../bin:$PATH tidy", DESTROYS),
        ("env PATH=bin:$PATH tidy", DESTROYS),
        ("sudo env PATH=bin:$PATH tidy", DESTROYS),
        ("PATH=bin:$PATH sh -c tidy", DESTROYS),
        ('PATH=bin:$PATH bash -c "leak"', SECRET),
        ("PATH=tools:$PATH run.py", SECRET),
        ("PATH=.:$PATH .env", SECRET),
        ("echo 'cat .env' > bin/new; PATH=bin:$PATH new", SECRET),
        # a name hashed to a workspace file
        ("hash -p ./tidy.sh ls; ls", DESTROYS),
        ("hash -p bin/leak git; git status", SECRET),
        ('hash -p "$(pwd)/tidy.sh" make; make', DESTROYS),
    ],
)
def test_a_workspace_program_found_through_path_is_read(
    root: Path, command: str, expected: tuple[str, str | None]
) -> None:
    assert safety_in(command, root) == expected


@pytest.mark.parametrize(
    "command",
    [
        "PATH=/usr/local/bin:$PATH ls",
        "export PATH=$HOME/.local/bin:$PATH; pytest -q",
        "export PATH=/opt/bin:$PATH; make",
        "PATH=node_modules/.bin:$PATH jest",
        "PATH=bin:$PATH echo hi",
        "PATH=bin:$PATH ls",
        "PATH=$PATH:$GOPATH/bin go build ./...",
        "tidy",
        "hash -r; ls",
        "hash ls; ls",
    ],
)
def test_a_path_that_reaches_no_workspace_program_is_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED


@pytest.mark.parametrize(
    "command", ["D=$(cat dir.txt); PATH=$D:$PATH tidy", 'PATH="$(cat d):$PATH" tidy']
)
def test_a_path_folder_built_at_run_time_is_unreadable(root: Path, command: str) -> None:
    assert safety_in(command, root) == UNREADABLE


@pytest.mark.parametrize(
    "command",
    [
        'export PATH="$(go env GOPATH)/bin:$PATH"; ls',
        'PATH="$(cat d):$PATH" cd app',
        "export PATH=$GOBIN:$PATH; make",
    ],
)
def test_a_built_path_that_looks_nothing_up_is_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED


def test_an_activated_virtual_environment_runs_its_programs(root: Path) -> None:
    activate = (
        f'VIRTUAL_ENV="{root}/.venv"\nexport VIRTUAL_ENV\n'
        'PATH="$VIRTUAL_ENV/bin:$PATH"\nexport PATH\n'
    )
    write_files(
        root,
        {
            ".venv/bin/activate": activate,
            ".venv/bin/tidy": "#!/bin/sh\nrm -rf app\n",
            ".venv/bin/pytest": "#!/usr/bin/python3\nfrom pytest import console_main\n",
        },
    )
    assert safety_in("source .venv/bin/activate && tidy", root) == DESTROYS
    assert safety_in(". .venv/bin/activate; tidy", root) == DESTROYS
    assert safety_in("source .venv/bin/activate && pytest -q", root) == ALLOWED
    assert safety_in("tidy", root) == ALLOWED


def test_entries_that_cannot_reach_the_workspace_are_left_out() -> None:
    entries = workspace_entries("/usr/bin:$PATH:/w/bin:bin::$(…)/tools:~other/bin", "/w")
    assert entries == ["/w/bin", "bin", ".", "tools"]


def test_entries_built_at_run_time() -> None:
    assert unknown_entry("$(…):$PATH", set())
    assert unknown_entry("$D:$PATH", {"D"})
    assert not unknown_entry("$D:$PATH", set())  # of the environment
    assert not unknown_entry("$(…)/bin:$PATH", set())  # a known ending: read as `bin`
    assert not unknown_entry("bin:$PATH", {"PATH"})


def test_builtins_and_paths_are_not_looked_up() -> None:
    assert candidates("echo", "bin", "/w", ("",)) == []
    assert candidates("./x", "bin", "/w", ("",)) == []
    assert candidates("x", "bin:.:/w/tools", "/w", ("", "app")) == [
        "bin/x",
        "app/bin/x",
        "x",
        "app/x",
        "tools/x",
    ]
