"""The plugin's pytest hooks: options, markers, the end-of-test check, the summary and xdist.

A hook that needs more than the option and marker modules (the harness, the readers, syrupy,
the summary) imports it inside, and only once a test has made a harness session, carries one of
the plugin's markers or runs under ``--harness-audit``: a run that uses no harness loads nothing
else.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.plugin.markers import (
    check_marker_arguments,
    marker_arguments,
    register_markers,
)
from pytest_harness_audit.plugin.options import (
    OPTIONS_KEY,
    SESSIONS_KEY,
    SNAPSHOT_KEY,
    SUMMARIES_KEY,
    WORKER_OUTPUT,
    add_options,
    resolve_options,
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``--harness-audit…`` option group and ini settings."""
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Publish the plugin's own hook specifications."""
    from pytest_harness_audit.plugin import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    """Register markers and resolve the options once."""
    register_markers(config)
    from pytest_harness_audit.plugin.storage_path import with_storage_path

    config.stash[OPTIONS_KEY] = with_storage_path(config, resolve_options(config))
    config.stash[SUMMARIES_KEY] = []
    if config.pluginmanager.hasplugin("html"):
        from pytest_harness_audit.plugin import html

        html.register_if_active(config, SESSIONS_KEY)


def pytest_report_header(config: pytest.Config) -> str | None:
    """One header line when auditing."""
    options = config.stash[OPTIONS_KEY]
    if not options.enabled:
        return None
    return f"harness-audit: policy {options.policy}, chains in {options.directory}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse bad marker arguments up front, naming the test."""
    check_marker_arguments(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """After the test body: check every harness session against the markers."""
    __tracebackhide__ = True  # the failure is the message, not the plugin's code
    yield
    sessions = item.stash.get(SESSIONS_KEY, [])
    snapshot = item.stash.get(SNAPSHOT_KEY, None)
    if not sessions:
        if snapshot is not None:
            raise AssertionError("harness_snapshot: the test made no harness session to snapshot")
        return
    from pytest_harness_audit.plugin.support import end_of_test_problems
    from pytest_harness_audit.readers.snapshot import diff_colors, snapshot_sessions

    options = item.config.stash[OPTIONS_KEY]
    markers = marker_arguments(item)
    problems = []
    for harness in sessions:
        problems.extend(end_of_test_problems(harness, markers, options))
    if snapshot is not None:
        problems.extend(snapshot_sessions(sessions, snapshot, colors=diff_colors(item.config)))
    if problems:
        raise AssertionError("\n\n".join(problems))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A project error (a bad scenario, policy, template …) is reported as its one line, naming
    the test, not under the plugin's traceback (``--tb=long`` or ``--fulltrace`` keep it).
    After teardown: summary rows and JUnit properties of the test's sessions."""
    _publish_sessions(item, call)  # before the report is made: it copies the user properties
    _export_otel(item, call)
    report = yield
    if (
        report.failed
        and call.excinfo is not None
        and call.excinfo.errisinstance(HarnessAuditError)
        and not item.config.option.fulltrace
        and item.config.option.tbstyle != "long"
    ):
        report.longrepr = f"{item.nodeid}: {call.excinfo.value}"
    if report.failed and call.when == "call":
        _add_snapshot_diffs(item, report)
    return report


def _add_snapshot_diffs(item: pytest.Item, report: pytest.TestReport) -> None:
    """Every changed line of a failed ``audit_snapshot`` comparison, as a report section."""
    assertion = getattr(item, "funcargs", {}).get("audit_snapshot")
    if assertion is None:
        return
    from pytest_harness_audit.readers.snapshot import failed_report_diffs

    for diff in failed_report_diffs(assertion):
        report.sections.append(("harness audit: snapshot diff (every changed line)", diff))


def _publish_sessions(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    sessions = item.stash.get(SESSIONS_KEY, [])
    if call.when != "teardown" or not sessions:
        return
    from pytest_harness_audit.plugin.summary import summarise

    for harness in sessions:
        try:
            summary = summarise(harness, item.nodeid)
        except HarnessAuditError:
            continue
        item.config.stash[SUMMARIES_KEY].append(summary)
        item.user_properties.append(("harness_audit_session", harness.session_id))
        item.user_properties.append(("harness_audit_verdict", summary.verdict))
        item.user_properties.append(("harness_audit_head", summary.head))
        item.user_properties.append(
            (
                "harness_audit_chain",
                f"{'valid' if summary.chain_valid else 'invalid'} ({summary.records} records)",
            )
        )
        if item.config.stash[OPTIONS_KEY].enabled:
            from pytest_harness_audit.readers.report import write_report

            path = write_report(harness.storage_dir, harness.session_id, harness.report())
            item.user_properties.append(("harness_audit_report", str(path)))


#: Set once an OpenTelemetry export failed: the run says so once and exports no more.
OTEL_FAILED_KEY: pytest.StashKey[bool] = pytest.StashKey()


def _export_otel(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    """``--harness-audit-otel``: after teardown, each session of the test as a trace."""
    target = item.config.stash[OPTIONS_KEY].otel
    sessions = item.stash.get(SESSIONS_KEY, [])
    if target is None or call.when != "teardown" or not sessions:
        return
    if item.config.stash.get(OTEL_FAILED_KEY, False):
        return
    from pytest_harness_audit.readers.otel import export_sessions

    problem = export_sessions(((h.chain.path, h.session_id) for h in sessions), target)
    if problem:
        item.config.stash[OTEL_FAILED_KEY] = True
        item.warn(
            pytest.PytestWarning(
                f"{problem}; the chains are untouched, later sessions are not exported"
            )
        )


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker: hand the summary rows to the controller. Elsewhere, under
    ``--harness-audit``: list the run's sessions and keep only the last runs' sessions."""
    workeroutput = getattr(session.config, "workeroutput", None)
    summaries = session.config.stash[SUMMARIES_KEY]
    if workeroutput is not None:
        from pytest_harness_audit.plugin.summary import encode_summaries

        workeroutput[WORKER_OUTPUT] = encode_summaries(summaries)
        return
    options = session.config.stash[OPTIONS_KEY]
    if options.enabled and summaries:
        from pytest_harness_audit.audit.prune import prune, record_run

        record_run(options.directory, (row.session_id for row in summaries))
        if options.keep:
            prune(options.directory, keep=options.keep, runs_only=True)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """On the xdist controller: collect a finished worker's summary rows."""
    data = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
    if data:
        from pytest_harness_audit.plugin.summary import decode_summaries

        node.config.stash[SUMMARIES_KEY].extend(decode_summaries(data))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The table of sessions, under ``--harness-audit``, and the ``--harness-audit-html`` view
    (controller only)."""
    options = config.stash[OPTIONS_KEY]
    if hasattr(config, "workerinput"):
        return
    summaries = config.stash[SUMMARIES_KEY]
    if options.enabled:
        from pytest_harness_audit.plugin.summary import format_summary

        terminalreporter.write_sep("=", "harness audit")
        for line in format_summary(summaries):
            terminalreporter.write_line(line)
    if options.html is not None:
        from pytest_harness_audit.plugin.view import write_run_view

        title = f"harness-audit: {config.rootpath.name}"
        terminalreporter.write_line(write_run_view(summaries, options.html, title))
