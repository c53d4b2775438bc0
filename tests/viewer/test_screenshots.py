"""Screenshots of the viewer and of the pytest-html report, from headless Chromium.

Each screenshot is checked by assertions on the DOM Chromium rendered (rows, colours, SVG
points); the PNGs land in ``$HARNESS_AUDIT_ARTIFACTS`` for a person to look at.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from chromium import artifacts_dir, chromium_or_skip, dump_dom, screenshot
from viewer_support import Dom, StoredRun

from pytest_harness_audit.readers.viewer import SessionRef, write_view
from pytest_harness_audit.readers.viewer.palette import TONES, VERDICT_TONES

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def browser() -> str:
    return chromium_or_skip()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artifacts_dir(tmp_path_factory)


def css_rule(page: str, selector: str) -> str:
    found = re.search(re.escape(selector) + r"\s*\{([^}]*)\}", page)
    assert found, f"no CSS rule for {selector}"
    return found.group(1)


@pytest.mark.slow
def test_run_overview(browser: str, artifacts: Path, stored_run: StoredRun, tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    write_view(page, [SessionRef(str(stored_run.storage), s) for s in stored_run.sessions])
    assert screenshot(browser, page, artifacts / "viewer-run-overview.png", tmp_path / "p") == (
        1400,
        1000,
    )
    assert screenshot(
        browser,
        page,
        artifacts / "viewer-run-overview-phone.png",
        tmp_path / "p",
        width=390,
        height=1400,
    ) == (390, 1400)
    rendered = dump_dom(browser, page, tmp_path / "p")
    dom = Dom(rendered)
    rows = dom.find("tr", cls="session-row")
    assert [r.attrs["data-verdict"] for r in rows] == ["PASS", "FAIL", "FAIL"]
    badges = [e for r in rows for e in dom.within(r) if e.tag == "span" and "badge" in e.classes]
    assert [b.text for b in badges if b.text in ("PASS", "FAIL")] == ["PASS", "FAIL", "FAIL"]
    assert f"background: {VERDICT_TONES['FAIL'].background}" in css_rule(rendered, ".verdict-FAIL")
    assert f"background: {VERDICT_TONES['PASS'].background}" in css_rule(rendered, ".verdict-PASS")


@pytest.mark.slow
def test_a_session_with_a_quarantine(
    browser: str, artifacts: Path, stored_run: StoredRun, tmp_path: Path
) -> None:
    page = tmp_path / "quarantine.html"
    write_view(page, [SessionRef(str(stored_run.storage), stored_run.quarantined)])
    png = artifacts / "viewer-session-quarantine.png"
    assert screenshot(browser, page, png, tmp_path / "p", height=1400) == (1400, 1400)
    dom = Dom(dump_dom(browser, page, tmp_path / "p"))
    points = dom.find("circle", cls="point")
    assert [float(p.attrs["data-score"]) for p in points][-2:] == [0.0, 0.0]
    assert max(float(p.attrs["data-score"]) for p in points) == 10
    assert {p.attrs["fill"] for p in points if p.attrs["data-level"] == "quarantine"} == {
        TONES["bad"].border
    }
    (quarantine,) = dom.find("line", data_threshold="quarantine")
    assert quarantine.attrs["stroke"] == TONES["bad"].border
    labels = [d.attrs["data-label"] for d in dom.find("details")]
    assert "QUARANTINE" in labels and "QUARANTINED" in labels and "LIFT" in labels


@pytest.mark.skipif(
    importlib.util.find_spec("pytest_html") is None, reason="pytest-html is not installed"
)
@pytest.mark.slow
def test_the_pytest_html_report(
    browser: str, artifacts: Path, pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(
        test_suite="""
import pytest

@pytest.mark.expect_verdict("FAIL")
def test_destructive_command_is_refused(harness):
    harness.call("Bash", command="rm -rf /")

@pytest.mark.expect_verdict("WARN")
def test_network_fetch_is_warned(harness):
    harness.call("WebFetch", url="https://example.com")

def test_reading_is_fine(harness):
    harness.call("Read", file_path="README.md")
"""
    )
    result = pytester.runpytest("--html=report.html", "--self-contained-html")
    result.assert_outcomes(passed=3)
    page = pytester.path / "report.html"
    png = artifacts / "pytest-html-report.png"
    assert screenshot(browser, page, png, tmp_path / "p") == (1400, 1000)
    dom = Dom(dump_dom(browser, page, tmp_path / "p"))
    cells = dom.find("td", cls="col-verdict")
    spans = [(e.text, e.attrs["style"]) for c in cells for e in dom.within(c) if e.tag == "span"]
    by_text = dict(spans)
    assert sorted(by_text) == ["FAIL (expected)", "PASS", "WARN (expected)"]
    for text, tone in (("FAIL (expected)", "bad"), ("WARN (expected)", "warn"), ("PASS", "ok")):
        assert f"background:{TONES[tone].background}" in by_text[text]


def test_without_chromium_the_tests_skip_saying_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from chromium import MISSING

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("HARNESS_AUDIT_REQUIRE_CHROMIUM", raising=False)
    with pytest.raises(pytest.skip.Exception, match="headless Chromium not found on PATH"):
        chromium_or_skip()
    assert "apt-get install -y chromium" in MISSING
    monkeypatch.setenv("HARNESS_AUDIT_REQUIRE_CHROMIUM", "1")
    with pytest.raises(pytest.fail.Exception, match="headless Chromium not found on PATH"):
        chromium_or_skip()
    (tmp_path / "chromium-browser").write_text("#!/bin/sh\n")
    (tmp_path / "chromium-browser").chmod(0o755)
    assert chromium_or_skip() == str(tmp_path / "chromium-browser")
