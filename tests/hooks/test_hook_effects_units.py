"""The hook door's snapshot is the library's (``WorkspaceSnapshot.take``) with the store left
out and a limit; the project root; the snapshot's JSON form keeps what pre saw."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pytest_harness_audit.doors.hook_effects import store_inside, workspace_root
from pytest_harness_audit.inspect.effects import Protection, WorkspaceSnapshot, diff, walk


def test_a_racy_rewrite_at_the_same_size_and_time_is_seen(tmp_path: Path) -> None:
    target = tmp_path / "config.py"
    target.write_text("debug = 0\n")
    soon = time.time_ns() + 60 * 10**9  # a time stamp still in the racy window at any load
    os.utime(target, ns=(soon, soon))
    before = WorkspaceSnapshot.take(tmp_path, tracked=False, limit=100)
    assert before.digests["config.py"] is not None
    # what post reads back from the pending file is what pre saw
    kept = WorkspaceSnapshot.from_json(before.to_json(), Protection())
    assert kept.digests == before.digests and kept.files == before.files
    target.write_text("debug = 1\n")
    os.utime(target, ns=(soon, soon))
    after = WorkspaceSnapshot.take(tmp_path, tracked=False, limit=100)
    assert before.files == after.files  # the stat alone cannot tell
    assert diff(kept, after).modified == ("config.py",)


def test_the_persona_digests_travel_with_the_snapshot(tmp_path: Path) -> None:
    soul = tmp_path / "SOUL.md"
    soul.write_text("kind\n")
    before = WorkspaceSnapshot.take(tmp_path, tracked=False)
    data = before.to_json()
    soul.write_text("cruel\n")  # rewritten between pre and post: post must not read it now
    kept = WorkspaceSnapshot.from_json(data, Protection())
    assert kept.protected_digests == before.protected_digests
    assert kept.protected_digests["SOUL.md"] is not None
    after = WorkspaceSnapshot.take(tmp_path, tracked=False)
    assert "SOUL.md" in diff(kept, after).protected


def test_the_store_is_left_out_and_the_limit_stops_the_walk(tmp_path: Path) -> None:
    (tmp_path / "audit" / "pending").mkdir(parents=True)
    (tmp_path / "audit" / "pending" / "x.json").write_text("{}")
    (tmp_path / "src").mkdir()
    for number in range(5):
        (tmp_path / "src" / f"m{number}.py").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    files, dirs, complete = walk(str(tmp_path), skip="audit", limit=100)
    assert complete and dirs == {"src", ".git"}
    assert sorted(files) == [".git/HEAD", *(f"src/m{number}.py" for number in range(5))]
    files, _, complete = walk(str(tmp_path), skip="audit", limit=3)
    assert not complete and len(files) < 5
    assert store_inside(str(tmp_path), tmp_path / "audit") == "audit"
    assert store_inside(str(tmp_path / "src"), tmp_path / "audit") is None
    assert store_inside(str(tmp_path), tmp_path) is None  # the project is no store


def test_the_project_dir_wins_over_any_cwd(tmp_path: Path) -> None:
    inside, outside = tmp_path / "app", tmp_path.parent
    inside.mkdir()
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path)}
    assert workspace_root(str(inside), env) == str(tmp_path)
    # a cwd the host's Bash moved to, outside the project (an added directory)
    assert workspace_root(str(outside), env) == str(tmp_path)
    assert workspace_root(str(inside), {}) == str(inside)
    missing = {"CLAUDE_PROJECT_DIR": str(tmp_path / "gone")}
    assert workspace_root(str(outside), missing) == str(outside)
    assert workspace_root(str(inside), {"CLAUDE_PROJECT_DIR": "relative/dir"}) == str(inside)
    assert workspace_root(None, env) is None
    # a relative cwd (the host always sends an absolute one) would name the hook process's own
    # folder, a virtual environment of thousands of files: no project, nothing walked
    assert workspace_root(".", {}) is None
    assert workspace_root("app", {}) is None
    assert workspace_root(".", env) == str(tmp_path)
