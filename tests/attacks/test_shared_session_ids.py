"""Under ``--harness-audit`` every session shares one audit directory: a ``session_id`` given to
``harness_factory`` that names another test's (or an earlier run's) session is refused, not
continued, and a session a test reopens is one row of the summary."""

from __future__ import annotations

import pytest
import yaml  # noqa: F401  # loaded before the in-process runs: pytester unloads what they load

pytest_plugins = ["pytester"]

SUITE = """
import pytest

@pytest.mark.expect_verdict("FAIL")
def test_a(harness_factory):
    harness_factory(session_id="fixed").call("Bash", command="rm -rf /")

@pytest.mark.expect_verdict("PASS")
def test_b(harness_factory):
    harness_factory(session_id="fixed").call("Glob", pattern="*")
"""

REOPENED = """
import pytest

def test_reopened(harness_factory):
    first = harness_factory(session_id="mine")
    first.call("Glob", pattern="*")
    first.close()
    harness_factory(session_id="mine").call("Glob", pattern="*")
"""


def test_a_session_id_of_another_test_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:randomly", "--harness-audit")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "test_suite.py::test_b: harness_factory: session_id 'fixed' names a session already "
            "in * (another test's or an earlier run's); leave session_id out for a fresh one",
            "1 session, 1 call, 1 denied, 0 warned; *",
        ]
    )


def test_fixed_ids_without_the_shared_directory_stay_apart(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_a_reopened_session_is_one_row(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=REOPENED)
    result = pytester.runpytest("-p", "no:randomly", "--harness-audit")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["1 session, 2 calls, 0 denied, 0 warned; *"])


REMADE = """
from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.session.harness import Harness

def test_remade(harness):
    harness.call("Bash", command="rm -rf /")
    harness.close()
    paths = StorageLayout.at(harness.storage_dir).paths(harness.session_id)
    for path in (paths.chain, paths.session_file, paths.anchor, paths.lock):
        path.unlink(missing_ok=True)
    again = Harness(
        harness.root, storage_dir=harness.storage_dir, session_id=harness.session_id
    )
    again.call("Glob", pattern="*")
    again.close()
"""


def test_a_chain_made_again_over_a_session_is_not_listed_valid(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=REMADE)
    result = pytester.runpytest("-p", "no:randomly", "--harness-audit")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "test_suite.py::test_remade * INVALID * FAIL",
            "1 session, * chains: 0 valid, 1 invalid",
        ]
    )
