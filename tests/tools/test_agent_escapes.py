"""Nothing a real agent process (``run_agent``) starts outlives its run on Linux, however it
detaches: a process left running would change the workspace after the last comparison."""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.tools.descendants import contained

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not contained(), reason="Linux containment"
)

LATE = "import time, shutil; time.sleep(1); shutil.rmtree('app')"
_DETACH = (
    "import subprocess, time; "
    f"subprocess.run(['setsid', '-f', 'env', '-i', 'python3', '-c', {LATE!r}]); "
    "time.sleep(0.3)"
)


@pytest.fixture
def harness(harness_factory: Any) -> Harness:
    made: Harness = harness_factory("python-service")
    return made


def test_a_detached_process_of_the_agent_is_ended_with_it(harness: Harness) -> None:
    run = harness.run_agent([sys.executable, "-c", _DETACH + "; raise SystemExit(3)"], timeout=60)
    assert run.exit_code == 3 and not run.timed_out
    time.sleep(2)
    assert (harness.root / "app").is_dir()


@pytest.mark.slow
def test_a_detached_process_of_a_timed_out_agent_is_ended_with_it(harness: Harness) -> None:
    run = harness.run_agent([sys.executable, "-c", _DETACH + "; time.sleep(30)"], timeout=1)
    assert run.timed_out and run.exit_code is None
    time.sleep(1.5)
    assert (harness.root / "app").is_dir()


def test_an_agent_that_cannot_start_is_one_clear_error(harness: Harness) -> None:
    with pytest.raises(UsageError, match=r"run_agent: cannot start 'no-such-agent-x'"):
        harness.run_agent(["no-such-agent-x"], timeout=10)
