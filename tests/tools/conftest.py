from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.tools import NetworkStub, ToolBox


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty workspace root, next to (not inside) an `outside` directory."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the workspace holding a file no tool may touch."""
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret.txt").write_text("top secret\n")
    return directory


@pytest.fixture
def network() -> NetworkStub:
    return NetworkStub()


@pytest.fixture
def toolbox(root: Path, network: NetworkStub) -> ToolBox:
    return ToolBox(root, network)
