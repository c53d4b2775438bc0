"""`pytest --harness-audit-html PATH`: the run's session view, written at the end of the run."""

from __future__ import annotations

import pytest
from viewer_support import Dom

pytest_plugins = ["pytester"]

SUITE = """
import pytest

@pytest.mark.expect_verdict("FAIL")
def test_blocked(harness):
    harness.call("Bash", command="rm -rf /")

def test_clean(harness):
    harness.call("Grep", pattern="<img src=x onerror=alert(1)>", path=".")

def test_no_harness():
    pass
"""


def test_writes_one_row_per_session_with_its_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        "--harness-audit", "--harness-audit-dir", "kept", "--harness-audit-html", "out/view.html"
    )
    result.assert_outcomes(passed=3)
    view = pytester.path / "out" / "view.html"
    result.stdout.fnmatch_lines(
        [
            "*= harness audit =*",
            f"harness-audit: session view written to {view} (2 sessions, 2 calls, 1 denied; "
            "1 PASS, 0 WARN, 1 FAIL; 0 invalid chains)",
        ]
    )
    page = view.read_text(encoding="utf-8")
    dom = Dom(page)
    rows = dom.find("tr", cls="session-row")
    assert [r.attrs["data-verdict"] for r in rows] == ["FAIL", "PASS"]
    tests = [e.text for r in rows for e in dom.within(r) if e.tag == "td" and "test" in e.classes]
    assert tests == ["test_suite.py::test_blocked", "test_suite.py::test_clean"]
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_without_harness_audit_the_view_reads_the_temporary_chains(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--harness-audit-html", "view.html")
    result.assert_outcomes(passed=3)
    assert "= harness audit =" not in result.stdout.str()
    result.stdout.fnmatch_lines(["harness-audit: session view written to *view.html (2 sessions*"])
    rows = Dom((pytester.path / "view.html").read_text(encoding="utf-8")).find("tr")
    assert len([r for r in rows if "session-row" in r.classes]) == 2


def test_an_unwritable_path_is_one_line_and_fails_the_run(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    (pytester.path / "blocker").write_text("")
    result = pytester.runpytest("--harness-audit-html", "blocker/view.html")
    result.assert_outcomes(passed=3)
    assert result.ret == 1  # a view the reviewer reads that is not this run's is no pass
    result.stdout.fnmatch_lines(
        ["harness-audit: no session view written: cannot write the session view to *blocker*"]
    )
    assert "Traceback" not in result.stdout.str()


@pytest.mark.slow
def test_under_xdist_the_controller_writes_every_workers_sessions(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        "-p", "xdist", "-n", "2", "--harness-audit", "--harness-audit-html", "view.html"
    )
    result.assert_outcomes(passed=3)
    rows = Dom((pytester.path / "view.html").read_text(encoding="utf-8")).find("tr")
    assert sorted(r.attrs["data-verdict"] for r in rows if "session-row" in r.classes) == [
        "FAIL",
        "PASS",
    ]
