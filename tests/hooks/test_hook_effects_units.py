"""The hook door's bounded snapshot: the store left out, the limit, the project root, and the
same racy-file digests as the inspection library's own snapshots."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pytest_harness_audit.doors.hook_effects import (
    bounded_walk,
    store_inside,
    take_snapshot,
    workspace_root,
)
from pytest_harness_audit.inspect.effects import Protection, WorkspaceSnapshot, diff


def test_a_racy_rewrite_at_the_same_size_and_time_is_seen(tmp_path: Path) -> None:
    target = tmp_path / "config.py"
    target.write_text("debug = 0\n")
    soon = time.time_ns() + 60 * 10**9  # a time stamp still in the racy window at any load
    os.utime(target, ns=(soon, soon))
    before = take_snapshot(str(tmp_path), Protection(), skip=None, limit=100, tracked=False)
    library = WorkspaceSnapshot.take(tmp_path, tracked=False)
    # the library's own snapshot digests the same way: post compares with the library's diff
    assert before.digests["config.py"] == library.digests["config.py"] is not None
    target.write_text("debug = 1\n")
    os.utime(target, ns=(soon, soon))
    after = take_snapshot(str(tmp_path), Protection(), skip=None, limit=100, tracked=False)
    assert before.files == after.files  # the stat alone cannot tell
    assert diff(before, after).modified == ("config.py",)


def test_the_store_is_left_out_and_the_limit_stops_the_walk(tmp_path: Path) -> None:
    (tmp_path / "audit" / "pending").mkdir(parents=True)
    (tmp_path / "audit" / "pending" / "x.json").write_text("{}")
    (tmp_path / "src").mkdir()
    for number in range(5):
        (tmp_path / "src" / f"m{number}.py").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    files, dirs, complete = bounded_walk(str(tmp_path), skip="audit", limit=100)
    assert complete and dirs == {"src"}
    assert sorted(files) == [f"src/m{number}.py" for number in range(5)]
    files, _, complete = bounded_walk(str(tmp_path), skip="audit", limit=3)
    assert not complete and len(files) < 5
    assert store_inside(str(tmp_path), tmp_path / "audit") == "audit"
    assert store_inside(str(tmp_path / "src"), tmp_path / "audit") is None
    assert store_inside(str(tmp_path), tmp_path) is None  # the project is no store


def test_the_project_dir_wins_only_over_a_cwd_inside_it(tmp_path: Path) -> None:
    inside, outside = tmp_path / "app", tmp_path.parent
    inside.mkdir()
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path)}
    assert workspace_root(str(inside), env) == str(tmp_path)
    assert workspace_root(str(outside), env) == str(outside)
    assert workspace_root(str(inside), {}) == str(inside)
    assert workspace_root(str(inside), {"CLAUDE_PROJECT_DIR": "relative/dir"}) == str(inside)
    assert workspace_root(None, env) is None
