"""Commands a program runs from its environment (``GIT_EXTERNAL_DIFF=…``, ``GIT_PAGER=…``,
``EDITOR=…``) or from a configuration file it is pointed at (``GIT_CONFIG_GLOBAL=x.cfg``,
``include.path``) are read as scripts (:mod:`pytest_harness_audit.policy.shell.gitenv`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in

from pytest_harness_audit.policy.shell.gitenv import config_file

PLANT = '[core]\n\tfsmonitor = "cp .env /tmp/x; false"\n'


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "x.cfg").write_text(PLANT, encoding="utf-8")
    (workspace / "ok.cfg").write_text("[user]\n\tname = Bot\n[core]\n\tpager = less -R\n")
    return workspace


def _decision(command: str, root: Path) -> tuple[str, str | None]:
    return safety_in(command, root)


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("GIT_EXTERNAL_DIFF='sh -c \"cp .env /tmp/x\"' git diff", "deny-secret-files"),
        ("GIT_PAGER='cat .env' git -p log -1", "deny-secret-files"),
        ("GIT_SSH_COMMAND='rm -rf app' git fetch origin", "deny-destructive-commands"),
        ("EDITOR='cp .env /tmp/x' git commit", "deny-secret-files"),
        ("env GIT_ASKPASS='cat .env' git push origin", "deny-secret-files"),
        ("export GIT_PAGER='cat .env'; git -p log", "deny-secret-files"),
        ("BASH_ENV=./evil.sh bash -c true; BASH_ENV='cat .env' bash -c true", "deny-secret-files"),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor "
            "GIT_CONFIG_VALUE_0='cp .env /tmp/x' git status",
            "deny-secret-files",
        ),
        ("GIT_CONFIG_GLOBAL=x.cfg git status", "deny-secret-files"),
        ("git config include.path ../x.cfg && git status", "deny-secret-files"),
        ("git -c include.path=$PWD/x.cfg status", "deny-secret-files"),
        (
            "printf '%s' '[core] pager = cat .env' > y.cfg; GIT_CONFIG_GLOBAL=y.cfg git -p log",
            "deny-secret-files",
        ),
    ],
)
def test_a_command_from_the_environment_or_a_config_file_is_read(
    root: Path, command: str, rule: str
) -> None:
    assert _decision(command, root) == ("deny", rule)


@pytest.mark.parametrize(
    "command",
    [
        "GIT_PAGER=cat git log --oneline -3",
        "EDITOR=true git commit --allow-empty -m x",
        "GIT_CONFIG_GLOBAL=/dev/null git status",
        "GIT_CONFIG_GLOBAL=ok.cfg git status",
        "export PAGER=less",
        "LANG=C git status",
        "GIT_AUTHOR_NAME='Pricing Bot' git commit --allow-empty -m x",
    ],
)
def test_benign_environments(root: Path, command: str) -> None:
    assert _decision(command, root) == ("allow", None)


class _Scripts:
    def __init__(self) -> None:
        self.scripts: list[str] = []

    def script(self, text: str) -> None:
        self.scripts.append(text)

    def unknown(self, why: str) -> None:
        self.scripts.append(f"unknown: {why}")

    def note(self, note: str) -> None:
        del note


def test_config_file_keys() -> None:
    runner = _Scripts()
    text = (
        "# a comment\n[alias]\n\ttidy = !rm -rf app ; gone\n"
        '[filter "x"]\n\tclean = "cat .env"\n[core] pager = less\n[user]\n\tname = Bot\n'
        "[include]\n\tpath = nested.cfg\n"
    )
    nested = {".git/nested.cfg": "[core]\n\tsshCommand = ssh -i key\n"}
    config_file(text, runner, nested.get, 0)
    top = 'cd "$(…)" && '  # where git runs a shell alias: the top of a repository not known
    assert runner.scripts == [f"{top}rm -rf app", "cat .env", "less", "ssh -i key"]
