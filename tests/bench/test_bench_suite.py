"""The suite benchmark times each pytest run from a flushed disk: every session writes its
chain durably, so a run started while the steps before it (the chain benchmark's files) are
still being written back would pay for them and the overhead figure would lie."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.bench import suite


def test_each_timed_run_starts_after_a_sync(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    events: list[str] = []
    monkeypatch.setattr(suite.os, "sync", lambda: events.append("sync"))

    def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        events.append("run " + " ".join(argv[argv.index("pytest") + 1 :]))
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(suite.subprocess, "run", run)
    figures = suite.measure(tests=1, calls=1, scenario_tests=1, repeat=2)
    runs = [at for at, event in enumerate(events) if event.startswith("run")]
    assert len(runs) == 1 + 4 * 2  # the warm-up, then four variants a round
    assert all(at > 0 and events[at - 1] == "sync" for at in runs)
    assert figures.plain_s >= 0 and figures.audited_s >= 0
