"""Loaded by every pytest process at start-up, the xdist controller included."""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.session.harness import Harness

# The reliability suites' counters must reach the controller's terminal summary; the
# controller never imports tests/reliability/conftest.py, so the reporter is a plugin here.
pytest_plugins = ("reliability.counts_plugin",)

# Hook processes started by any test keep their continuity witnesses in a temporary folder,
# not in the user's state directory (xdist workers inherit it from the controller).
os.environ.setdefault(
    "HARNESS_AUDIT_WITNESS_DIR", tempfile.mkdtemp(prefix="harness-audit-witness-")
)


@pytest.fixture(autouse=True)
def _sessions_closed() -> Iterator[None]:
    """Every session a test opens is closed when the test ends.

    A session holds kernel watches (inotify instances: 128 a user by default) until it is
    closed or collected, and one left in a reference cycle waits for the collector: a suite of
    thousands of sessions would use them up, and each later session would start without its
    credential-read watch (noted WARN, :mod:`pytest_harness_audit.session.kernel_watch`).
    """
    opened: list[Harness] = []
    make = Harness.__init__

    def tracked(self: Harness, *args: Any, **kwargs: Any) -> None:
        make(self, *args, **kwargs)
        opened.append(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Harness, "__init__", tracked)
        yield
    for session in opened:
        with contextlib.suppress(Exception):
            session.close()


@pytest.fixture
def store_session(tmp_path: Path) -> Iterator[Harness]:
    """A permissive ``python-service`` session (only the built-in store rule refuses) that has
    made one call, so its audit store (``../audit`` from the workspace) holds a chain."""
    made = Harness.create(tmp_path, template="python-service", policy="permissive")
    made.call("Bash", command="echo first")
    yield made
    made.close()


@pytest.fixture
def home_witness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A project in the user's home (``HOME`` set to a temporary one) and the witness folder
    in its ``.local/state/harness-audit`` (as the hook door keeps them): the project root and
    the witness folder."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    root = home / "project"
    (root / "app").mkdir(parents=True)
    witness = home / ".local" / "state" / "harness-audit" / "witness"
    witness.mkdir(parents=True)
    return root, witness


#: End-to-end cases the default run leaves to ``-m slow`` (tests/slow_cases.txt).
_SLOW_CASES = Path(__file__).with_name("slow_cases.txt")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the cases listed in ``slow_cases.txt`` slow, before ``-m`` selects by marks."""
    listed = {
        line.strip()
        for line in _SLOW_CASES.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    for item in items:
        if item.nodeid in listed:
            item.add_marker(pytest.mark.slow)
