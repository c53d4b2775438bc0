"""pytest-html's Verdict cell: coloured by verdict, always written out, and it says when a marker
expected the verdict."""

from __future__ import annotations

import importlib.util
import json
import re
from html import unescape
from html.parser import HTMLParser

import pytest

from pytest_harness_audit.plugin.html import verdict_cell, verdict_label
from pytest_harness_audit.readers.viewer.palette import TONES

pytest_plugins = ["pytester"]

needs_html = pytest.mark.skipif(
    importlib.util.find_spec("pytest_html") is None, reason="pytest-html is not installed"
)

SUITE = """
import pytest

@pytest.mark.expect_verdict("FAIL")
def test_expected_fail(harness):
    harness.call("Bash", command="rm -rf /")

@pytest.mark.expect_verdict("WARN")
def test_expected_warn(harness):
    harness.call("WebFetch", url="https://example.com")

@pytest.mark.expect_verdict("WARN")
def test_unexpected(harness):
    harness.call("Glob", pattern="*")

def test_clean(harness):
    harness.call("Glob", pattern="*")

def test_two(harness_factory):
    harness_factory().call("Glob", pattern="*")
    harness_factory().call("Bash", command="rm -rf /")

def test_plain():
    pass
"""


@pytest.mark.parametrize(
    ("verdict", "expected", "label"),
    [
        ("FAIL", "FAIL", "FAIL (expected)"),
        ("WARN", "WARN", "WARN (expected)"),
        ("PASS", "PASS", "PASS"),
        ("PASS", None, "PASS"),
        ("FAIL", None, "FAIL"),
        ("PASS", "FAIL", "PASS (expected FAIL)"),
    ],
)
def test_verdict_label(verdict: str, expected: str | None, label: str) -> None:
    assert verdict_label(verdict, expected) == label


class Spans(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.cells: list[dict[str, str | None]] = []
        self.spans: list[tuple[dict[str, str | None], str]] = []
        self._in_span: dict[str, str | None] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "td":
            self.cells.append(dict(attrs))
        if tag == "span":
            self._in_span = dict(attrs)

    def handle_data(self, data: str) -> None:
        if self._in_span is not None:
            self.spans.append((self._in_span, data))
            self._in_span = None


def test_verdict_cell_colours_each_verdict_and_escapes() -> None:
    cell = Spans(verdict_cell("FAIL (expected), WARN, PASS, <b>"))
    assert cell.cells == [{"class": "col-verdict", "data-verdict": "FAIL"}]
    texts = [text for _, text in cell.spans]
    assert texts == ["FAIL (expected)", "WARN", "PASS", "<b>"]
    styles = [attrs["style"] or "" for attrs, _ in cell.spans]
    for style, tone in zip(styles, ("bad", "warn", "ok", "plain"), strict=True):
        assert f"color:{TONES[tone].text};background:{TONES[tone].background}" in style
    assert "<b>" not in verdict_cell("<b>")
    assert Spans(verdict_cell("")).spans == []


def rows_of(page: str) -> dict[str, str]:
    """The test id and the Verdict cell of each row, from pytest-html's JSON blob."""
    blob = re.search(r'data-jsonblob="([^"]*)"', page)
    assert blob, "pytest-html's data blob is missing"
    data = json.loads(unescape(blob.group(1)))
    rows: dict[str, str] = {}
    for test in data["tests"].values():
        for result in test:
            cells = result["resultsTableRow"]
            rows[re.sub("<[^>]+>", "", cells[1])] = cells[2]
    return rows


@needs_html
def test_report_rows_say_expected_and_carry_the_colours(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--html=report.html", "--self-contained-html")
    result.assert_outcomes(passed=5, failed=1)
    rows = rows_of((pytester.path / "report.html").read_text(encoding="utf-8"))
    texts = {test: [t for _, t in Spans(cell).spans] for test, cell in rows.items()}
    assert texts == {
        "test_suite.py::test_expected_fail": ["FAIL (expected)"],
        "test_suite.py::test_expected_warn": ["WARN (expected)"],
        "test_suite.py::test_unexpected": ["PASS (expected WARN)"],
        "test_suite.py::test_clean": ["PASS"],
        "test_suite.py::test_two": ["PASS", "FAIL"],
        "test_suite.py::test_plain": [],
    }
    fail = Spans(rows["test_suite.py::test_expected_fail"]).spans[0][0]["style"] or ""
    assert f"background:{TONES['bad'].background}" in fail
    warn = Spans(rows["test_suite.py::test_expected_warn"]).spans[0][0]["style"] or ""
    assert f"background:{TONES['warn'].background}" in warn
    ok = Spans(rows["test_suite.py::test_clean"]).spans[0][0]["style"] or ""
    assert f"background:{TONES['ok'].background}" in ok
