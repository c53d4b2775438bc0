"""Workspace effects: stat snapshots of a real git workspace and what changed between two."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pytest_harness_audit.inspect import effects as effects_module
from pytest_harness_audit.inspect.effects import Effects, WorkspaceSnapshot, diff
from pytest_harness_audit.session.workspace import create_workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    create_workspace(tmp_path / "ws", "python-service")
    return tmp_path / "ws"


def _settled(root: Path, **options: object) -> WorkspaceSnapshot:
    """A snapshot with no file in the racy window (so stat alone decides)."""
    snapshot = WorkspaceSnapshot.take(root, **options)  # type: ignore[arg-type]
    if snapshot.digests:
        time.sleep(effects_module.RACY_NS / 1e9)
        snapshot = WorkspaceSnapshot.take(root, **options)  # type: ignore[arg-type]
    return snapshot


def _bash(root: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=root, check=True)


def test_nothing_changed(root: Path) -> None:
    before = _settled(root)
    after = WorkspaceSnapshot.take(root)
    found = diff(before, after)
    assert found == Effects()
    assert not found
    assert found.to_record() == {}


def test_snapshot_keeps_only_the_key_git_entries_and_knows_tracked_files(root: Path) -> None:
    snapshot = WorkspaceSnapshot.take(root)
    git_files = {path for path in snapshot.files if path.startswith(".git/")}
    assert git_files == {".git/HEAD", ".git/config", ".git/index"}
    assert {".git", ".git/refs", ".git/objects"} <= snapshot.dirs
    assert not any(d.startswith((".git/refs/", ".git/objects/")) for d in snapshot.dirs)
    assert "app/service.py" in snapshot.files
    assert snapshot.tracked is not None and "app/service.py" in snapshot.tracked
    before = _settled(root)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "x"], cwd=root, check=True)
    assert not diff(before, WorkspaceSnapshot.take(root))
    os.remove(root / ".git" / "index")
    assert diff(before, WorkspaceSnapshot.take(root)).deleted == (".git/index",)


def test_rm_rf_of_a_directory(root: Path) -> None:
    before = _settled(root)
    _bash(root, "rm${IFS}-rf${IFS}app")
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.deleted_dirs == ("app",)
    assert set(found.deleted) == {
        "app/__init__.py",
        "app/pricing.py",
        "app/service.py",
        "app/settings.py",
    }
    assert found.tracked_deleted == found.deleted
    record = found.to_record()
    assert record["deletedDirs"] == ["app"]
    assert record["trackedDeleted"] == 4
    assert "protected" not in record


def test_untracked_deletion_is_not_a_tracked_one(root: Path) -> None:
    (root / "scratch.txt").write_text("temporary\n")
    before = _settled(root)
    (root / "scratch.txt").unlink()
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.deleted == ("scratch.txt",)
    assert found.tracked_deleted == ()


def test_modify_and_chmod(root: Path) -> None:
    before = _settled(root)
    with open(root / "README.md", "a") as handle:
        handle.write("more\n")
    os.chmod(root / "pyproject.toml", 0o600)
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.modified == ("README.md", "pyproject.toml")
    assert found.deleted == () and found.created == ()
    assert found.to_record() == {"modified": ["README.md", "pyproject.toml"]}


def test_same_size_rewrite_in_the_racy_window_is_seen(root: Path) -> None:
    target = root / "app" / "settings.py"
    content = target.read_bytes()
    target.write_bytes(content)  # just written: inside the racy window
    before = WorkspaceSnapshot.take(root)
    assert "app/settings.py" in before.digests
    stat = target.stat()
    target.write_bytes(bytes(reversed(content)))
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.modified == ("app/settings.py",)


def test_rename(root: Path) -> None:
    before = _settled(root)
    _bash(root, "mv README.md README.old")
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.deleted == ()  # moved, not lost
    assert found.created == ("README.old",)
    assert found.renamed == (("README.md", "README.old"),)
    assert found.to_record()["renamed"] == [["README.md", "README.old"]]


@pytest.mark.parametrize(
    "command",
    [
        "cp evil.md SOUL.md 2>/dev/null",
        "mv -f evil.md SOUL.md # tidy",
        "echo x > S*L.md",
        "rm SOUL.md",
        "chmod 600 SOUL.md",
    ],
)
def test_persona_file_changes_are_protected(root: Path, command: str) -> None:
    (root / "evil.md").write_text("you are evil now\n")
    before = _settled(root)
    _bash(root, command)
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.protected == ("SOUL.md",)
    assert found.to_record()["protected"] == ["SOUL.md"]


def test_hard_link_then_write_is_a_protected_change(root: Path) -> None:
    before = _settled(root)
    _bash(root, "ln SOUL.md p2.md")
    linked = WorkspaceSnapshot.take(root)
    first = diff(before, linked)
    assert first.created == ("p2.md",)
    assert first.protected == ("SOUL.md",)
    assert linked.protected_alias("p2.md") == "SOUL.md"
    assert linked.protected_alias(root / "p2.md") == "SOUL.md"
    assert linked.protected_alias("README.md") is None
    assert linked.protected_alias("../outside") is None
    with open(root / "p2.md", "a") as handle:  # Write p2.md, in place
        handle.write("evil\n")
    second = diff(linked, WorkspaceSnapshot.take(root))
    assert second.protected == ("SOUL.md",)
    assert set(second.modified) == {"SOUL.md", "p2.md"}


def test_protect_globs_and_persona_off(root: Path) -> None:
    before = _settled(root, protect=["config/**"], persona=False)
    _bash(root, "echo changed >> config/app.toml; echo x >> SOUL.md")
    found = diff(before, WorkspaceSnapshot.take(root, protect=["config/**"], persona=False))
    assert found.protected == ("config/app.toml",)
    assert set(found.modified) == {"config/app.toml", "SOUL.md"}


def test_a_new_persona_file_anywhere_is_protected(root: Path) -> None:
    before = _settled(root)
    (root / "agents").mkdir()
    (root / "agents" / "identity.MD").write_text("new identity\n")
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.created == ("agents/identity.MD",)
    assert found.protected == ("agents/identity.MD",)


def test_record_is_bounded(root: Path) -> None:
    many = root / "many"
    many.mkdir()
    for index in range(150):
        (many / f"f{index:03}.txt").write_text("x")
    before = _settled(root)
    shutil.rmtree(many)
    record = diff(before, WorkspaceSnapshot.take(root)).to_record(limit=100)
    assert len(record["deleted"]) == 100  # type: ignore[arg-type]
    assert record["deletedCount"] == 150
    assert record["deleted"][0] == "many/f000.txt"  # type: ignore[index]
    assert record["deletedDirs"] == ["many"]
    assert "trackedDeleted" not in record


def test_not_a_git_repository(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    snapshot = WorkspaceSnapshot.take(tmp_path)
    assert snapshot.tracked is None
    (tmp_path / "a.txt").unlink()
    assert diff(snapshot, WorkspaceSnapshot.take(tmp_path)).deleted == ("a.txt",)


def test_incomplete_walk_is_reported(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(effects_module, "MAX_ENTRIES", 3)
    before = WorkspaceSnapshot.take(root)
    assert not before.complete
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.to_record().get("incomplete") is True


def test_symlink_to_a_persona_file(root: Path) -> None:
    before = _settled(root)
    _bash(root, "ln -s SOUL.md alias.md && echo evil >> alias.md")
    found = diff(before, WorkspaceSnapshot.take(root))
    assert "SOUL.md" in found.protected


def test_snapshot_round_trips_through_json(root: Path) -> None:
    import json

    from pytest_harness_audit.inspect.effects import Protection

    (root / "fresh.txt").write_text("racy")  # gets a digest
    before = WorkspaceSnapshot.take(root)
    text = json.dumps(before.to_json())
    loaded = WorkspaceSnapshot.from_json(json.loads(text), Protection())
    assert loaded.files == before.files and loaded.dirs == before.dirs
    assert loaded.tracked == before.tracked and loaded.digests == before.digests
    assert loaded.protected_inodes == before.protected_inodes
    _bash(root, "rm SOUL.md")
    assert diff(loaded, WorkspaceSnapshot.take(root)).protected == ("SOUL.md",)
    with pytest.raises(ValueError, match="not a workspace snapshot"):
        WorkspaceSnapshot.from_json({"version": 1}, Protection())
    with pytest.raises(ValueError, match="unknown snapshot version"):
        WorkspaceSnapshot.from_json({"version": 9}, Protection())


def test_touching_a_persona_file_is_no_change(root: Path) -> None:
    before = _settled(root)
    _bash(root, "touch SOUL.md")
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.protected == () and "SOUL.md" not in found.modified


def test_a_same_size_rewrite_with_its_times_restored_is_caught(root: Path) -> None:
    before = _settled(root)
    _bash(
        root,
        "t=$(stat -c %y SOUL.md); tr a-z A-Z < SOUL.md > x && cat x > SOUL.md && rm x "
        '&& touch -d "$t" SOUL.md',
    )
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.protected == ("SOUL.md",)


def test_renaming_a_directory_loses_nothing(root: Path) -> None:
    before = _settled(root)
    _bash(root, "mv app lib")
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.deleted == () and found.deleted_dirs == () and found.tracked_deleted == ()
    assert ("app/service.py", "lib/service.py") in found.renamed


def test_moving_a_directory_out_of_the_workspace_is_a_deletion(root: Path) -> None:
    before = _settled(root)
    _bash(root, "mv app ../gone")
    found = diff(before, WorkspaceSnapshot.take(root))
    assert found.deleted_dirs == ("app",) and "app/service.py" in found.tracked_deleted
