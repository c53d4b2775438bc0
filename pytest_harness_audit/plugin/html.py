"""pytest-html integration: a "Verdict" column and each session's report in the test's extras.

Registered by the plugin only when pytest-html is active (``--html``), so the plugin loads and
works without it. The verdicts travel on the test report, so under xdist the controller (which
builds the HTML) sees what the workers judged.
"""

from __future__ import annotations

import html
import importlib
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_harness_audit.errors import HarnessAuditError

if TYPE_CHECKING:
    from pytest_harness_audit.session.harness import Harness

#: The attribute of a test's "call" report holding its sessions' verdicts (``"FAIL"``,
#: ``"PASS, WARN"`` for several sessions, ``"FAIL (expected)"`` when ``expect_verdict`` asked
#: for it, ``"PASS (expected FAIL)"`` when it asked for another).
VERDICT_ATTRIBUTE = "harness_audit_verdict"
PLUGIN_NAME = "harness-audit-html"
#: The Verdict cell's text the test's call report got (``item.stash``).
CELL_KEY: pytest.StashKey[str] = pytest.StashKey()
#: The palette tone of each verdict in the Verdict cell.
CELL_TONES = {"PASS": "ok", "WARN": "warn", "FAIL": "bad"}


def verdict_label(verdict: str, expected: str | None) -> str:
    """``FAIL (expected)`` when a marker expected this verdict, ``FAIL (expected WARN)`` when it
    expected another; the bare verdict otherwise (and for an expected PASS)."""
    if expected is None or (expected == verdict == "PASS"):
        return verdict
    return f"{verdict} (expected)" if expected == verdict else f"{verdict} (expected {expected})"


def verdict_cell(text: str) -> str:
    """The Verdict cell: each session's verdict coloured (PASS green, WARN amber, FAIL red),
    and always written out, so the colour is never the only sign."""
    from pytest_harness_audit.readers.viewer.palette import TONES

    spans = []
    for label in filter(None, (part.strip() for part in text.split(","))):
        tone = TONES.get(CELL_TONES.get(label.split(" ", 1)[0], ""), TONES["plain"])
        style = (
            f"color:{tone.text};background:{tone.background};border:1px solid {tone.border};"
            "border-radius:4px;padding:0 6px;font-weight:600;white-space:nowrap"
        )
        spans.append(f'<span class="harness-verdict" style="{style}">{html.escape(label)}</span>')
    first = text.split(",", 1)[0].strip().split(" ", 1)[0]
    return f'<td class="col-verdict" data-verdict="{html.escape(first)}">{" ".join(spans)}</td>'


class HtmlReportColumns:
    """The pytest-html hooks; a test's sessions come from ``sessions_key`` in its stash."""

    def __init__(self, sessions_key: pytest.StashKey[list[Harness]]) -> None:
        self._sessions_key = sessions_key
        self._extras: Any = importlib.import_module("pytest_html.extras")
        #: Each test's call report until its teardown report comes (on the process that
        #: builds the page: the xdist controller).
        self._calls: dict[str, pytest.TestReport] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """On the "call" report: the verdicts and, as extras, every session's report. On the
        "teardown" report, when a session changed after the call (a fixture's teardown made a
        call): the verdicts and reports again, which the call's row then shows."""
        report = yield
        sessions = item.stash.get(self._sessions_key, [])
        if report.when not in ("call", "teardown") or not sessions:
            return report
        verdicts, extras = self._verdicts_and_extras(item, sessions)
        text = ", ".join(verdicts)
        if report.when == "teardown" and item.stash.get(CELL_KEY, None) == text:
            return report
        item.stash[CELL_KEY] = text
        extras = list(getattr(report, "extras", [])) + extras
        setattr(report, "extras", extras)  # noqa: B010 (pytest-html's attribute, not TestReport's)
        setattr(report, VERDICT_ATTRIBUTE, text)
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Before pytest-html builds the test's rows (at its teardown report): the verdicts a
        teardown report carries replace those of the call's row."""
        if report.when == "call":
            self._calls[report.nodeid] = report
        elif report.when == "teardown":
            call = self._calls.pop(report.nodeid, None)
            late = getattr(report, VERDICT_ATTRIBUTE, None)
            if call is not None and late is not None:
                setattr(call, VERDICT_ATTRIBUTE, late)

    def _verdicts_and_extras(
        self, item: pytest.Item, sessions: list[Harness]
    ) -> tuple[list[str], list[Any]]:
        verdicts: list[str] = []
        extras: list[Any] = []
        expected = _expected_verdict(item)
        for index, harness in enumerate(sessions, start=1):
            name = f"harness audit report {index}" if len(sessions) > 1 else "harness audit report"
            try:
                session_report = harness.report()
            except HarnessAuditError as exc:
                verdicts.append("?")
                extras.append(
                    self._extras.html(f"<p>{html.escape(name)}: {html.escape(str(exc))}</p>")
                )
                continue
            text = session_report.render()
            verdicts.append(verdict_label(session_report.verdict.value, expected))
            extras.append(
                self._extras.html(
                    f'<div class="harness-audit-report"><p>{html.escape(name)} '
                    f"({session_report.verdict.value})</p><pre>{html.escape(text)}</pre></div>"
                )
            )
            extras.append(self._extras.text(text, name=name))
        return verdicts, extras

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        """Add the "Verdict" column after the test id."""
        cells.insert(2, '<th class="sortable" data-column-type="verdict">Verdict</th>')

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        """The test's verdicts (empty for tests without a harness session)."""
        cells.insert(2, verdict_cell(str(getattr(report, VERDICT_ATTRIBUTE, "") or "")))


def _expected_verdict(item: pytest.Item) -> str | None:
    """The verdict the closest ``expect_verdict`` marker asks for (checked at collection)."""
    from pytest_harness_audit.plugin.markers import parse_expect_verdict

    mark = item.get_closest_marker("expect_verdict")
    if mark is None:
        return None
    try:
        return parse_expect_verdict(mark.args, mark.kwargs)
    except HarnessAuditError:
        return None


def register_if_active(config: pytest.Config, sessions_key: pytest.StashKey[list[Harness]]) -> None:
    """Register :class:`HtmlReportColumns` when pytest-html is loaded and writing a report."""
    manager = config.pluginmanager
    if not manager.hasplugin("html") or not config.getoption("htmlpath", None):
        return
    if manager.get_plugin(PLUGIN_NAME) is None:
        manager.register(HtmlReportColumns(sessions_key), PLUGIN_NAME)
