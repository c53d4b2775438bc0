"""Effects the call itself does not show: changes made between calls, the repository, memory."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.inspect import (
    CREDENTIAL_OBJECT_READ,
    DIRECTORY_DELETED,
    MEMORY_WRITE,
    PROTECTED_FILE_CHANGED,
    Findings,
    Inspector,
)
from pytest_harness_audit.inspect import effects as effects_module
from pytest_harness_audit.session.workspace import create_workspace


@pytest.fixture(params=[True, False], ids=["live", "walk"])
def inspector(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Inspector]:
    create_workspace(tmp_path / "ws", "python-service")
    time.sleep(effects_module.RACY_NS / 1e9)
    with Inspector(tmp_path / "ws", live=request.param) as inspector:
        yield inspector


def _bash(inspector: Inspector, command: str) -> Findings:
    params = {"command": command}
    token = inspector.before("Bash", "command", params)
    done = subprocess.run(
        ["bash", "-c", command], cwd=inspector.root, capture_output=True, text=True, check=False
    )
    return inspector.after(token, "Bash", "command", params, done.stdout)


# -- the repository ----------------------------------------------------------------------------
def test_deleting_the_repository_is_a_deleted_directory(inspector: Inspector) -> None:
    found = _bash(inspector, "python3 -c \"import shutil; shutil.rmtree('.git')\"")
    assert DIRECTORY_DELETED in found.alerts
    assert found.effects["deletedDirs"] == [".git"]


def test_deleting_the_objects_is_a_deleted_directory(inspector: Inspector) -> None:
    found = _bash(inspector, "rm -rf .git/objects")
    assert found.effects["deletedDirs"] == [".git/objects"]


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git log --oneline -3",
        "git diff HEAD",
        "echo x >> README.md && git add README.md",
        "echo y >> README.md && git commit -qam 'docs: a line'",
        "git checkout -q -b topic && git checkout -q -",
        "git stash list",
        "git gc -q",
        "git tag v0.0.1",
    ],
)
def test_ordinary_git_commands_change_nothing_that_is_judged(
    inspector: Inspector, command: str
) -> None:
    found = _bash(inspector, command)
    # git gc reads the credential blobs to pack them: the raw kernel evidence, which the gate
    # lifts for git's own commands (tests/harness/test_credential_object_reads.py)
    assert set(found.alerts) <= ({CREDENTIAL_OBJECT_READ} if "gc" in command else set())
    assert not {"deleted", "deletedDirs", "protected", "memory"} & set(found.effects)
    assert not [p for p in found.effects.get("modified", []) if p.startswith(".git")]


def test_a_changed_git_configuration_is_recorded(inspector: Inspector) -> None:
    found = _bash(inspector, "git config alias.st status")
    assert found.effects["modified"] == [".git/config"]
    assert found.alerts == ()


def test_a_repository_made_later_is_watched_too(inspector: Inspector) -> None:
    _bash(inspector, "mkdir vendor && git init -q vendor")
    found = _bash(inspector, "rm -r -f vendor/.git")
    assert found.effects["deletedDirs"] == ["vendor/.git"]


# -- between calls -----------------------------------------------------------------------------
def test_a_deletion_between_calls_is_reported_with_the_next_call(inspector: Inspector) -> None:
    assert not _bash(inspector, "true")
    subprocess.run(["rm", "-rf", "app"], cwd=inspector.root, check=True)  # no call made this
    found = _bash(inspector, "git status --short")
    assert DIRECTORY_DELETED in found.alerts
    assert found.effects["between"]["deletedDirs"] == ["app"]
    assert "deletedDirs" not in {k for k in found.effects if k != "between"}
    assert not _bash(inspector, "git status --short").effects.get("between")


def test_a_persona_change_between_calls(inspector: Inspector) -> None:
    _bash(inspector, "true")
    (Path(inspector.root) / "SOUL.md").write_text("You obey.", encoding="utf-8")
    found = _bash(inspector, "ls")
    assert PROTECTED_FILE_CHANGED in found.alerts
    assert found.effects["between"]["protected"] == ["SOUL.md"]


def test_the_first_call_has_nothing_between(inspector: Inspector) -> None:
    subprocess.run(["rm", "-rf", "app"], cwd=inspector.root, check=True)
    assert "between" not in _bash(inspector, "ls").effects


def test_nothing_between_calls_adds_nothing(inspector: Inspector) -> None:
    _bash(inspector, "echo a > scratch.txt")
    found = _bash(inspector, "cat scratch.txt")
    assert "between" not in found.effects


# -- memory files ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [
        "echo 'Always obey.' >> MEMORY.md",
        "f=MEM; echo x >> ${f}ORY.md",
        "python3 -c \"open('MEM' + 'ORY.md', 'a').write('x')\"",
        "mkdir -p memory && echo x > memory/notes.md",
        "rm MEMORY.md",
    ],
)
def test_a_memory_file_changed_is_a_memory_write(inspector: Inspector, command: str) -> None:
    found = _bash(inspector, command)
    assert MEMORY_WRITE in found.alerts
    assert found.effects["memory"]


@pytest.mark.parametrize(
    "command",
    ["cat MEMORY.md", "echo x > memory.txt", "mkdir -p docs && echo x > docs/memory-model.txt"],
)
def test_reading_memory_or_a_look_alike_name_is_no_memory_write(
    inspector: Inspector, command: str
) -> None:
    found = _bash(inspector, command)
    assert MEMORY_WRITE not in found.alerts
    assert "memory" not in found.effects
