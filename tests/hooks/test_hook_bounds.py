"""A hook event in a huge folder answers in bounded work: every walk and reading stops at its
bound, and what it did not see is said (never taken for "nothing there")."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hook_processes import answer_of, as_post, call_records, hook, pre_payload, project_env

from pytest_harness_audit.doors.hook_learning import SECRETS_INCOMPLETE
from pytest_harness_audit.inspect import effects, history
from pytest_harness_audit.inspect.effects import WorkspaceSnapshot, walk
from pytest_harness_audit.inspect.learn_limits import (
    MAX_LEARN_FILES,
    MAX_LEARNED_PIECES,
    credential_paths,
    learn_bounded,
)
from pytest_harness_audit.inspect.secrets import SecretRegistry

SESSION = "host-bounds"
KEY = "sk-live-9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many entries ``os.scandir`` listings handed out while the test ran."""
    seen = [0]
    real = os.scandir

    class Counting:
        def __init__(self, path: Any) -> None:
            self._it = real(path)

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self._it.close()

        def __iter__(self) -> Iterator[os.DirEntry[str]]:
            for entry in self._it:
                seen[0] += 1
                yield entry

    monkeypatch.setattr(os, "scandir", Counting)
    return seen


def _tree(root: Path, folders: int, files: int) -> None:
    for i in range(folders):
        folder = root / f"d{i}"
        folder.mkdir(parents=True)
        for j in range(files):
            (folder / f"f{j}.txt").touch()


def test_the_credential_walk_stops_at_its_bound(tmp_path: Path, counted: list[int]) -> None:
    _tree(tmp_path, 20, 50)  # 1,020 entries
    (tmp_path / "d19" / ".env").write_text(f"API_KEY={KEY}\n")
    found, complete = credential_paths(str(tmp_path), limit=100)
    assert (found, complete) == ([], False)
    assert counted[0] <= 100 + 50  # the bound, and at most the rest of one listing
    registry = SecretRegistry()
    learned = learn_bounded(registry, str(tmp_path), entries=100)
    assert learned.values == 0 and "more than 100 entries" in (learned.unseen or "")


def test_the_nearest_credential_files_are_learned_first(tmp_path: Path) -> None:
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / ".env").write_text("TOKEN=aa11bb22cc33dd44ee55\n")
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n")
    registry = SecretRegistry()
    learned = learn_bounded(registry, str(tmp_path), learned=1)
    assert learned.values == 1 and "more than 1 values" in (learned.unseen or "")
    assert [info.label for info in registry.secrets()] == [".env:API_KEY"]
    everything = learn_bounded(SecretRegistry(), str(tmp_path))
    assert (everything.values, everything.unseen) == (2, None)


def test_a_long_value_counts_by_its_pieces(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("PRIVATE_KEY=" + "a1B2c3D4" * 40 + "\n")  # 320 characters
    learned = learn_bounded(SecretRegistry(), str(tmp_path), learned=4)
    assert learned.values == 0 and learned.unseen is not None


def test_the_snapshot_walk_counts_git_hooks_against_its_limit(tmp_path: Path) -> None:
    hooks = tmp_path / "repo" / ".git" / "hooks"
    hooks.mkdir(parents=True)
    for i in range(40):
        (hooks / f"h{i}").touch()
    files, _dirs, complete = walk(str(tmp_path), limit=10)
    assert not complete
    assert len(files) <= 10
    files, _dirs, complete = walk(str(tmp_path), limit=100)
    assert complete and len(files) == 40


def _git(root: Path, *argv: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *argv], cwd=root, env=env, check=True, capture_output=True)


def test_a_stopped_walk_stats_the_tracked_files_within_a_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path, 10, 10)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    assert len(WorkspaceSnapshot.take(str(tmp_path), limit=5).files) >= 100  # every one
    monkeypatch.setattr(effects, "MAX_ENTRIES", 20)
    taken = WorkspaceSnapshot.take(str(tmp_path), limit=5)
    assert not taken.complete and len(taken.files) <= 5 + 5 + 20  # walk, its .git, tracked
    dropped = WorkspaceSnapshot.take(str(tmp_path), limit=5, partial=False)
    assert not dropped.complete and dropped.tracked is None and len(dropped.files) <= 10


