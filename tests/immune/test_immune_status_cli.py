"""``harness-audit immune status`` reports a session as it ended, not as the wall clock would
score it later (``--now`` gives that reading)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pytest_harness_audit.cli import main
from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def quarantined(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    harness = Harness.create(tmp_path / "run", storage_dir=store, policy="safety", session_id="q")
    for path in (".env", ".env.production", "config/credentials.json", ".env.local"):
        harness.call("Read", file_path=path)
    harness.close()
    return store


def _status(store: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["--storage", str(store), "immune", "status", "q", *extra]) == 0
    return capsys.readouterr().out


def test_an_old_quarantine_still_reads_as_the_session_ended(
    quarantined: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ended = _status(quarantined, capsys)
    assert "level: quarantine" in ended and "score: 12 " in ended
    later = time.time() + 3 * 86400
    monkeypatch.setattr(time, "time", lambda: later)
    assert _status(quarantined, capsys) == ended  # days later, the same reading
    now = _status(quarantined, capsys, "--now")
    assert "score: 0 " in now  # the wall clock's reading: the window has long passed
