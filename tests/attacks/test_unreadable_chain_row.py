"""A session whose chain can no longer be read at all (a folder where its file was) is still a
row of the summary and of the JUnit properties: invalid, FAIL, with the head its writer kept,
and the test fails once, naming the path."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import yaml  # noqa: F401  # loaded before the in-process runs: pytester unloads what they load

pytest_plugins = ["pytester"]

SUITE = """
def test_unreadable(harness):
    harness.call("Glob", pattern="*")
    path = harness.chain.path
    path.unlink()
    path.mkdir()

def test_readable(harness):
    harness.call("Glob", pattern="*")
"""


def test_an_unreadable_chain_is_listed_as_invalid(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:randomly", "--harness-audit", "--junitxml=out.xml")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_unreadable*: cannot read chain (Is a directory)",
            "test_suite.py::test_readable * valid * PASS",
            "test_suite.py::test_unreadable * 0 * INVALID * FAIL",
            "2 sessions, 1 call, 0 denied, 0 warned; verdicts: 1 PASS, 0 WARN, 1 FAIL; "
            "chains: 1 valid, 1 invalid",
        ]
    )
    properties = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(pytester.path / "out.xml").iter("testcase")
    }
    assert properties["test_unreadable"]["harness_audit_verdict"] == "FAIL"
    assert properties["test_unreadable"]["harness_audit_chain"] == "invalid (0 records)"
    assert len(properties["test_unreadable"]["harness_audit_head"]) == 64
    assert properties["test_readable"]["harness_audit_verdict"] == "PASS"
