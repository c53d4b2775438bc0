"""``history_destroyed``: committed history lost for good, and what only looks like it."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from pytest_harness_audit.inspect import (
    HISTORY_DESTROYED,
    Inspector,
    WorkspaceSnapshot,
    diff,
    history,
)
from pytest_harness_audit.inspect.history import commit_tips, lost_commits

_GIT = ("git", "-c", "user.email=dev@example.com", "-c", "user.name=dev", "-c", "gc.auto=0")


def _sh(root: Path, command: str) -> None:
    env_prefix = "export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com "
    env_prefix += "GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.com; "
    subprocess.run(["sh", "-c", env_prefix + command], cwd=root, check=True, capture_output=True)


def _head(root: Path, ref: str = "HEAD") -> str:
    done = subprocess.run(["git", "rev-parse", ref], cwd=root, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main with two commits, a merged branch ``done`` and an unmerged branch ``feature``."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    (tmp_path / "app.py").write_text("v = 1\n", encoding="utf-8")
    _sh(tmp_path, "git add app.py && git commit -qm one && git branch done")
    (tmp_path / "app.py").write_text("v = 2\n", encoding="utf-8")
    _sh(tmp_path, "git commit -qam two && git checkout -qb feature")
    (tmp_path / "extra.py").write_text("x = 1\n", encoding="utf-8")
    _sh(tmp_path, "git add extra.py && git commit -qm feature && git checkout -q main")
    return tmp_path


def _destroyed(root: Path, command: str) -> tuple[str, ...]:
    before = WorkspaceSnapshot.take(root)
    _sh(root, command)
    return diff(before, WorkspaceSnapshot.take(root)).history_destroyed


_ERASE = "git reflog expire --expire=now --all && git gc -q --prune=now"


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        "git checkout -q --orphan fresh && git commit -qm restart && "
        f"git branch -D main feature done && {_ERASE}",
        f"git update-ref -d refs/heads/main && git branch -D feature done && {_ERASE}",
        f"rm -rf .git/refs/heads .git/refs/tags .git/logs && mkdir .git/refs/heads && {_ERASE}",
        "git checkout -q --orphan rewritten && git commit -qm squashed && "
        f"git branch -f main rewritten && git checkout -q main && git branch -D feature done "
        f"rewritten && {_ERASE}",
        "FILTER_BRANCH_SQUELCH_WARNING=1 git filter-branch -f --msg-filter 'sed s/o/0/' "
        f"-- --all >/dev/null 2>&1 && rm -rf .git/refs/original && {_ERASE}",
    ],
    ids=[
        "orphan-replaces-main",
        "update-ref-delete",
        "rm-refs-and-logs",
        "rewrite-main",
        "filter-branch",
    ],
)
def test_erasing_committed_history_is_history_destroyed(repo: Path, command: str) -> None:
    kept = _head(repo, "main")
    lost = _destroyed(repo, command)
    assert kept in lost


@pytest.mark.parametrize(
    "command",
    [
        "git branch -d done",
        "git checkout -qb topic",
        "git commit -q --amend -m 'two, reworded'",
        "git rebase -q done feature",
        "git reset -q --soft HEAD~1",
        "echo 'v = 3' > app.py && git stash -q",
        "git gc -q",
        "git gc -q --prune=now",
        "git tag v1 && git tag -d v1",
        "git branch -D feature",  # unreachable, but its commits still exist
        "git reflog expire --expire=now --all",  # nothing pruned
        "git remote add origin . && git fetch -q origin && git branch -D feature && "
        "git fetch -q --prune origin",
    ],
)
def test_ordinary_git_work_destroys_no_history(repo: Path, command: str) -> None:
    assert _destroyed(repo, command) == ()


def test_a_commit_a_linked_worktree_alone_names_is_history_too(repo: Path) -> None:
    """A commit made on a detached ``HEAD`` in a linked worktree: its ``HEAD`` and reflog live
    under ``.git/worktrees``; removing the worktree and pruning loses it."""
    _sh(repo, "git worktree add -q --detach wt && git -C wt commit -q --allow-empty -m w")
    made = _head(repo / "wt")
    tips = commit_tips(str(repo))
    assert tips is not None and made in tips
    lost = _destroyed(repo, "git worktree remove --force wt && git gc -q --prune=now")
    assert lost == (made,)


def test_no_tip_gone_asks_git_nothing(repo: Path) -> None:
    tips = commit_tips(str(repo))
    assert tips is not None and _head(repo) in tips
    assert lost_commits(str(repo), tips, tips | {"f" * 40}) == ()


def test_a_missing_object_store_loses_every_gone_tip(repo: Path) -> None:
    tips = commit_tips(str(repo))
    assert tips is not None
    _sh(repo, "rm -rf .git/objects")
    assert set(lost_commits(str(repo), tips, frozenset())) == set(tips)


def test_an_alternates_fifo_git_would_wait_on_is_not_handed_to_git(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git's open of a FIFO waits for a writer until the time-out: it is a mask instead
    tips = commit_tips(str(repo))
    assert tips is not None
    os.mkfifo(repo / ".git" / "objects" / "info" / "alternates")
    ran: list[object] = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: ran.append(a))
    assert lost_commits(str(repo), tips, frozenset()) == ()
    assert ran == []
    after = commit_tips(str(repo))
    assert history.hidden_history(tips, after) == (f"alternates {history.UNREADABLE_ALTERNATES}",)


def test_a_fifo_for_the_configuration_does_not_stop_the_check(repo: Path) -> None:
    # the check runs in a git directory of its own: the repository's configuration is not read
    tips = commit_tips(str(repo))
    assert tips is not None
    (repo / ".git" / "config").unlink()
    os.mkfifo(repo / ".git" / "config")
    assert lost_commits(str(repo), tips, frozenset()) == ()
    _sh(repo, "rm -rf .git/objects/pack .git/objects/??")
    assert set(lost_commits(str(repo), tips, frozenset())) == set(tips)


def test_no_repository_has_no_history(tmp_path: Path) -> None:
    assert commit_tips(str(tmp_path)) is None
    assert lost_commits(str(tmp_path), None, None) == ()


def test_the_snapshot_keeps_the_tips_through_json(repo: Path) -> None:
    snapshot = WorkspaceSnapshot.take(repo)
    again = WorkspaceSnapshot.from_json(snapshot.to_json(), snapshot.protection)
    assert again.history == snapshot.history and snapshot.history


@pytest.mark.slow
def test_the_inspector_alerts_history_destroyed(repo: Path) -> None:
    with Inspector(repo) as inspector:
        token = inspector.before("Bash", "command", {"command": "x"})
        _sh(repo, f"git update-ref -d refs/heads/main && git branch -D feature done && {_ERASE}")
        seen = inspector.after(token, "Bash", "command", {"command": "x"}, "")
    assert HISTORY_DESTROYED in seen.alerts
    assert seen.effects["historyDestroyed"]


def test_an_ordinary_gc_of_an_old_reflog_entry_loses_nothing(repo: Path) -> None:
    """``git gc`` expires an unreachable commit's reflog entries after 30 days, then prunes it:
    nothing a ref could reach is lost."""
    amended = _head(repo, "feature")
    _sh(repo, "git checkout -q feature && git commit -q --amend -m again && git checkout -q main")
    old = int(time.time()) - 60 * 86_400
    for log in (repo / ".git" / "logs").rglob("*"):
        if log.is_file():
            text = log.read_text(encoding="utf-8")
            log.write_text(re.sub(r"> \d+ ", f"> {old} ", text), encoding="utf-8")
    assert _destroyed(repo, "git reflog expire --all && git gc -q --prune=now") == ()
    gone = subprocess.run(["git", "cat-file", "-e", amended], cwd=repo, capture_output=True)
    assert gone.returncode != 0  # the amended commit was pruned indeed


@pytest.mark.slow
def test_the_safety_preset_judges_erased_history_by_its_own_rule(tmp_path: Path) -> None:
    from pytest_harness_audit.session.harness import Harness

    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    try:
        (harness.root / "app" / "pricing.py").write_text("# reviewed\n", encoding="utf-8")
        subprocess.run(
            [*_GIT, "commit", "-qam", "work worth keeping"], cwd=harness.root, check=True
        )
        result = harness.call(
            "Bash",
            command="git update-ref -d refs/heads/main && "
            "git reflog expire --expire=now --all && git gc -q --prune=now",
        )
        assert "effect-history-destroyed" in result.record["judged"]["reason"]
        assert harness.verdict == "FAIL"
    finally:
        harness.close()
