"""What the agent can write in the repository does not hide a change from
``harness.changed_files()`` and ``harness.diff()``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import git
import pytest

from pytest_harness_audit.session import workspace
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.workspace import WorkspaceError


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    """A session on a fresh python-service workspace."""
    made = Harness.create(tmp_path, template="python-service", policy="audit-only")
    yield made
    made.close()


def _edit_pricing(harness: Harness) -> None:
    pricing = harness.root / "app" / "pricing.py"
    pricing.write_text(pricing.read_text() + "BACKDOOR = True\n", encoding="utf-8")


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_file_the_index_marks_unchanged_still_counts(harness: Harness, flag: str) -> None:
    _edit_pricing(harness)
    harness.repo.git.update_index(flag, "app/pricing.py")
    assert "app/pricing.py" in harness.changed_files()
    assert "+BACKDOOR = True" in harness.diff()


def test_a_new_file_the_repository_excludes_still_counts(harness: Harness) -> None:
    (harness.root / "backdoor.py").write_text("import os\n", encoding="utf-8")
    exclude = harness.root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.write_text("backdoor.py\n", encoding="utf-8")
    assert "backdoor.py" in harness.changed_files()
    assert "+import os" in harness.diff()


def test_moving_the_base_ref_after_committing_hides_nothing(harness: Harness) -> None:
    _edit_pricing(harness)
    repo: git.Repo = harness.repo
    repo.git.add("--all")
    repo.git.commit(
        "-m",
        "agent work",
        env={
            "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@b",
            "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@b",
        },
    )
    repo.git.update_ref("refs/harness-audit/base", "HEAD")  # where the base ref once was
    assert harness.changed_files() == ["app/pricing.py"]
    assert "+BACKDOOR = True" in harness.diff()


def test_ignored_files_and_the_staging_area_are_as_before(harness: Harness) -> None:
    cache = harness.root / "app" / "__pycache__"
    cache.mkdir()
    (cache / "x.pyc").write_bytes(b"ignored by .gitignore")
    (harness.root / "new.txt").write_text("x\n", encoding="utf-8")
    staged = harness.repo.git.ls_files("--stage")
    assert harness.changed_files() == ["new.txt"]
    assert harness.repo.git.ls_files("--stage") == staged


@pytest.mark.slow
def test_a_fifo_gitignore_ends_in_one_line_not_a_hang(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace, "COMPARE_TIMEOUT_S", 2.0)
    (harness.root / ".gitignore").unlink()
    os.mkfifo(harness.root / ".gitignore")
    with pytest.raises(WorkspaceError, match=r"^git could not compare the workspace with its base"):
        harness.changed_files()
