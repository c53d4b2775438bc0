"""``only_searches`` through a function the text defines and a ``bash -c`` script of searches
(:mod:`pytest_harness_audit.policy.shell.search_only`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.policy.shell.search_only import only_searches


@pytest.mark.parametrize(
    "command",
    [
        "f() { grep -rn TODO .; }; f | head",
        "function f { grep -rn TODO .; }; f",
        "f() { g; }; g() { grep -rn TODO .; }; f | head",
        "bash -c 'grep -rn TODO .' | head",
        "sh -c 'grep -rn TODO .'",
        "bash -c 'f() { grep -rn TODO .; }; f' | head",
    ],
)
def test_wrapped_searches_are_only_searches(command: str, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("K=1\n")
    assert only_searches(command, str(tmp_path))


@pytest.mark.parametrize(
    "command",
    [
        "f() { grep -rh KEY .; }; f | base64",
        "f() { grep -rn TODO .; python3 x.py; }; f | head",
        "f() { grep -rn TODO .; }; f .env",
        "grep() { cat .env; }; grep -rn TODO .",
        "bash -c 'grep -rn TODO . ; cat x' | head",
        "bash -c 'grep -rn TODO .' x .env",
        "bash -c 'f() { grep -rn TODO .; cat x; }; f' | head",
        'bash -c "$(cat script)"',
        "BASH_ENV=x bash -c 'grep -rn TODO .'",
        "zsh -c 'grep -rn TODO .'",
        "f() { grep -rn TODO .; }; python3 x.py",
    ],
)
def test_a_wrapper_running_anything_else_is_not(command: str, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("K=1\n")
    assert not only_searches(command, str(tmp_path))
