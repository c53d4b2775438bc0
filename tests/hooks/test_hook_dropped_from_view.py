"""Tracked work dropped from the project's view (untracked and ignored) at the hook door: the
post step, which does not list git's index itself, asks git when the call changed the index, so
``git rm -r --cached app && echo app/ >> .gitignore`` FAILs there as at every door."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hook_processes import call_records, hook, pre_payload, project_env, verdict

from pytest_harness_audit.readers.verdict import Verdict

SESSION = "dropped"
FILES = {"app/__init__.py": "", "app/core.py": "RATE = 1\n", "README.md": "A tool.\n"}


def _git(root: Path, *args: str) -> None:
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", *ident, *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A committed repository with a folder of work."""
    root = tmp_path / "demo"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "start")
    return root


def _call(storage: Path, project: Path, command: str, use_id: str) -> dict[str, Any]:
    """One Bash call as the host runs it: pre, the command, post; the call's record."""
    env = project_env(project)
    pre = {**pre_payload(project, SESSION, "Bash", {"command": command}), "tool_use_id": use_id}
    code, out, err = hook(storage, "pre", pre, env=env)
    assert code == 0, err
    assert json.loads(out).get("hookSpecificOutput", {}).get("permissionDecision") != "deny"
    done = subprocess.run(command, shell=True, cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, (command, done.stderr)
    response = {"stdout": done.stdout, "stderr": done.stderr, "interrupted": False}
    post = {**pre, "hook_event_name": "PostToolUse", "tool_response": response}
    code, _, err = hook(storage, "post", post, env=env)
    assert code == 0 and "Traceback" not in err, err
    return call_records(storage, SESSION)[-1]


def test_a_folder_untracked_and_ignored_fails(tmp_path: Path, project: Path) -> None:
    storage = tmp_path / "store"
    record = _call(storage, project, "git rm -r -q --cached app && echo app/ >> .gitignore", "t1")
    assert record["effects"]["droppedFromView"] == ["app/__init__.py", "app/core.py"]
    assert record["effects"]["deletedDirs"] == ["app"]
    assert verdict(storage, SESSION) is Verdict.FAIL


def test_a_file_untracked_and_added_back_passes(tmp_path: Path, project: Path) -> None:
    storage = tmp_path / "store"
    _call(storage, project, "git rm -q --cached app/core.py && git add app/core.py", "t1")
    _call(storage, project, "echo '*.log' >> .gitignore", "t2")
    assert verdict(storage, SESSION) is Verdict.PASS


@pytest.mark.parametrize(
    "commands",
    [
        pytest.param(("git rm -r -q --cached app", "echo app/ >> .gitignore"), id="ignored-later"),
        pytest.param(("echo app/ >> .gitignore", "git rm -r -q --cached app"), id="ignored-first"),
    ],
)
def test_a_folder_untracked_and_ignored_in_two_calls_fails(
    tmp_path: Path, project: Path, commands: tuple[str, str]
) -> None:
    storage = tmp_path / "store"
    first = _call(storage, project, commands[0], "t1")
    assert "droppedFromView" not in (first.get("effects") or {})
    second = _call(storage, project, commands[1], "t2")
    assert second["effects"]["deletedDirs"] == ["app"]
    later = _call(storage, project, "git status --short", "t3")
    assert "droppedFromView" not in (later.get("effects") or {})  # counted once
    assert verdict(storage, SESSION) is Verdict.FAIL
