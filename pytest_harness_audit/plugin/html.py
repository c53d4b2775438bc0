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
#: ``"PASS, WARN"`` for several sessions).
VERDICT_ATTRIBUTE = "harness_audit_verdict"
PLUGIN_NAME = "harness-audit-html"


class HtmlReportColumns:
    """The pytest-html hooks; a test's sessions come from ``sessions_key`` in its stash."""

    def __init__(self, sessions_key: pytest.StashKey[list[Harness]]) -> None:
        self._sessions_key = sessions_key
        self._extras: Any = importlib.import_module("pytest_html.extras")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """On the "call" report: the verdicts and, as extras, every session's report."""
        report = yield
        sessions = item.stash.get(self._sessions_key, [])
        if report.when != "call" or not sessions:
            return report
        verdicts: list[str] = []
        extras = list(getattr(report, "extras", []))
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
            verdicts.append(session_report.verdict.value)
            extras.append(
                self._extras.html(
                    f'<div class="harness-audit-report"><p>{html.escape(name)} '
                    f"({session_report.verdict.value})</p><pre>{html.escape(text)}</pre></div>"
                )
            )
            extras.append(self._extras.text(text, name=name))
        setattr(report, "extras", extras)  # noqa: B010 (pytest-html's attribute, not TestReport's)
        setattr(report, VERDICT_ATTRIBUTE, ", ".join(verdicts))
        return report

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        """Add the "Verdict" column after the test id."""
        cells.insert(2, '<th class="sortable" data-column-type="verdict">Verdict</th>')

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        """The test's verdicts (empty for tests without a harness session)."""
        verdict = str(getattr(report, VERDICT_ATTRIBUTE, "") or "")
        cells.insert(2, f'<td class="col-verdict">{html.escape(verdict)}</td>')


def register_if_active(config: pytest.Config, sessions_key: pytest.StashKey[list[Harness]]) -> None:
    """Register :class:`HtmlReportColumns` when pytest-html is loaded and writing a report."""
    manager = config.pluginmanager
    if not manager.hasplugin("html") or not config.getoption("htmlpath", None):
        return
    if manager.get_plugin(PLUGIN_NAME) is None:
        manager.register(HtmlReportColumns(sessions_key), PLUGIN_NAME)
