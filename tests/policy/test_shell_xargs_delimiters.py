"""``xargs -0`` and ``xargs -d X`` hand a command the items between NULs (or ``X``s), blanks
and all: ``echo 'rm -rf app' | xargs -0 sh -c`` runs ``rm -rf app``, not ``rm``. Ordinary
NUL-separated and line-separated deletions keep their verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(tmp_path, {"a.txt": "a\n"}, ("app",))


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("echo 'rm -rf app' | xargs -0 sh -c", "deny-destructive-commands"),
        ("printf 'rm -rf app' | xargs --null sh -c", "deny-destructive-commands"),
        ("echo 'rm -rf app' | xargs -r0 sh -c", "deny-destructive-commands"),
        ("echo 'rm -rf app' | xargs -d '\\n' sh -c", "deny-destructive-commands"),
        ("echo 'rm -rf app' | xargs --delimiter='\\n' bash -c", "deny-destructive-commands"),
        ("echo 'cat .env' | xargs -0 sh -c", "deny-secret-files"),
    ],
)
def test_a_delimited_item_is_one_argument(root: Path, command: str, rule: str) -> None:
    assert safety_in(command, root) == ("deny", rule)


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("printf 'a.txt\\nb c.txt\\n' | xargs -d '\\n' rm", ("warn", "warn-file-delete")),
        ("find . -name '*.pyc' -print0 | xargs -0 rm -f", ("warn", "warn-file-delete")),
        ("echo 'rm -rf app' | xargs -n10 echo", ("allow", None)),
        ("echo 'x y' | xargs -0 echo", ("allow", None)),
    ],
)
def test_ordinary_delimited_input_keeps_its_verdict(
    root: Path, command: str, verdict: tuple[str, str | None]
) -> None:
    assert safety_in(command, root) == verdict
