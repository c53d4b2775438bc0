"""``git ls-files`` listings handed to a reader: the ignored files (``-oi``), the untracked
ones of a repository with no commit yet; what ``.gitignore`` leaves out of ``-o
--exclude-standard`` is not listed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = secret_workspace(tmp_path, {"README.md": "# x\n", ".gitignore": ".env\n"})
    _git(workspace, "init", "-q")
    _git(workspace, "add", "README.md", ".gitignore")
    return workspace


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    workspace = secret_workspace(tmp_path / "fresh", {"README.md": "# x\n"})
    _git(workspace, "init", "-q")
    return workspace


@pytest.mark.parametrize(
    "command",
    [
        "git ls-files -oi --exclude-standard | xargs cat",
        "cat $(git ls-files --others --ignored --exclude-standard)",
        "git ls-files -o -i --exclude-standard | xargs head -n 3",
    ],
)
def test_ignored_files_listed_are_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("deny", "deny-secret-files")


def test_untracked_files_of_a_new_repository_are_read(fresh: Path) -> None:
    assert safety_in("cat $(git ls-files -o)", fresh) == ("deny", "deny-secret-files")


@pytest.mark.parametrize(
    "command",
    [
        "git ls-files | xargs wc -l",
        "git ls-files -o --exclude-standard | xargs cat",
        "cat $(git ls-files -c)",
        "git ls-files -oi --exclude-standard",
    ],
)
def test_listings_without_the_secret_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)