def test_more_refs_than_a_reading_keeps_stop_the_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    heads = tmp_path / ".git" / "refs" / "heads"
    heads.mkdir(parents=True)
    for i in range(20):
        (heads / f"b{i:02}").write_text(f"{i + 1:040x}\n")
    read: list[str] = []
    real = history._read

    def counting(path: str) -> str:
        read.append(path)
        return real(path)

    monkeypatch.setattr(history, "_read", counting)
    monkeypatch.setattr(history, "MAX_TIPS", 3)
    assert history.commit_tips(str(tmp_path)) is None
    assert len([p for p in read if "/refs/heads/" in p]) == 4  # then one tip too many


def _judged_ls(project: Path, storage: Path) -> dict[str, Any]:
    pre = pre_payload(project, SESSION, "Bash", {"command": "ls"})
    code, out, err = hook(storage, "pre", pre, "--preset", "safety", env=project_env(project))
    assert (code, answer_of(out)) == (0, {}), err
    response = {"stdout": "README.md\n", "stderr": "", "interrupted": False}
    post = as_post(pre, response)
    code, _out, err = hook(storage, "post", post, "--preset", "safety", env=project_env(project))
    assert code == 0, err
    (record,) = call_records(storage, SESSION)
    return record


def test_a_folder_with_more_credential_files_than_read_is_said(tmp_path: Path) -> None:
    project = tmp_path / "project"
    for i in range(MAX_LEARN_FILES + 1):  # no secret in them: nothing costly to learn
        (project / f"svc{i:03}").mkdir(parents=True)
        (project / f"svc{i:03}" / ".env").write_text("DEBUG=true\n")
    record = _judged_ls(project, tmp_path / "store")
    assert SECRETS_INCOMPLETE in record["alerts"]
    assert "more than 256 credential files" in record["effects"]["secretsUnknown"]
    assert record["judged"]["verdict"] == "WARN"


def test_a_project_of_ordinary_size_keeps_its_verdicts(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / ".env").write_text(f"API_KEY={KEY}\n")
    (project / "src" / "app.py").write_text("print('hi')\n")
    record = _judged_ls(project, tmp_path / "store")
    assert "alerts" not in record and "judged" not in record
    storage = tmp_path / "store2"
    pre = pre_payload(project, SESSION, "Bash", {"command": "env"})
    hook(storage, "pre", pre, "--preset", "safety", env=project_env(project))
    post = as_post(pre, {"stdout": f"API_KEY={KEY}\n", "stderr": "", "interrupted": False})
    hook(storage, "post", post, "--preset", "safety", env=project_env(project))
    (leaked,) = call_records(storage, SESSION)
    assert "secret_exposure" in leaked["alerts"] and leaked["judged"]["verdict"] == "FAIL"


def _planted(project: Path, values: int) -> None:
    """Credential files an agent writes to push the owner's secrets past the bounds: named to
    be read before ``.env`` (the same depth, an earlier name)."""
    lines = "".join(f"TOKEN_{i}=zz{i:04}yy{i:04}xx{i:04}ww\n" for i in range(values))
    (project / ".a.env").write_text(lines)


def test_credential_files_changed_since_the_session_started_are_learned_last(
    tmp_path: Path,
) -> None:
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n")  # the owner's, there before
    time.sleep(0.05)  # (the file system's clock ticks coarsely)
    started = time.time_ns()
    time.sleep(0.05)
    _planted(tmp_path, 1)
    first = SecretRegistry()
    learn_bounded(first, str(tmp_path), learned=1)
    assert [info.label for info in first.secrets()] == [".a.env:TOKEN_0"]  # by name alone
    owners_first = SecretRegistry()
    learned = learn_bounded(owners_first, str(tmp_path), learned=1, since_ns=started)
    assert [info.label for info in owners_first.secrets()] == [".env:API_KEY"]
    assert learned.unseen is not None  # the planted one is still said to be unknown


@pytest.mark.slow  # the scanner built over a hundred values, in two hook processes
def test_an_agent_cannot_push_the_owners_secret_out_of_reach(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(f"API_KEY={KEY}\n")
    storage = tmp_path / "store"
    _judged_ls(project, storage)  # the session starts
    time.sleep(0.05)
    _planted(project, MAX_LEARNED_PIECES + 4)
    pre = pre_payload(project, SESSION, "Bash", {"command": "python3 tools/show.py"})
    hook(storage, "pre", pre, "--preset", "safety", env=project_env(project))
    post = as_post(pre, {"stdout": f"key: {KEY}\n", "stderr": "", "interrupted": False})
    hook(storage, "post", post, "--preset", "safety", env=project_env(project))
    leaked = call_records(storage, SESSION)[-1]
    assert "secret_exposure" in leaked["alerts"]
    assert leaked["judged"]["verdict"] == "FAIL"
