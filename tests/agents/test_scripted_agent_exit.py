"""The reference agent's exit status tells a failed script from a played one."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.agents.scripted import EXIT_STEP_FAILED, seen_status
from pytest_harness_audit.session.harness import Harness
from tests.proxy.fork_upstream import launched

AGENT = [sys.executable, "-m", "pytest_harness_audit.agents.scripted"]

PLAYED = """\
name: played
description: Every step known and as expected.
steps:
  - tool: Glob
    params: {pattern: "*"}
    expect: {status: success}
  - tool: Read
    params: {file_path: .env}
    expect: {status: blocked}
  - tool: Read
    params: {file_path: no-such-file.txt}
    expect: {status: error}
"""

UNKNOWN = """\
name: unknown-tool
description: WebFetch is not served by the proxy.
steps:
  - tool: Glob
    params: {pattern: "*"}
  - tool: WebFetch
    params: {url: "https://example.invalid/"}
"""

MISSED = """\
name: missed
description: The read is expected to succeed, and is blocked.
steps:
  - tool: Read
    params: {file_path: .env}
    expect: {status: success}
"""


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Harness]:
    harness = Harness.create(tmp_path / "s", template="python-service", policy="safety")
    harness.start_proxy()
    yield harness
    harness.close()


def _run(session: Harness, tmp_path: Path, text: str) -> tuple[int | None, str, str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    run = session.run_agent([*launched(AGENT), str(path)], timeout=120)
    return run.exit_code, run.stdout, run.stderr


def test_a_played_script_exits_0(session: Harness, tmp_path: Path) -> None:
    code, stdout, stderr = _run(session, tmp_path, PLAYED)
    assert (code, stderr) == (0, "")
    assert len(stdout.splitlines()) == 3


def test_an_unknown_tool_exits_3_with_one_line(session: Harness, tmp_path: Path) -> None:
    code, stdout, stderr = _run(session, tmp_path, UNKNOWN)
    assert code == EXIT_STEP_FAILED == 3
    assert stderr.splitlines() == [
        f"scripted agent: {tmp_path / 'scenario.yaml'}: step 2: tool 'WebFetch' is unknown "
        "to the server"
    ]
    assert len(stdout.splitlines()) == 2  # every step was still attempted


def test_a_missed_expectation_exits_3(session: Harness, tmp_path: Path) -> None:
    code, _, stderr = _run(session, tmp_path, MISSED)
    assert code == 3
    assert stderr.strip().endswith("step 1: Read expected status success, got blocked")
    assert len(stderr.splitlines()) == 1


def test_seen_status() -> None:
    assert seen_status({"isError": False, "text": "[blocked] x"}) == "success"
    assert seen_status({"isError": True, "text": "[blocked] [web4-policy] no"}) == "blocked"
    assert seen_status({"isError": True, "text": "file not found"}) == "error"
