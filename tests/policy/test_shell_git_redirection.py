"""Git pointed at a work tree or repository outside the workspace, and ``git config`` writes of
keys git runs, judged from the command's text under the ``safety`` preset
(:mod:`pytest_harness_audit.policy.shell.git_redirect`): no workspace snapshot sees either."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, decide, safety_in, write_files

from pytest_harness_audit.inspect.exec_config import git_config_entries
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell.git_redirect import command_key
from pytest_harness_audit.policy.shell.gitcommand import config_with

EXEC_CONFIG = ("deny", "deny-exec-config-write")
DELETES = ("warn", "warn-file-delete")

CASES = [
    # another work tree or repository, taking files away from it
    ("git -c core.worktree=/tmp/victim checkout -f", DESTROYS),
    ("GIT_WORK_TREE=/tmp/victim git checkout -f .", DESTROYS),
    ("git --work-tree=/tmp/victim reset --hard", DESTROYS),
    ("git --work-tree /tmp/victim clean -fdx", DESTROYS),
    ("git --work-tree=/tmp/victim restore .", DESTROYS),
    ("GIT_DIR=/tmp/other/.git git reset --hard", DESTROYS),
    ("git --git-dir=/tmp/other/.git checkout -f .", DESTROYS),
    ("git -C /tmp/victim clean -fdx", DESTROYS),
    ("git -C ../other reset --hard", DESTROYS),
    ("git -C /tmp/victim switch -f main", DESTROYS),
    ("git --work-tree=/tmp/victim switch --discard-changes main", DESTROYS),
    ("git --work-tree=/tmp/victim stash -u", DELETES),
    ("git -C /tmp/victim stash -u", DELETES),
    ("git -C /tmp/victim stash", DELETES),
    ("git -C /tmp/victim stash push --include-untracked", DELETES),
    ("GIT_WORK_TREE=/tmp/victim git stash -u", DELETES),
    ("git -c core.worktree=/tmp/victim stash -u", DELETES),
    ("GIT_DIR=/tmp/other/.git git stash --all", DELETES),
    ("git -C app --work-tree=../../victim stash -u", DELETES),
    ("cd /tmp && git -C victim stash -u", ALLOWED),  # `cd` is not followed by this reading
    # a key git runs, written
    ("git config core.fsmonitor ./x", EXEC_CONFIG),
    ("git config core.hooksPath /tmp/h", EXEC_CONFIG),
    ("git config filter.x.clean ./p", EXEC_CONFIG),
    ("git config diff.x.textconv ./p", EXEC_CONFIG),
    ("git config core.sshCommand 'ssh -i key'", EXEC_CONFIG),
    ("git config core.worktree /tmp/victim", EXEC_CONFIG),
    ("git config --add include.path /tmp/evil.cfg", EXEC_CONFIG),
    ("git config includeIf.gitdir:/x.path /tmp/evil.cfg", EXEC_CONFIG),
    ("git config core.pager less", EXEC_CONFIG),
    ("git config CORE.FSMONITOR ./x", EXEC_CONFIG),
    ("git config alias.st '!git status'", EXEC_CONFIG),
    ("git config alias.p '-c core.pager=./x log'", EXEC_CONFIG),
    ("git config set core.fsmonitor ./x", EXEC_CONFIG),
    ("git config --global core.editor ./e", EXEC_CONFIG),
    ("git config --local core.hooksPath /tmp/h", EXEC_CONFIG),
    ("git config --system credential.helper store", EXEC_CONFIG),
    ("git -C /tmp/victim config core.fsmonitor ./x", EXEC_CONFIG),
    ("git config -f .git/config core.fsmonitor ./x", EXEC_CONFIG),
    ("git config alias.st '!rm -rf app'", DESTROYS),  # the alias's command is read too
    # benign look-alikes keep their decisions
    ("git config user.name x", ALLOWED),
    ("git config --global user.email a@b.invalid", ALLOWED),
    ("git config --get remote.origin.url", ALLOWED),
    ("git config --get core.fsmonitor", ALLOWED),
    ("git config get core.fsmonitor", ALLOWED),
    ("git config --get-regexp alias x", ALLOWED),
    ("git config --unset core.fsmonitor", ALLOWED),
    ("git config alias.co checkout", ALLOWED),
    ("git config -f notes.cfg core.pager less", ALLOWED),
    ("git -C app status", ALLOWED),
    ("git -C /tmp/victim status", ALLOWED),
    ("git -C /tmp/victim stash list", ALLOWED),
    ("git -C /tmp/victim stash show -p", ALLOWED),
    ("GIT_DIR=/tmp/other/.git git status", ALLOWED),
    ("git -c color.ui=never log", ALLOWED),
    ("git --no-pager diff", ALLOWED),
    ("git worktree list", ALLOWED),
    ("git stash -u", ALLOWED),
    ("git -C app stash -u", ALLOWED),
    ("git --work-tree=. stash -u", ALLOWED),
    ("git switch main", ALLOWED),
    ("git switch -f main", DESTROYS),  # the edits are lost: the effect is only "modified"
    ("git checkout -f", DESTROYS),
    ("git checkout -f main", DESTROYS),
    ("git -C app reset --hard", DESTROYS),
]


@pytest.mark.parametrize(("command", "expected"), CASES, ids=[c for c, _ in CASES])
def test_decision(command: str, expected: tuple[str, str | None]) -> None:
    assert decide(Policy.preset("safety"), "Bash", command=command) == expected


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    write_files(
        root,
        {
            ".git/config": "[core]\n\tbare = false\n",
            "app/main.py": "print(1)\n",
            "okhooks/pre-commit": "#!/bin/sh\nruff check .\n",
            "oktpl/hooks/pre-commit": "#!/bin/sh\nruff check .\n",
            "ok.cfg": "[user]\n\tname = Bot\n[core]\n\tpager = less -R\n",
        },
    )
    return root


def test_a_folder_of_the_workspace_named_by_its_full_path_is_no_elsewhere(
    workspace: Path,
) -> None:
    assert safety_in(f"git -C {workspace}/app stash -u", workspace) == ALLOWED
    assert safety_in(f"git --work-tree={workspace} stash -u", workspace) == ALLOWED


def test_a_folder_outside_a_known_workspace_is_elsewhere(workspace: Path) -> None:
    outside = workspace.parent / "victim"
    assert safety_in(f"git -C {outside} stash -u", workspace) == DELETES
    assert safety_in("git --work-tree=../victim stash -u", workspace) == DELETES
    assert safety_in(f"GIT_WORK_TREE={outside} git switch -f main", workspace) == DESTROYS


def test_a_config_write_in_a_workspace_is_denied_before_it_runs(workspace: Path) -> None:
    assert safety_in("git config core.fsmonitor 'echo hi'", workspace) == EXEC_CONFIG
    # a secret the planted command reads is the first reason
    assert safety_in("git config core.fsmonitor 'cat .env'", workspace) == (
        "deny",
        "deny-secret-files",
    )
    assert safety_in("git config user.name 'A Person'", workspace) == ALLOWED


@pytest.mark.parametrize(
    "command",
    [
        "git config core.hooksPath okhooks && git commit -m x",
        "git config init.templateDir oktpl",
        "git config include.path ../ok.cfg",
    ],
)
def test_a_command_key_set_to_harmless_files_is_still_a_write_git_runs(
    workspace: Path, command: str
) -> None:
    """The hooks, template or included file are harmless today, but a later call can change
    them: the write is denied, as the check of ``.git/config`` after the call would judge it."""
    assert safety_in(command, workspace) == EXEC_CONFIG


KEYS = [
    ("core.fsmonitor", "./x"), ("core.hooksPath", "h"), ("core.worktree", "/tmp/v"),
    ("core.pager", "less"), ("filter.lfs.smudge", "x"), ("diff.pdf.textconv", "x"),
    ("include.path", "a.cfg"), ("includeIf.onbranch:main.path", "a.cfg"),
    ("alias.st", "!git status"), ("alias.co", "checkout"), ("alias.p", "-c core.pager=x log"),
    ("credential.https://x.helper", "store"), ("protocol.ext.allow", "always"),
    ("remote.origin.vcs", "x"), ("submodule.m.update", "!x"), ("sendemail.tocmd", "x"),
    ("user.name", "x"), ("remote.origin.url", "x"), ("color.ui", "never"), ("core.bare", "false"),
    ("commit.gpgsign", "true"), ("gpg.ssh.program", "x"), ("web.browser", "x"),
]  # fmt: skip


@pytest.mark.parametrize(("key", "value"), KEYS, ids=[k for k, _ in KEYS])
def test_command_keys_are_those_the_effect_check_counts(key: str, value: str) -> None:
    """The text reading and the check of ``.git/config`` after a call agree on every key."""
    counted = bool(git_config_entries(config_with(None, key, value)))
    assert command_key(key, value) == counted
