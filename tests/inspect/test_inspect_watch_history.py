"""The live tree keeps the commit tips and protected digests it read until an event says they
changed: after any git work, what it hands out must equal a fresh reading."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.inspect import history_watch
from pytest_harness_audit.inspect.effects import (
    Protection,
    WorkspaceSnapshot,
    diff,
    protected_digest,
)
from pytest_harness_audit.inspect.history import commit_tips, object_stamp
from pytest_harness_audit.inspect.watch import LiveTree

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

_ENV = {
    "GIT_AUTHOR_NAME": "dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def _sh(root: Path, command: str) -> None:
    subprocess.run(
        ["sh", "-c", command], cwd=root, check=True, capture_output=True, env={**os.environ, **_ENV}
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _sh(root, "git init -q -b main && echo 1 > a.txt && git add a.txt && git commit -qm one")
    _sh(root, "git branch done && echo 2 > a.txt && git commit -qam two")
    return root


@pytest.fixture
def tree(repo: Path) -> Iterator[LiveTree]:
    live = LiveTree.open(repo, Protection())
    if live is None:
        pytest.skip("inotify is not available here")
    yield live
    live.close()


def _snapshot(tree: LiveTree) -> WorkspaceSnapshot:
    snapshot = tree.snapshot()
    assert snapshot is not None
    return snapshot


GIT_WORK = [
    "echo 3 > a.txt && git commit -qam three",
    "git checkout -qb feature/deep/er && echo f > f.txt && git add f.txt && git commit -qm f",
    "git branch -D done",
    "git update-ref -d refs/heads/done",
    "git tag v1 && git tag -a -m annotated v2",
    "git pack-refs --all",
    "git pack-refs --all && git branch -D done",
    "git reflog expire --expire=now --all",
    "git checkout -q --orphan fresh && git commit -qm restart",
    "git reset -q --hard HEAD~1",
    "git update-ref refs/custom/x/y HEAD~1",
    "mkdir -p .git/refs/heads/made/by/hand && "
    "git rev-parse HEAD~1 > .git/refs/heads/made/by/hand/r",
    "rm -rf .git/logs",
    "mv .git/refs/heads .git/refs/moved && mkdir .git/refs/heads && "
    "cp .git/refs/moved/main .git/refs/heads/main",
    "rm -rf .git && git init -q -b main && echo x > b.txt && git add b.txt && git commit -qm new",
    "mv .git ../elsewhere.git && ln -s ../elsewhere.git .git",
    "echo 'ref: refs/heads/done' > .git/HEAD",
    "git worktree add -q --detach wt && git -C wt commit -q --allow-empty -m w",
    "git worktree add -q --detach wt && git -C wt commit -q --allow-empty -m w && "
    "git worktree remove --force wt",
]


@pytest.mark.parametrize("command", GIT_WORK)
def test_the_kept_tips_equal_a_fresh_reading(repo: Path, tree: LiveTree, command: str) -> None:
    assert _snapshot(tree).history == commit_tips(str(repo))
    _sh(repo, command)
    assert _snapshot(tree).history == commit_tips(str(repo))
    # and again after more work in the same, possibly new, folders
    _sh(repo, "git update-ref refs/heads/later HEAD 2>/dev/null || true")
    assert _snapshot(tree).history == commit_tips(str(repo))


def test_an_unchanged_repository_is_not_read_again(
    tree: LiveTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    _snapshot(tree)
    reads: list[str] = []
    monkeypatch.setattr(history_watch, "commit_tips", lambda root: reads.append(root))
    _snapshot(tree)
    _snapshot(tree)
    assert reads == []


def test_the_object_folders_are_stamped_again_only_after_an_event_in_them(
    repo: Path, tree: LiveTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _snapshot(tree).objects
    stamps: list[str] = []

    def counted(root: str, *, files: bool = True) -> object:
        stamps.append(root)
        return object_stamp(root, files=files)

    monkeypatch.setattr(history_watch, "object_stamp", counted)
    assert _snapshot(tree).objects == first
    assert stamps == []  # nothing happened in the object store
    _sh(repo, "echo new | git hash-object -w --stdin")
    changed = _snapshot(tree).objects
    assert changed != first and stamps == [str(repo)]
    _sh(repo, "chmod 0500 .git/objects/pack")  # a folder's mode alone
    assert _snapshot(tree).objects != changed and len(stamps) == 2


def test_a_ref_written_is_read_again(
    repo: Path, tree: LiveTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    _snapshot(tree)
    reads: list[str] = []

    def counted(root: str) -> frozenset[str] | None:
        reads.append(root)
        return commit_tips(root)

    monkeypatch.setattr(history_watch, "commit_tips", counted)
    _sh(repo, "git branch another")
    assert _snapshot(tree).history == commit_tips(str(repo))
    assert reads == [str(repo)]


def test_a_new_day_reads_again(tree: LiveTree, monkeypatch: pytest.MonkeyPatch) -> None:
    _snapshot(tree)
    reads: list[str] = []
    monkeypatch.setattr(history_watch, "commit_tips", lambda root: reads.append(root))
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() + 86_400)
    _snapshot(tree)
    assert len(reads) == 1


def test_too_many_ref_folders_are_read_every_time(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_watch, "MAX_HISTORY_WATCHES", 2)
    live = LiveTree.open(repo, Protection())
    assert live is not None
    try:
        _snapshot(live)
        reads: list[str] = []
        monkeypatch.setattr(history_watch, "commit_tips", lambda root: reads.append(root))
        _snapshot(live)
        assert reads == [str(repo)]
    finally:
        live.close()


def test_erased_history_is_seen_through_the_live_tree(repo: Path, tree: LiveTree) -> None:
    main = subprocess.run(
        ["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    before = _snapshot(tree)
    _sh(
        repo,
        "git checkout -q --orphan fresh && git commit -qm restart && git branch -D main done"
        " && git reflog expire --expire=now --all && git gc -q --prune=now",
    )
    effects = diff(before, _snapshot(tree))
    assert main in effects.history_destroyed


def test_a_protected_digest_follows_writes_through_any_link(
    repo: Path, tree: LiveTree, tmp_path: Path
) -> None:
    config = ".git/config"
    before = _snapshot(tree)
    first = before.protected_digests[config]
    assert _snapshot(tree).protected_digests[config] == first
    os.link(repo / config, tmp_path / "outside-config")
    with open(tmp_path / "outside-config", "a", encoding="utf-8") as handle:
        handle.write("[core]\n\tfsmonitor = ./evil.sh\n")
    changed = _snapshot(tree)
    assert changed.protected_digests[config] == protected_digest(str(repo), config) != first
    assert config in diff(before, changed).protected


def test_a_protected_digest_changes_with_the_content_at_the_same_size_and_time(
    repo: Path, tree: LiveTree
) -> None:
    config = repo / ".git" / "config"
    config.write_text(
        config.read_text(encoding="utf-8") + "[core]\n\tfsmonitor = ./aaa.sh\n", encoding="utf-8"
    )
    before = _snapshot(tree)
    kept = config.stat()
    config.write_text(
        config.read_text(encoding="utf-8").replace("aaa.sh", "bbb.sh"), encoding="utf-8"
    )
    os.utime(config, ns=(kept.st_atime_ns, kept.st_mtime_ns))
    after = _snapshot(tree)
    # the change time moved (a snapshot keeps it); the digest tells the change apart as well
    assert after.files[".git/config"][1] > kept.st_mtime_ns
    assert after.protected_digests[".git/config"] != before.protected_digests[".git/config"]
    assert ".git/config" in diff(before, after).protected
