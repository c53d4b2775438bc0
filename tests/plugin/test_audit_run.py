"""`pytest --harness-audit`: kept chains, header, summary, default expectation, JUnit."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pytest_harness_audit.audit.storage import list_sessions
from pytest_harness_audit.audit.verify import verify_chain

pytest_plugins = ["pytester"]

SUITE = """
import pytest

@pytest.mark.expect_verdict("FAIL")
def test_blocked(harness):
    harness.call("Bash", command="rm -rf /")

def test_clean(harness):
    harness.call("Glob", pattern="*")
    harness.call("Read", file_path="README.md")
"""


def test_summary_header_and_kept_chains(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--harness-audit", "--harness-audit-dir", "kept")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "harness-audit: policy safety, chains in *kept",
            "*= harness audit =*",
            "test*calls*denied*warned*chain*head*verdict",
            "test_suite.py::test_blocked*1*1*0*valid*[0-9a-f]*FAIL",
            "test_suite.py::test_clean*2*0*0*valid*[0-9a-f]*PASS",
            "2 sessions, 3 calls, 1 denied, 0 warned; verdicts: 1 PASS, 0 WARN, 1 FAIL; "
            "chains: 2 valid, 0 invalid",
        ]
    )
    kept = pytester.path / "kept"
    sessions = list_sessions(kept)
    assert len(sessions) == 2
    assert all(verify_chain(kept, s).valid for s in sessions)


def test_without_the_flag_no_summary_and_chains_in_tmp(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)
    assert "harness audit" not in result.stdout.str()
    assert not (pytester.path / ".harness-audit").exists()


def test_unmarked_session_must_reach_the_suite_default(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_suite="""
def test_warned(harness):
    harness.call("WebFetch", url="https://example.com")
"""
    )
    result = pytester.runpytest("--harness-audit")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*expected no worse than PASS, got WARN*", "*harness_audit_expect*"]
    )
    pytester.makeini("[pytest]\nharness_audit_expect = WARN\n")
    result = pytester.runpytest("--harness-audit")
    result.assert_outcomes(passed=1)


def test_tampered_chain_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_suite="""
def test_tamper(harness):
    harness.call("Glob", pattern="*")
    harness.call("Glob", pattern="*.md")
    lines = harness.chain.path.read_text().splitlines(keepends=True)
    harness.chain.path.write_text(lines[0].replace("Glob", "Grep") + lines[1])
"""
    )
    result = pytester.runpytest("--harness-audit")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*audit chain invalid*"])


def test_junit_properties(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--harness-audit", "--junitxml=out.xml")
    result.assert_outcomes(passed=2)
    tree = ET.parse(pytester.path / "out.xml")
    props = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in tree.iter("testcase")
    }
    assert props["test_blocked"]["harness_audit_verdict"] == "FAIL"
    assert props["test_clean"]["harness_audit_verdict"] == "PASS"
    assert props["test_clean"]["harness_audit_chain"] == "valid (2 records)"
    # the published head re-checks the stored chain: `audit verify SESSION --head HEX`
    head = props["test_clean"]["harness_audit_head"]
    session = props["test_clean"]["harness_audit_session"]
    assert len(head) == 64 and int(head, 16) >= 0
    kept = pytester.path / ".harness-audit"
    assert verify_chain(kept, session, witness=head).valid
    assert props["test_clean"]["harness_audit_session"].startswith("test_clean-")


@pytest.mark.slow
def test_xdist_two_workers_summary_is_complete(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_suite=SUITE
        + """
@pytest.mark.parametrize("n", range(6))
def test_many(harness, n):
    harness.call("Glob", pattern=f"*{n}")
"""
    )
    result = pytester.runpytest_subprocess(
        "-p", "xdist", "-n", "2", "--harness-audit", "--harness-audit-dir", "kept"
    )
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(
        [
            "8 sessions, 9 calls, 1 denied, 0 warned; verdicts: 7 PASS, "
            "0 WARN, 1 FAIL; chains: 8 valid, 0 invalid"
        ]
    )
    sessions = list_sessions(pytester.path / "kept")
    assert len(sessions) == len(set(sessions)) == 8


def test_pluggy_hooks_classify_and_add_verdict_rules(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
from pytest_harness_audit.readers.verdict import Verdict, VerdictReason

def pytest_harness_audit_classify_tool(tool, params):
    if tool == "db_drop":
        return "file_write"

def pytest_harness_audit_verdict_rules(harness, records):
    if len([r for r in records if r.kind == "call"]) > 2:
        return [VerdictReason(Verdict.WARN, "too-many-calls", "more than two calls")]
""")
    pytester.makepyfile(
        test_suite="""
import pytest

def test_classified(harness):
    harness.register_tool("db_drop", lambda params: "dropped")
    result = harness.call("db_drop", file_path="SOUL.md")
    assert result.evaluation.category == "file_write"
    assert result.blocked  # the persona rule applies to file_write

@pytest.mark.expect_verdict("WARN")
def test_extra_rule(harness):
    for _ in range(3):
        harness.call("Glob", pattern="*")
    assert [r.code for r in harness.verdict_reasons] == ["too-many-calls"]
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)
