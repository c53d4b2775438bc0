"""``git daemon`` and ``git instaweb`` serve the repository's committed files on the network:
read as the work tree's files (a committed ``.env`` among them), as ``git bundle create``
is, and a network exchange where no secret is there. Asking for their help serves nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, SECRET, safety_in, secret_workspace

NETWORK = ("warn", "warn-network")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return secret_workspace(tmp_path_factory.mktemp("servers"), {"app/main.py": "print(1)\n"})


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("clean") / "workspace"
    (root / "app").mkdir(parents=True)
    (root / "app" / "main.py").write_text("print(1)\n")
    return root


@pytest.mark.parametrize(
    "command",
    [
        "git daemon --export-all --base-path=. --detach .",
        "git daemon --export-all --reuseaddr --base-path=. --port=9419",
        "git -C . daemon --export-all",
        "git daemon --export-all",
        "git instaweb --httpd=webrick",
        "git instaweb",
    ],
)
def test_serving_the_repository_reads_its_committed_files(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == SECRET


@pytest.mark.parametrize("command", ["git daemon --export-all .", "git instaweb"])
def test_serving_a_repository_without_secrets_is_a_network_exchange(
    clean: Path, command: str
) -> None:
    assert safety_in(command, clean) == NETWORK


@pytest.mark.parametrize(
    "command", ["git daemon --help", "git instaweb -h", "git log --oneline -3", "git status"]
)
def test_help_and_ordinary_git_stay_allowed(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == ALLOWED
