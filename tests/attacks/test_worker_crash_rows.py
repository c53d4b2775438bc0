"""Under pytest-xdist, a worker that crashes after some of its tests finished loses none of their
sessions: the controller's summary, the run's listing and the span file still hold them."""

from __future__ import annotations

import importlib.util
import json

import pytest
import yaml  # noqa: F401  # loaded before the in-process runs: pytester unloads what they load

pytest_plugins = ["pytester"]

SUITE = """
import os
import pytest

@pytest.mark.expect_verdict("FAIL")
@pytest.mark.parametrize("n", range(3))
def test_denied(harness, n):
    harness.call("Bash", command="rm -rf /")

def test_zz_crash(harness):
    harness.call("Glob", pattern="*")
    os._exit(3)
"""

CLEAN = """
import pytest

@pytest.mark.expect_verdict("FAIL")
@pytest.mark.parametrize("n", range(3))
def test_denied(harness, n):
    harness.call("Bash", command="rm -rf /")
"""


def run(pytester: pytest.Pytester, suite: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_suite=suite)
    return pytester.runpytest(
        "-p", "no:randomly", "-n", "1", "--harness-audit", "--harness-audit-dir=kept", *args
    )


def listed_sessions(pytester: pytest.Pytester) -> list[str]:
    (run_file,) = (pytester.path / "kept" / "runs").glob("*.json")
    sessions: list[str] = json.loads(run_file.read_text())["sessions"]
    return sessions


@pytest.mark.slow  # an xdist run of its own, a worker killed: about ten seconds
def test_the_finished_tests_of_a_crashed_worker_stay_in_the_summary(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, SUITE)
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*crashed while running*test_zz_crash*",
            "3 sessions, 3 calls, 3 denied, 0 warned; verdicts: 0 PASS, 0 WARN, 3 FAIL*",
        ]
    )
    assert len(listed_sessions(pytester)) == 3


def test_a_run_without_a_crash_lists_each_session_once(pytester: pytest.Pytester) -> None:
    result = run(pytester, CLEAN)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["3 sessions, 3 calls, 3 denied, 0 warned; *"])
    assert len(set(listed_sessions(pytester))) == 3


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("opentelemetry") is None, reason="needs the otel extra"
)
def test_the_span_file_keeps_the_spans_of_a_crashed_worker(pytester: pytest.Pytester) -> None:
    result = run(pytester, SUITE, "--harness-audit-otel=spans.jsonl")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.no_fnmatch_line("*was changed during the run*")
    result.stdout.no_fnmatch_line("*is not the plugin's*")
    lines = (pytester.path / "spans.jsonl").read_text().splitlines()
    roots = [json.loads(line) for line in lines if json.loads(line)["name"] == "invoke_agent"]
    assert len({root["context"]["trace_id"] for root in roots}) == 3
