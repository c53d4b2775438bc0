"""The plugin loads the harness on first use; pytester's in-process runs drop what a run
imported. Two runs in a row must still agree on every class (one ``Policy``, one ``Harness``)."""

from __future__ import annotations

import sys

import pytest

# The lazy packages stay loaded across the runs below; what they hand out must not go stale.
import pytest_harness_audit
import pytest_harness_audit.policy

SUITE = """
import pytest

@pytest.mark.harness_policy("strict", enforce=False)
def test_marked(harness):
    harness.call("Read", file_path="README.md")

def test_default(harness):
    harness.call("Glob", pattern="*")
"""


def test_consecutive_in_process_runs_share_one_set_of_classes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    for _ in range(2):
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
        result.assert_outcomes(passed=2)


def test_lazy_names_follow_the_loaded_module(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)
    harness_class = pytest_harness_audit.Harness
    assert harness_class.__module__ == "pytest_harness_audit.session.harness"
    assert (
        pytest_harness_audit.policy.Policy
        is sys.modules["pytest_harness_audit.policy.policy"].Policy
    )
    assert sys.modules[harness_class.__module__].Harness is harness_class
