"""The page itself: overview rows, timeline tones and labels, the score plot, escaping, colours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from viewer_support import HOSTILE, Dom, StoredRun

from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.readers.viewer import SessionRef, build_view, render_html, write_view
from pytest_harness_audit.readers.viewer.palette import (
    MIN_CONTRAST,
    TONES,
    VERDICT_TONES,
    contrast,
)


@pytest.fixture(scope="module")
def page(stored_run: StoredRun, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("view") / "view.html"
    write_view(out, [SessionRef(str(stored_run.storage), s) for s in stored_run.sessions])
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def dom(page: str) -> Dom:
    return Dom(page)


def section(dom: Dom, session: str) -> list:
    (found,) = dom.find("section", data_session=session)
    return dom.within(found)


def test_overview_has_one_row_per_session_with_verdict_calls_denied_chain_head(
    dom: Dom, stored_run: StoredRun
) -> None:
    rows = dom.find("tr", cls="session-row")
    assert [r.attrs["data-session"] for r in rows] == stored_run.sessions
    assert [r.attrs["data-verdict"] for r in rows] == ["PASS", "FAIL", "FAIL"]
    cells = {r.attrs["data-session"]: re.sub(r"\s+", " ", r.text).strip() for r in rows}
    assert cells["clean"].startswith("clean PASS 2 0 0 observe valid 2 records")
    assert cells["denied"].startswith("denied FAIL 2 1 0 observe valid")
    assert cells["quarantined"].startswith("quarantined FAIL 9 1 0 quarantine valid")
    badges = dom.find("span", cls="verdict-FAIL")
    assert badges and all(b.text == "FAIL" for b in badges)


def test_timeline_labels_and_tones_follow_decision_and_status(dom: Dom) -> None:
    denied = [e for e in section(dom, "denied") if e.tag == "details"]
    assert [(d.attrs["data-label"], d.attrs["data-tone"]) for d in denied] == [
        ("ALLOW", "ok"),
        ("DENIED", "bad"),
    ]
    assert "rm -rf /" in denied[1].text and "blocked" in denied[1].text
    quarantined = [e for e in section(dom, "quarantined") if e.tag == "details"]
    labels = [d.attrs["data-label"] for d in quarantined]
    assert labels.count("NOTICE") == 1 and labels.count("QUARANTINE") == 1
    assert labels.count("QUARANTINED") == 1 and labels.count("LIFT") == 1
    assert labels[-1] == "ALLOW"  # work resumed after the lift
    tones = {d.attrs["data-label"]: d.attrs["data-tone"] for d in quarantined}
    assert tones == {
        "ALLOW": "ok",
        "NOTICE": "warn",
        "QUARANTINE": "bad",
        "QUARANTINED": "bad",
        "LIFT": "info",
    }
    strip = [e for e in section(dom, "quarantined") if e.tag == "a" and "tone-bad" in e.classes]
    assert len(strip) == 2


def test_call_details_hold_the_verbose_params(dom: Dom) -> None:
    (grep,) = [d for d in section(dom, "clean") if d.tag == "details" and "Grep" in d.text]
    assert '"pattern": "<script>alert(1)</script>"' in grep.text
    assert "audit:" in grep.text  # the record id


def test_agent_strings_are_escaped(page: str) -> None:
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page


def test_score_plot_points_thresholds_and_markers(dom: Dom) -> None:
    inside = section(dom, "quarantined")
    points = [e for e in inside if e.tag == "circle" and "point" in e.classes]
    scores = [float(p.attrs["data-score"]) for p in points]
    # one point per call and per lift; the score climbs to the quarantine threshold, a lift
    # brings it back to zero
    assert len(points) == 9 + 1
    assert max(scores) == 10
    lift_at = scores.index(0.0, scores.index(10.0))
    assert scores[: scores.index(10.0) + 1] == sorted(scores[: scores.index(10.0) + 1])
    assert scores[lift_at:] == [0.0, 0.0]
    thresholds = {
        e.attrs["data-threshold"]: e for e in inside if e.tag == "line" and "threshold" in e.classes
    }
    assert {k: float(v.attrs["data-value"]) for k, v in thresholds.items()} == {
        "notice": 3.0,
        "quarantine": 10.0,
    }
    assert float(thresholds["quarantine"].attrs["y1"]) < float(thresholds["notice"].attrs["y1"])
    peak = next(p for p in points if p.attrs["data-score"] == "10")
    assert float(peak.attrs["cy"]) == pytest.approx(float(thresholds["quarantine"].attrs["y1"]))
    xs = [float(p.attrs["cx"]) for p in points]
    assert xs == sorted(xs)
    markers = [e.attrs["data-kind"] for e in inside if e.tag == "line" and "marker" in e.classes]
    assert markers == ["notice", "quarantine", "lift"]
    (svg,) = [e for e in inside if e.tag == "svg"]
    assert "peaking at 10" in svg.text


def test_escalations_and_lifts_table(dom: Dom) -> None:
    inside = section(dom, "quarantined")
    (table,) = [e for e in inside if e.tag == "table" and "immune-steps" in e.classes]
    rows = [
        [c.text.strip() for c in dom.within(row) if c.tag == "td"]
        for row in dom.within(table)
        if row.tag == "tr" and "td" in {c.tag for c in dom.within(row)}
    ]
    assert [row[:2] for row in rows] == [["4", "NOTICE"], ["8", "QUARANTINE"], ["10", "LIFT"]]
    assert rows[0][2].startswith("trigger repeated_failure: score 4")
    assert "≥ 10, session scope, 7 evidence records" in rows[1][2]
    assert rows[2][2] == "flaky command fixed; resuming (ended quarantine)"
    notes = [e.text for e in section(dom, "clean") if e.tag == "p" and "muted" in e.classes]
    assert notes == ["none"]


def test_page_is_self_contained_and_responsive(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    assert "@media (max-width: 700px)" in page
    assert "max-width: 1400px" in page


def test_every_tone_reads_at_wcag_aa() -> None:
    for name, tone in {**TONES, **VERDICT_TONES}.items():
        assert contrast(tone.text, tone.background) >= MIN_CONTRAST, name
    for name in ("ok", "warn", "bad", "info"):
        # the page background is white and #f6f8fa; tone text must read on both
        assert contrast(TONES[name].text, "#f6f8fa") >= MIN_CONTRAST, name
    assert contrast("#000000", "#ffffff") == pytest.approx(21)


def test_a_tampered_chain_shows_invalid_with_its_first_failure(
    stored_run: StoredRun, tmp_path: Path
) -> None:
    import shutil

    storage = tmp_path / "store"
    shutil.copytree(stored_run.storage, storage)
    chain = StorageLayout.at(storage).paths("denied").chain
    lines = chain.read_bytes().splitlines(keepends=True)
    chain.write_bytes(lines[0].replace(b"README.md", b"README.mx") + b"".join(lines[1:]))
    run = build_view([SessionRef(str(storage), "denied")])
    (session,) = run.sessions
    assert not session.chain.valid and session.verdict == "FAIL"
    dom = Dom(render_html(run))
    (chain_p,) = dom.find("p", cls="chain")
    assert chain_p.attrs["data-valid"] == "false"
    assert "INVALID" in chain_p.text and "First failure: record" in chain_p.text
    assert "audit chain invalid" in dom.find("ul", cls="reasons")[0].text
