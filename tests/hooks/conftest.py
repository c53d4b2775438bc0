"""Fixtures for the hook tests: a host sending hook events (see ``host_support``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from host_support import Host


@pytest.fixture
def host(tmp_path: Path) -> Host:
    """A host with its home folder, managed settings and project under ``tmp_path``."""
    return Host(tmp_path)
