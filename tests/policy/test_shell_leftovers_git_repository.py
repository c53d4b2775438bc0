"""The repository git works in, found as git finds it: above the folder it runs in, through a
variable set and exported in two steps, with configuration files included relative to the file
that includes them, a worktree's ``config.worktree`` and the XDG global file."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, SECRET, safety_in, secret_workspace

HEAD = "ref: refs/heads/main\n"
LEAK_CONFIG = "[core]\n\tfsmonitor = cat .env\n"
LEAK_HOOK = "#!/bin/sh\ncat .env\n"


def workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    return secret_workspace(tmp_path, {"sub/deeper/x.txt": "x\n", **files})


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "cd sub && git status",
        "cd sub/deeper && git log",
        "git -C sub status",
        "git -C sub/deeper diff",
        "cd sub; git -C deeper status",
    ],
)
def test_the_repository_above_the_folder_is_read(tmp_path: Path, command: str) -> None:
    root = workspace(tmp_path, {".git/HEAD": HEAD, ".git/config": LEAK_CONFIG})
    assert safety_in(command, root) == SECRET


@pytest.mark.parametrize(
    "command",
    ["git -C sub commit -m x", "cd sub && git commit -m x", "cd sub/deeper && git commit -m x"],
)
def test_a_nested_repository_runs_its_own_hooks(tmp_path: Path, command: str) -> None:
    root = workspace(
        tmp_path,
        {
            "sub/.git/HEAD": HEAD,
            "sub/.git/config": "[core]\n\tbare = false\n",
            "sub/.git/hooks/pre-commit": LEAK_HOOK,
        },
    )
    assert safety_in(command, root) == SECRET


def test_the_root_repository_of_a_subfolder_is_the_root_one(tmp_path: Path) -> None:
    # the workspace's own hooks are protected files, not read on each command (as at the root)
    root = workspace(
        tmp_path,
        {
            ".git/HEAD": HEAD,
            ".git/config": "[core]\n\tbare = false\n",
            ".git/hooks/pre-commit": LEAK_HOOK,
        },
    )
    assert safety_in("git commit -m x", root) == ALLOWED
    assert safety_in("cd sub && git commit -m x", root) == ALLOWED
    assert safety_in("git -C sub commit -m x", root) == ALLOWED


@pytest.mark.parametrize(
    "command",
    [
        "GIT_DIR=other; export GIT_DIR; git status",
        "GIT_DIR=other; git status",
        "declare -x GIT_DIR=other; git status",
        "GIT_DIR=other; declare -x GIT_DIR; git status",
        "HOME=cfg; git status",
    ],
)
def test_variables_set_then_exported_point_git_elsewhere(tmp_path: Path, command: str) -> None:
    root = workspace(
        tmp_path,
        {"other/HEAD": HEAD, "other/config": LEAK_CONFIG, "cfg/.gitconfig": LEAK_CONFIG},
    )
    assert safety_in(command, root) == SECRET


@pytest.mark.parametrize(
    "files",
    [
        {  # an include relative to the including file, not to the repository
            ".git/config": "[include]\n\tpath = ../cfg/a.cfg\n",
            "cfg/a.cfg": "[include]\n\tpath = b.cfg\n",
            "cfg/b.cfg": LEAK_CONFIG,
        },
        {
            ".git/config": "[extensions]\n\tworktreeConfig = true\n",
            ".git/config.worktree": LEAK_CONFIG,
        },
        {".git/config": "[core]\n\tbare = false\n", ".config/git/config": LEAK_CONFIG},
    ],
)
def test_configuration_git_reads_besides_the_repository_file(
    tmp_path: Path, files: dict[str, str]
) -> None:
    root = workspace(tmp_path, {".git/HEAD": HEAD, **files})
    assert safety_in("git status", root) == SECRET
    assert safety_in("cd sub && git status", root) == SECRET


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "cd sub && git status",
        "git -C sub log --oneline",
        "X=1; export X; git status",
        "GIT_PAGER=cat git log -1",
        "cd sub/deeper && git diff",
    ],
)
def test_ordinary_git_in_a_repository_without_hooks_is_allowed(
    tmp_path: Path, command: str
) -> None:
    root = workspace(
        tmp_path,
        {
            ".git/HEAD": HEAD,
            ".git/config": "[core]\n\tbare = false\n[include]\n\tpath = ../cfg/a.cfg\n",
            "cfg/a.cfg": "[user]\n\tname = x\n",
        },
    )
    assert safety_in(command, root) == ALLOWED
