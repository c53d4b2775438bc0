"""pytest-html's Verdict cell shows a session as it ended: a call a fixture's teardown made after
the test body turns the row's PASS into FAIL, with and without xdist. A teardown that changes
nothing leaves the cell as the body left it."""

from __future__ import annotations

import importlib.util
import json
import re
from html import unescape

import pytest
import yaml  # noqa: F401  # loaded before the in-process runs: pytester unloads what they load

pytest_plugins = ["pytester"]

needs_html = pytest.mark.skipif(
    importlib.util.find_spec("pytest_html") is None, reason="pytest-html is not installed"
)

SUITE = """
import pytest

@pytest.fixture
def late(harness):
    yield harness
    harness.call("Bash", command="rm -rf /")

@pytest.fixture
def tidy(harness):
    yield harness
    harness.call("Glob", pattern="*")

def test_late(late):
    late.call("Glob", pattern="*")

def test_tidy(tidy):
    tidy.call("Glob", pattern="*")
"""


def cells(page: str) -> dict[str, list[str]]:
    """The Verdict cell's texts of each row (by test id), from pytest-html's JSON blob."""
    blob = re.search(r'data-jsonblob="([^"]*)"', page)
    assert blob, "pytest-html's data blob is missing"
    data = json.loads(unescape(blob.group(1)))
    rows: dict[str, list[str]] = {}
    for test in data["tests"].values():
        for result in test:
            row = result["resultsTableRow"]
            test_id = re.sub("<[^>]+>", "", row[1])
            rows[test_id] = re.findall(r'class="harness-verdict"[^>]*>([^<]*)<', row[2])
    return rows


@pytest.mark.slow
@needs_html
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["in-process", "xdist"])
def test_the_cell_shows_the_session_as_it_ended(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:randomly", *workers, "--html=report.html")
    result.assert_outcomes(passed=2)
    rows = cells((pytester.path / "report.html").read_text(encoding="utf-8"))
    assert rows["test_suite.py::test_late"] == ["FAIL"]
    assert rows["test_suite.py::test_tidy"] == ["PASS"]
