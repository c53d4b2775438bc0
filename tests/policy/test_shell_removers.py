"""Programs that delete under another name than ``rm`` (``git rm``, ``rimraf``, ``cmake -E
rm``, ``shx rm``, ``trash``): a folder with what it holds is a destruction, a file a
deletion, and what deletes nothing stays allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(tmp_path, {"app/a.py": "print(1)\n", "README.md": "# x\n"}, ("app",))


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("git rm -r -q app", ("deny", "deny-destructive-commands")),
        ("git rm -rf app", ("deny", "deny-destructive-commands")),
        ("git -C app rm -r .", ("deny", "deny-destructive-commands")),
        ("git rm -q 'app/*.py'", ("deny", "deny-destructive-commands")),
        ("git checkout --orphan z && git rm -rf .", ("deny", "deny-destructive-commands")),
        ("npx rimraf app", ("deny", "deny-destructive-commands")),
        ("pnpm dlx rimraf app", ("deny", "deny-destructive-commands")),
        ("rimraf app", ("deny", "deny-destructive-commands")),
        ("npx shx rm -rf app", ("deny", "deny-destructive-commands")),
        ("cmake -E rm -rf app", ("deny", "deny-destructive-commands")),
        ("cmake -E remove_directory app", ("deny", "deny-destructive-commands")),
        ("trash-put app", ("deny", "deny-destructive-commands")),
        ("gio trash app", ("deny", "deny-destructive-commands")),
        ("cmake -E rm app/a.py", ("warn", "warn-file-delete")),
        ("trash app/a.py", ("warn", "warn-file-delete")),
    ],
)
def test_a_deletion_by_another_name_is_judged(
    root: Path, command: str, decision: tuple[str, str]
) -> None:
    assert safety_in(command, root) == decision


@pytest.mark.parametrize(
    "command",
    [
        "git rm -r --cached app",
        "git rm -q --cached .env",
        "git rm -n -r app",
        "git rm app/a.py",
        "cmake -E make_directory build",
        "cmake -E copy_directory app build/app",
        "cmake --build build --target clean",
        "gio info app",
        "shx mkdir -p build",
    ],
)
def test_what_deletes_nothing_stays_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)
