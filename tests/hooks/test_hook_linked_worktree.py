"""A project that is a linked worktree: its git runs the main repository's configuration and
hooks (``<main>/.git``), outside the project, and the hook door watches them there too."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hook_processes import GIT, committed_project
from host_support import Host

from pytest_harness_audit.inspect.git_dirs import linked_git_dirs
from pytest_harness_audit.readers.verdict import Verdict


def _main_repo(main: Path) -> None:
    committed_project(main, {"README.md": "hello\n"})


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Host, Path]:
    made = Host(tmp_path)
    main = tmp_path / "main"
    _main_repo(main)
    made.project.rmdir()
    subprocess.run(["git", "worktree", "add", "-q", str(made.project)], cwd=main, check=True)
    made.start()
    return made, main


def test_a_hook_planted_in_the_main_repository_during_a_call_fails(
    linked: tuple[Host, Path],
) -> None:
    host, main = linked

    def plant() -> None:
        hook_file = main / ".git" / "hooks" / "pre-commit"
        hook_file.write_text("#!/bin/sh\ntouch ran\n")
        os.chmod(hook_file, 0o755)

    host.call(during=plant)
    host.end()
    verdict, _reasons = host.judged()
    assert verdict is Verdict.FAIL
    changed = [r for r in host.records() if "moduleGitChanged" in (r.get("effects") or {})]
    assert changed and str(main / ".git" / "hooks" / "pre-commit") in str(changed[0]["effects"])


def test_an_fsmonitor_in_the_main_repository_s_config_during_a_call_fails(
    linked: tuple[Host, Path],
) -> None:
    host, main = linked
    host.call(
        during=lambda: subprocess.run(
            ["git", "config", "core.fsmonitor", "touch ran"], cwd=main, check=True
        )
    )
    host.end()
    assert host.judged()[0] is Verdict.FAIL


def test_ordinary_git_work_in_the_worktree_passes(linked: tuple[Host, Path]) -> None:
    host, main = linked

    def work() -> None:
        (host.project / "notes.md").write_text("notes\n")
        subprocess.run([*GIT, "add", "notes.md"], cwd=host.project, check=True)
        subprocess.run([*GIT, "commit", "-qm", "notes"], cwd=host.project, check=True)
        subprocess.run(["git", "config", "user.name", "dev"], cwd=host.project, check=True)
        subprocess.run(["git", "status", "--short"], cwd=host.project, check=True)
        subprocess.run(["git", "branch", "side"], cwd=main, check=True)

    host.call(during=work)
    host.call()
    host.end()
    assert host.judged()[0] is Verdict.PASS, host.judged()


def test_the_linked_git_dirs_of_a_worktree_and_of_other_layouts(tmp_path: Path) -> None:
    main = tmp_path / "main"
    _main_repo(main)
    assert linked_git_dirs(main) == ()  # `.git` is a folder
    worktree = tmp_path / "wt"
    subprocess.run(["git", "worktree", "add", "-q", str(worktree)], cwd=main, check=True)
    found = linked_git_dirs(worktree)
    assert found == (str(main / ".git" / "worktrees" / "wt"), str(main / ".git"))
    separate = tmp_path / "separate"
    subprocess.run(
        ["git", "init", "-q", "--separate-git-dir", str(tmp_path / "gitdir"), str(separate)],
        check=True,
    )
    assert linked_git_dirs(separate) == (str(tmp_path / "gitdir"),)
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / ".git").write_text("not a pointer\n")
    assert linked_git_dirs(junk) == ()
    assert linked_git_dirs(tmp_path / "missing") == ()
