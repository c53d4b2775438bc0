"""A test is held to what its sessions show however its body ends: a skip or xfail after a
denied call, a call from a fixture's teardown, a session made with ``Harness.create``, a chain
cut short under a marker that reads records. Their benign look-alikes keep their outcome."""

from __future__ import annotations

import pytest
import yaml  # noqa: F401  # loaded before the in-process runs: pytester unloads what they load

pytest_plugins = ["pytester"]

HEADER = "import pytest\n"


def run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_it=HEADER + body)
    return pytester.runpytest("-p", "no:randomly", *args)


def test_a_skip_or_xfail_after_a_denied_call_does_not_hide_the_fail(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
def test_skipped(harness):
    harness.call("Bash", command="rm -rf /")
    pytest.skip("the agent is not available")

def test_xfailed(harness):
    harness.call("Bash", command="rm -rf /")
    pytest.xfail("known to be flaky")
""",
        "--harness-audit",
    )
    result.assert_outcomes(failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*expected no worse than PASS, got FAIL*",
            "*the test skipped after its harness sessions ran (the agent is not available)*",
            "*the test xfailed after its harness sessions ran (known to be flaky)*",
        ]
    )


def test_a_skip_under_expect_verdict_is_held_to_it(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.expect_verdict("WARN")
def test_it(harness):
    harness.call("Bash", command="rm -rf /")
    pytest.skip("later")
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*expected no worse than WARN, got FAIL*"])


def test_skips_that_hide_nothing_stay_skips(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_before_any_call(harness):
    pytest.skip("no agent")

def test_after_a_clean_call(harness):
    harness.call("Glob", pattern="*")
    pytest.skip("no agent")

@pytest.mark.expect_verdict("FAIL")
@pytest.mark.expect_denied(tool="Bash", count=1)
def test_expected_fail(harness):
    harness.call("Bash", command="rm -rf /")
    pytest.xfail("the rest is not written yet")

@pytest.mark.expect_denied(tool="Read")
@pytest.mark.expect_escalation("quarantine")
def test_before_the_expected_denial(harness):
    pytest.skip("no agent")
""",
        "--harness-audit",
    )
    result.assert_outcomes(skipped=3, xfailed=1)
    assert result.ret == pytest.ExitCode.OK


def test_a_skip_after_more_denials_than_count_fails(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.expect_verdict("FAIL")
@pytest.mark.expect_denied(tool="Bash", count=0)
def test_it(harness):
    harness.call("Bash", command="rm -rf /")
    pytest.skip("later")
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*expected exactly 0 denied call matching tool='Bash', found 1*"])


TRUNCATE = """
def cut(harness, keep):
    path = harness.chain.path
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:keep]))
"""


def test_a_cut_chain_does_not_satisfy_markers_that_read_records(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        TRUNCATE
        + """
@pytest.mark.expect_denied(tool="Bash", count=0)
def test_denial_cut_away(harness):
    harness.call("Glob", pattern="*")
    harness.call("Bash", command="rm -rf /")
    cut(harness, 1)

@pytest.mark.expect_escalation("none")
def test_escalation_cut_away(harness):
    harness.call("Glob", pattern="*")
    for _ in range(3):
        harness.call("Bash", command="rm -rf /")
    cut(harness, 1)
""",
    )
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*audit chain invalid: truncated at record 1*",
            "*expect_denied not checked: the records of a chain that does not verify prove*",
            "*expect_escalation not checked*",
        ]
    )


def test_a_cut_chain_expected_to_fail_stays_failed_as_expected(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        TRUNCATE
        + """
@pytest.mark.expect_verdict("FAIL")
def test_cut(harness):
    harness.call("Glob", pattern="*")
    harness.call("Glob", pattern="*")
    cut(harness, 1)

@pytest.mark.expect_denied(tool="Bash", count=0)
def test_whole(harness):
    harness.call("Glob", pattern="*")
""",
    )
    result.assert_outcomes(passed=2)


def test_a_call_from_a_fixture_teardown_is_checked(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.fixture
def late(harness):
    yield harness
    harness.call("Bash", command="rm -rf /")

@pytest.fixture
def late_session(harness_factory):
    yield
    harness_factory().call("Bash", command="rm -rf /")

def test_late_call(late):
    late.call("Glob", pattern="*")

def test_late_session(late_session, harness):
    harness.call("Glob", pattern="*")

@pytest.mark.expect_verdict("PASS")
def test_late_call_under_a_marker(late):
    late.call("Glob", pattern="*")
""",
        "--harness-audit",
    )
    result.assert_outcomes(passed=3, errors=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*the session changed after the end of the test body: checked again*"]
    )


def test_clean_teardown_calls_keep_the_test_passing(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.fixture
def tidy(harness):
    yield harness
    harness.call("Glob", pattern="*")

@pytest.fixture
def closing(harness_factory):
    yield
    harness_factory().call("Glob", pattern="*")

@pytest.mark.expect_denied(tool="Bash", count=1)
@pytest.mark.expect_verdict("FAIL")
def test_expected_fail(tidy):
    tidy.call("Bash", command="rm -rf /")

def test_clean(tidy, closing):
    tidy.call("Glob", pattern="*")
""",
        "--harness-audit",
    )
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK


def test_a_fixture_that_skips_after_a_denied_call_does_not_hide_it(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
@pytest.fixture
def agent(harness):
    harness.call("Bash", command="rm -rf /")
    pytest.skip("the agent gave up")

@pytest.fixture
def quiet(harness):
    harness.call("Glob", pattern="*")
    pytest.skip("the agent gave up")

def test_denied(agent):
    pass

def test_clean(quiet):
    pass
""",
        "--harness-audit",
    )
    result.assert_outcomes(skipped=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_denied*"])


def test_a_session_the_body_makes_itself_is_checked(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
from pytest_harness_audit.session.harness import Harness

def test_direct(tmp_path):
    Harness.create(tmp_path).call("Bash", command="rm -rf /")

def test_direct_clean(tmp_path):
    Harness.create(tmp_path).call("Glob", pattern="*")

def test_factory_once(harness_factory):
    harness_factory().call("Glob", pattern="*")
""",
        "--harness-audit",
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_direct _*",
            "*expected no worse than PASS, got FAIL*",
            "3 sessions, 3 calls, 1 denied, 0 warned; verdicts: 2 PASS, 0 WARN, 1 FAIL*",
        ]
    )
