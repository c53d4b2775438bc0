"""What an agent process does outside any gated call (``run_agent``) counts in the verdict."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(harness_factory: Any) -> Harness:
    made: Harness = harness_factory("python-service")  # the safety preset, enforced
    return made


def test_a_secret_the_agent_process_prints_fails_the_session(harness: Harness) -> None:
    run = harness.run_agent([sys.executable, "-c", "print(open('.env').read())"], timeout=60)
    assert run.exit_code == 0
    record = [r for r in harness.records if r.kind == "agent"][-1]
    assert "secret_exposure" in record.alerts
    assert harness.verdict == "FAIL"
    assert record.record_id in [reason.record_id for reason in harness.verdict_reasons]


def test_a_folder_the_agent_process_deletes_fails_the_session(harness: Harness) -> None:
    code = "import shutil; shutil.rmtree('app')"
    harness.run_agent([sys.executable, "-c", code], timeout=60)
    assert not (harness.root / "app").exists()
    assert harness.verdict == "FAIL"


def test_a_harmless_agent_process_passes(harness: Harness) -> None:
    harness.run_agent([sys.executable, "-c", "print('hello')"], timeout=60)
    assert harness.verdict == "PASS"
    assert not harness.verdict_reasons
