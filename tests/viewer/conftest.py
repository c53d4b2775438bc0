"""Fixtures of the viewer tests: one stored run, played once per test process."""

from __future__ import annotations

import pytest
from viewer_support import StoredRun, make_run


@pytest.fixture(scope="session")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> StoredRun:
    """Three stored sessions (clean, denied, quarantined then lifted); do not write to it."""
    return make_run(tmp_path_factory.mktemp("viewer-run"))
