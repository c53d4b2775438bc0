"""Hard links to protected files named by a call's parameters, found before the call runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_harness_audit.inspect.aliases import linked_params
from pytest_harness_audit.inspect.effects import WorkspaceSnapshot


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (tmp_path / "SOUL.md").write_text("careful\n")
    (tmp_path / "README.md").write_text("# demo\n")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{}\n")
    return tmp_path


class Snapshots:
    """A snapshot source that counts how often it was asked."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.taken = 0

    def __call__(self) -> WorkspaceSnapshot:
        self.taken += 1
        return WorkspaceSnapshot.take(self.root, tracked=False)


@pytest.mark.parametrize(
    "target", [".git/config", "SOUL.md", ".claude/settings.json"], ids=["git", "persona", "host"]
)
def test_a_link_to_a_protected_file_names_it(root: Path, target: str) -> None:
    os.link(root / target, root / "notes.cfg")
    params = {"file_path": "notes.cfg", "content": "x"}
    aliased, links = linked_params(str(root), params, Snapshots(root))
    assert links == (("notes.cfg", target),)
    assert aliased == {"file_path": target, "content": "x"}
    absolute = {"path": str(root / "notes.cfg")}
    assert linked_params(str(root), absolute, Snapshots(root))[0] == {"path": target}


def test_a_link_made_after_the_snapshot_is_found_by_its_inode(root: Path) -> None:
    before = WorkspaceSnapshot.take(root, tracked=False)
    os.link(root / ".git" / "config", root / "late.cfg")
    _, links = linked_params(str(root), {"file_path": "late.cfg"}, lambda: before)
    assert links == (("late.cfg", ".git/config"),)


def test_ordinary_files_take_no_snapshot(root: Path) -> None:
    snapshots = Snapshots(root)
    params = {"file_path": "README.md", "other": "missing.txt", "n": 3}
    assert linked_params(str(root), params, snapshots) == (params, ())
    assert snapshots.taken == 0  # one link only: nothing to look up
    os.link(root / "README.md", root / "copy.md")
    assert linked_params(str(root), {"file_path": "copy.md"}, snapshots) == (
        {"file_path": "copy.md"},
        (),
    )
    assert snapshots.taken == 1


def test_what_is_written_is_no_path(root: Path) -> None:
    os.link(root / "SOUL.md", root / "p2.md")
    params = {"file_path": "README.md", "content": "p2.md", "new_string": "p2.md"}
    assert linked_params(str(root), params, Snapshots(root)) == (params, ())


def test_the_protected_file_itself_is_judged_by_its_name(root: Path) -> None:
    os.link(root / "SOUL.md", root / "p2.md")
    params = {"file_path": "SOUL.md"}
    assert linked_params(str(root), params, Snapshots(root)) == (params, ())
