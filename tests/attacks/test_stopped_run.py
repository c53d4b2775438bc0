"""A run stopped inside a test (``pytest.exit``) after a session ran still lists the session in
the summary, and a ``returncode=0`` does not make a session its test's markers reject a clean run.
"""

from __future__ import annotations

import pytest
import yaml  # noqa: F401  # loaded before the in-process runs: pytester unloads what they load

pytest_plugins = ["pytester"]


def run(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_it="import pytest\n" + body)
    return pytester.runpytest("-p", "no:randomly", "--harness-audit")


def test_an_exit_with_status_zero_after_a_denied_call_fails_the_run(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
def test_clean(harness):
    harness.call("Glob", pattern="*")

def test_denied(harness):
    harness.call("Bash", command="rm -rf /")
    pytest.exit("stop here", returncode=0)
""",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "test_it.py::test_denied * FAIL",
            "2 sessions, 2 calls, 1 denied, 0 warned; verdicts: 1 PASS, 0 WARN, 1 FAIL*",
            "harness-audit: test_it.py::test_denied: the run stopped in this test*"
            "expected no worse than PASS, got FAIL.",
        ]
    )


def test_an_exit_after_what_the_markers_expect_keeps_its_status(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
@pytest.mark.expect_verdict("FAIL")
def test_denied(harness):
    harness.call("Bash", command="rm -rf /")
    pytest.exit("stop here", returncode=0)
""",
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["test_it.py::test_denied * FAIL", "1 session, 1 call*"])
    result.stdout.no_fnmatch_line("*the run stopped in this test*")


def test_an_interrupted_run_stays_interrupted(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_denied(harness):
    harness.call("Bash", command="rm -rf /")
    pytest.exit("stop here")
""",
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["test_it.py::test_denied * FAIL"])


def test_an_exit_after_the_chain_became_unreadable_fails_the_run(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
def test_unreadable(harness):
    harness.call("Glob", pattern="*")
    path = harness.chain.path
    path.unlink()
    path.mkdir()
    pytest.exit("stop here", returncode=0)
""",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "test_it.py::test_unreadable * INVALID * FAIL",
            "harness-audit: test_it.py::test_unreadable: the run stopped in this test*"
            "cannot read chain (Is a directory)",
        ]
    )
