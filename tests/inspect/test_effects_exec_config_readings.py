"""The readings behind the exec-config effects: which paths are which kind, which keys of a git
configuration are commands, which call texts are install commands."""

from __future__ import annotations

from pytest_harness_audit.inspect.exec_config import (
    git_config_entries,
    installs_hooks,
    installs_packages,
    is_exec_config,
    is_host_settings,
    is_protected_by_kind,
)


def test_git_config_entries_read_what_git_reads() -> None:
    text = (
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        "[Core]fsmonitor=x\n"
        '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n'
        "[user]\n\tname = A \\\n\tPerson\n"
        "; comment\n# comment\n"
        "[alias]\n\tco = checkout\n\tx = !sh\n"
    )
    assert git_config_entries(text) == [
        "core.fsmonitor=x",
        "filter.lfs.clean=git-lfs clean -- %f",
        "alias.x=!sh",
    ]


def test_which_texts_install() -> None:
    assert installs_hooks("pre-commit install")
    assert installs_hooks("pre-commit install --hook-type pre-push")
    assert installs_hooks("npx husky")
    assert not installs_hooks("pre-commit install && python3 -c 'x'")
    assert not installs_hooks("echo pre-commit install")
    assert installs_packages("pip install -r requirements.txt")
    assert installs_packages("python3 -m pip install -e .[dev]")
    assert not installs_packages("pip install x; python3 -c 'y'")


def test_which_paths_are_kinds() -> None:
    assert is_exec_config(".git/hooks/post-merge")
    assert is_exec_config("sub/.git/config")
    assert is_exec_config(".gitconfig")
    assert is_exec_config(".config/git/config")
    assert not is_exec_config("docs/gitconfig.md")
    assert is_exec_config(".venv/lib/python3.12/site-packages/sitecustomize.py")
    assert not is_exec_config(".git/hooks/post-merge.sample")
    assert not is_exec_config("docs/.git-config")
    assert not is_exec_config("lib/site-packages-notes/x.pth")
    assert is_host_settings(".claude/settings.local.json")
    assert not is_host_settings(".claude/agents/x.md")
    assert not is_host_settings(".vscode/settings.json")


def test_the_one_search_agrees_with_the_kinds() -> None:
    paths = [
        ".git/hooks",
        ".git/hooks/pre-commit",
        ".git/hooks/pre-commit.sample",
        ".git/hooks/sub/x",
        ".git/hooksx",
        "sub/.git/config.worktree",
        "x/.gitconfig",
        "x.gitconfig",
        "v/lib/site-packages/a.pth",
        "site-packages/a/b.pth",
        "web/.mcp.json",
        "a.mcp.json",
        ".claude/settings.jsonx",
        "README.md",
    ]
    kinds = {p: is_exec_config(p) or is_host_settings(p) for p in paths}
    assert {p: is_protected_by_kind(p) for p in paths} == kinds
    assert sum(kinds.values()) == 6
