"""The live tree: an inotify-kept workspace must always equal a fresh stat walk."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.inspect import watch
from pytest_harness_audit.inspect.effects import Protection, WorkspaceSnapshot, diff
from pytest_harness_audit.inspect.watch import LiveTree
from pytest_harness_audit.session.workspace import create_workspace

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    create_workspace(tmp_path / "ws", "python-service")
    return tmp_path / "ws"


@pytest.fixture
def tree(root: Path) -> Iterator[LiveTree]:
    live = LiveTree.open(root, Protection())
    if live is None:
        pytest.skip("inotify is not available here")
    yield live
    live.close()


def _current(tree: LiveTree) -> WorkspaceSnapshot:
    snapshot = tree.snapshot()
    assert snapshot is not None
    return snapshot


def _walked(root: Path) -> WorkspaceSnapshot:
    return WorkspaceSnapshot.take(root)


def _bash(root: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=root, check=True)


COMMANDS = [
    "echo more >> README.md",
    "rm -rf app",
    "mkdir -p new/deep/er && echo x > new/deep/er/f.txt && echo y > new/g.txt",
    "mv app moved && echo z > moved/extra.py",
    "mv app /tmp/harness-watch-$$ && rm -rf /tmp/harness-watch-$$",
    "ln SOUL.md p2.md && echo evil >> p2.md",
    "ln -s README.md link.md && rm README.md",
    "chmod 600 pyproject.toml && touch -d 2020-01-01 app/service.py",
    "mkdir d && mv README.md d/ && rmdir app 2>/dev/null; mv d e",
    "echo n > n.txt && git add -A && git -c user.name=x -c user.email=x@x commit -qm x"
    " && git rm -q app/service.py",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_live_tree_equals_a_walk(root: Path, tree: LiveTree, command: str) -> None:
    before = _current(tree)
    walked_before = _walked(root)
    assert before.files == walked_before.files and before.dirs == walked_before.dirs
    _bash(root, command)
    after = _current(tree)
    walked_after = _walked(root)
    assert after.files == walked_after.files
    assert after.dirs == walked_after.dirs
    live_effects = diff(before, after)
    walked_effects = diff(walked_before, walked_after)
    assert live_effects.deleted == walked_effects.deleted
    assert live_effects.created == walked_effects.created
    assert live_effects.protected == walked_effects.protected
    assert live_effects.deleted_dirs == walked_effects.deleted_dirs
    assert set(live_effects.modified) >= set(walked_effects.modified)


def test_an_unchanged_tree_shares_its_state(tree: LiveTree) -> None:
    first, second = _current(tree), _current(tree)
    assert first.files is second.files
    assert not diff(first, second)


def test_snapshots_are_not_changed_afterwards(root: Path, tree: LiveTree) -> None:
    before = _current(tree)
    kept = dict(before.files)
    (root / "README.md").unlink()
    _current(tree)
    assert before.files == kept


def test_a_write_through_an_outside_hard_link_to_a_protected_file(
    root: Path, tree: LiveTree, tmp_path: Path
) -> None:
    os.link(root / "SOUL.md", tmp_path / "outside.md")
    before = _current(tree)
    with open(tmp_path / "outside.md", "a") as handle:
        handle.write("evil\n")
    found = diff(before, _current(tree))
    assert found.protected == ("SOUL.md",)


def test_queue_overflow_walks_again(root: Path, tree: LiveTree) -> None:
    before = _current(tree)
    tree._apply([(-1, watch.IN_Q_OVERFLOW, "")])
    (root / "after.txt").write_text("x")
    assert diff(before, _current(tree)).created == ("after.txt",)


def test_too_many_directories_fall_back(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "MAX_WATCHES", 2)
    assert LiveTree.open(root, Protection()) is None


def test_growing_past_the_limit_gives_up(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    live = LiveTree.open(root, Protection())
    assert live is not None
    monkeypatch.setattr(watch, "MAX_WATCHES", len(live._watches))
    (root / "one-more").mkdir()
    assert live.snapshot() is None
    assert live.closed


def test_closed_tree(tree: LiveTree) -> None:
    tree.close()
    assert tree.closed
    assert tree.snapshot() is None
    tree.close()


def test_no_tree_for_a_missing_root(tmp_path: Path) -> None:
    assert LiveTree.open(tmp_path / "missing", Protection()) is None


def test_removing_the_workspace_itself_gives_up(root: Path, tree: LiveTree) -> None:
    _current(tree)
    _bash(root.parent, f"mv {root.name} elsewhere")
    assert tree.snapshot() is None
    assert tree.closed
