"""The git the harness runs itself never runs a program the agent named in the repository's
configuration: it would run outside any call's window, in the test process."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pytest_harness_audit.inspect import Inspector
from pytest_harness_audit.inspect.git_env import GIT_ISOLATION_ENV, isolating_entries
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.workspace import changed_files, diff

_COMMITTER = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def _program(tmp_path: Path, marker: Path) -> Path:
    program = tmp_path / "agent-program"
    program.write_text(f"#!/bin/sh\necho ran >> {marker}\nexit 1\n", encoding="utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def test_the_harness_git_runs_no_fsmonitor_program(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    harness = Harness.create(tmp_path / "ws", template="python-service", policy="audit-only")
    program = _program(tmp_path, marker)
    with (harness.root / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write(f"[core]\n\tfsmonitor = {program}\n")
    (harness.root / "app" / "new.py").write_text("x = 1\n", encoding="utf-8")
    harness.call("Read", file_path="README.md")
    harness.call("Glob", pattern="**/*.py")
    assert "app/new.py" in changed_files(harness.repo)
    assert "+x = 1" in diff(harness.repo)
    harness.close()
    assert not marker.exists(), "the harness ran the agent's fsmonitor program"


def test_diffs_run_no_textconv_external_diff_or_filter_program(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    harness = Harness.create(tmp_path / "ws", template="python-service", policy="audit-only")
    program = _program(tmp_path, marker)
    with (harness.root / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write(f'[diff "agent"]\n\ttextconv = {program}\n\tcommand = {program}\n')
        config.write(f'[filter "Agent.X"]\n\tclean = {program}\n\tsmudge = {program}\n')
        config.write(f"\trequired = true\n[filter]\n\tprocess = {program}\n")
    attributes = "*.py diff=agent filter=Agent.X\n"
    (harness.root / ".gitattributes").write_text(attributes, encoding="utf-8")
    (harness.root / "app" / "main.py").write_text("changed = True\n", encoding="utf-8")
    assert "app/main.py" in changed_files(harness.repo)
    assert "+changed = True" in diff(harness.repo)
    harness.close()
    assert not marker.exists(), "the harness ran the agent's diff program"


def test_the_index_refresh_at_the_start_runs_no_filter_program(tmp_path: Path) -> None:
    # an inspector refreshes the index for the credential files before watching their reads;
    # git hashes a stat-dirty file through its filter's clean program when it refreshes
    marker = tmp_path / "ran"
    harness = Harness.create(tmp_path / "ws", template="python-service", policy="audit-only")
    program = _program(tmp_path, marker)
    env_file = harness.root / ".env"
    env_file.write_text("API_KEY=sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c\n", encoding="utf-8")
    (harness.root / ".gitattributes").write_text(".env filter=agent\n", encoding="utf-8")
    harness.repo.git.add("--force", ".env", ".gitattributes")
    harness.repo.git.commit("-qm", "env", env={**_COMMITTER})
    harness.close()
    with (harness.root / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write(f'[filter "agent"]\n\tclean = {program}\n')
    info = env_file.stat()
    os.utime(env_file, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))
    with Inspector(harness.root):
        pass
    assert not marker.exists(), "the harness ran the agent's filter program"


def test_isolating_entries_come_after_the_callers_own() -> None:
    given = {"GIT_CONFIG_COUNT": "2"}
    entries = isolating_entries(given)
    assert entries["GIT_CONFIG_COUNT"] == "3"
    assert entries["GIT_CONFIG_KEY_2"] == "core.fsmonitor"
    assert isolating_entries({"GIT_CONFIG_COUNT": "x"})["GIT_CONFIG_KEY_0"] == "core.fsmonitor"
    assert GIT_ISOLATION_ENV["GIT_CONFIG_VALUE_0"] == "false"
    assert GIT_ISOLATION_ENV["GIT_CONFIG_GLOBAL"] == os.devnull
