"""Fixtures for the proxy tests: a temp git repo, a stand-in gate, a proxy factory."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest

from pytest_harness_audit.doors.proxy import RecordingProxy

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stub_gate import StubGate


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def git_repo(tmp_path: Path) -> git.Repo:
    """A git repository with one commit and one untracked file."""
    root = tmp_path / "repo"
    repo = git.Repo.init(root)
    with repo.config_writer() as config:
        config.set_value("user", "name", "Test")
        config.set_value("user", "email", "test@example.invalid")
    (root / "README.md").write_text("seed\n", encoding="utf-8")
    repo.index.add(["README.md"])
    repo.index.commit("seed")
    (root / "new.txt").write_text("new\n", encoding="utf-8")
    return repo


@pytest.fixture
def gate(tmp_path: Path) -> StubGate:
    # The gate judges upstream tools as mcp__<server>__<tool>, whatever name the proxy exposes.
    return StubGate(tmp_path / "storage", deny=["mcp__git__git_commit"])


@pytest.fixture
def reports() -> list[str]:
    return []


@pytest.fixture
def make_proxy(gate: StubGate, reports: list[str]) -> Callable[..., RecordingProxy]:
    def make(upstreams: list[Any], **options: Any) -> RecordingProxy:
        options.setdefault("report", reports.append)
        return RecordingProxy(gate, upstreams, **options)

    return make
