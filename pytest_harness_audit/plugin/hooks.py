"""The plugin's pytest hooks: options, markers, the end-of-test check, the summary and xdist.

A hook that needs more than the option and marker modules (the harness, the readers, syrupy,
the summary) imports it inside, and only once a test has made a harness session, carries one of
the plugin's markers or runs under ``--harness-audit``: a run that uses no harness loads nothing
else.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.plugin.markers import (
    check_marker_arguments,
    marker_arguments,
    register_markers,
)
from pytest_harness_audit.plugin.options import (
    ARTIFACT_LINES_KEY,
    BASELINE_KEY,
    CHECKED_KEY,
    OPTIONS_KEY,
    SESSIONS_KEY,
    SNAPSHOT_FOLDER_KEY,
    SNAPSHOT_KEY,
    SPAN_FILE_KEY,
    SUMMARIES_KEY,
    add_options,
    resolve_options,
)
from pytest_harness_audit.wording import visible

if TYPE_CHECKING:
    from pytest_harness_audit.plugin.summary import SessionSummary


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
    config.stash[ARTIFACT_LINES_KEY] = []
    otel = config.stash[OPTIONS_KEY].otel
    if otel is not None and otel != "otlp":
        from pytest_harness_audit.readers.otel import SpanFile

        span_file = SpanFile(otel)
        if not hasattr(config, "workerinput"):  # the controller writes the file at the end
            span_file.start()
        config.stash[SPAN_FILE_KEY] = span_file
    if not hasattr(config, "workerinput"):
        from pytest_harness_audit.plugin.worker_rows import ControllerRows

        config.pluginmanager.register(ControllerRows(config), "harness-audit-worker-rows")
    if config.pluginmanager.hasplugin("html"):
        from pytest_harness_audit.plugin import html

        html.register_if_active(config, SESSIONS_KEY)


def pytest_report_header(config: pytest.Config) -> str | None:
    """One header line when auditing."""
    options = config.stash[OPTIONS_KEY]
    if not options.enabled:
        return None
    return f"harness-audit: policy {options.policy}, chains in {options.directory}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse bad marker arguments up front, naming the test. Keep the snapshot files the
    tests compare with as they are before any test runs (not under ``--snapshot-update``)."""
    check_marker_arguments(items)
    if getattr(config.option, "update_snapshots", False):
        return
    if any(
        "audit_snapshot" in getattr(item, "fixturenames", ())
        or item.get_closest_marker("harness_snapshot") is not None
        for item in items
    ):
        from pytest_harness_audit.readers.snapshot import SnapshotBaseline, keep_snapshot_folders

        keep_snapshot_folders(items, config.stash.setdefault(BASELINE_KEY, SnapshotBaseline()))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """After the test body: check every harness session against the markers, and that no
    snapshot file of the test changed while it ran. A body that skips or xfails after its
    sessions ran is still held to what they already show."""
    __tracebackhide__ = True  # the failure is the message, not the plugin's code
    from pytest_harness_audit.watch import watch_sessions

    try:
        with watch_sessions(lambda made: _adopt_session(item, made)):
            yield
    except (pytest.skip.Exception, pytest.xfail.Exception) as stopped:
        _check_snapshot_files(item)
        _check_sessions(item, finished=False, stopped=stopped)
        raise
    except BaseException:
        _check_snapshot_files(item)
        _note_checked(item)
        raise
    _check_snapshot_files(item)
    sessions = item.stash.get(SESSIONS_KEY, [])
    snapshot = item.stash.get(SNAPSHOT_KEY, None)
    if not sessions:
        if snapshot is not None:
            raise AssertionError("harness_snapshot: the test made no harness session to snapshot")
        return
    _check_sessions(item, finished=True)


def _adopt_session(item: pytest.Item, harness: Any) -> None:
    """A session the test body made itself (``Harness.create``) is checked like the others."""
    sessions = item.stash.setdefault(SESSIONS_KEY, [])
    if not any(known is harness for known in sessions):
        sessions.append(harness)


def _note_checked(item: pytest.Item) -> None:
    """Keep where each session stood at the end of the test body."""
    from pytest_harness_audit.plugin.support import checked_state

    sessions = item.stash.get(SESSIONS_KEY, [])
    item.stash[CHECKED_KEY] = {id(h): checked_state(h) for h in sessions}


def _check_sessions(
    item: pytest.Item,
    *,
    finished: bool,
    stopped: BaseException | None = None,
    only: list[Any] | None = None,
) -> None:
    """Fail the test with every unmet requirement of its sessions (``only``: of these)."""
    __tracebackhide__ = True
    sessions = item.stash.get(SESSIONS_KEY, []) if only is None else only
    if not sessions:
        return
    from pytest_harness_audit.plugin.support import end_of_test_problems
    from pytest_harness_audit.readers.snapshot import diff_colors, snapshot_sessions

    options = item.config.stash[OPTIONS_KEY]
    markers = marker_arguments(item)
    problems = []
    try:
        for harness in sessions:
            problems.extend(end_of_test_problems(harness, markers, options, finished=finished))
        snapshot = item.stash.get(SNAPSHOT_KEY, None)
        if snapshot is not None and finished and stopped is None and only is None:
            problems.extend(snapshot_sessions(sessions, snapshot, colors=diff_colors(item.config)))
    finally:
        _note_checked(item)
    problems = list(dict.fromkeys(problems))  # a reopened session: one chain, one message
    if not problems:
        return
    if stopped is not None:
        how = "skipped" if isinstance(stopped, pytest.skip.Exception) else "xfailed"
        problems.append(
            f"(the test {how} after its harness sessions ran ({stopped}); what they already "
            "show is checked all the same)"
        )
    elif not finished:
        problems.append("(the session changed after the end of the test body: checked again)")
    raise AssertionError("\n\n".join(problems)) from None


#: Set once a test's sessions are in the summary (``item.stash``).
PUBLISHED_KEY: pytest.StashKey[bool] = pytest.StashKey()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """A run stopped inside a test (``pytest.exit``, Ctrl-C) still lists the test's sessions,
    and what they show against the test's markers fails the run (a ``pytest.exit(returncode=0)``
    after a denied call is not a clean run)."""
    try:
        return (yield)
    except (pytest.exit.Exception, KeyboardInterrupt) as stopped:
        if not item.stash.get(PUBLISHED_KEY, False):
            _publish(item)
            _note_unmet(item, stopped)
        raise


def _note_unmet(item: pytest.Item, stopped: BaseException) -> None:
    """The unmet requirements of a stopped test's sessions, as failed lines of the run's end."""
    from pytest_harness_audit.plugin.support import end_of_test_problems

    options = item.config.stash[OPTIONS_KEY]
    markers = marker_arguments(item)
    line = f"harness-audit: {item.nodeid}: the run stopped in this test ({stopped!r}); "
    for harness in item.stash.get(SESSIONS_KEY, []):
        try:
            problems = end_of_test_problems(harness, markers, options, finished=False)
        except HarnessAuditError as exc:  # the stop goes on; the chain's problem is a line
            problems = [f"session {harness.session_id}: {exc}"]
        for problem in problems:
            item.config.stash[ARTIFACT_LINES_KEY].append((line + problem, True))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    """After the fixtures' teardown: a session that changed since the end-of-test check (a
    fixture's teardown made a call, say), or was made after it, is checked again; a test
    whose body never ran (a fixture skipped it) has its sessions checked here."""
    __tracebackhide__ = True
    result = yield
    sessions = item.stash.get(SESSIONS_KEY, [])
    if not sessions:
        return result
    from pytest_harness_audit.plugin.support import checked_state

    checked = item.stash.get(CHECKED_KEY, {})
    late = [h for h in sessions if checked.get(id(h)) != checked_state(h)]
    _check_sessions(item, finished=False, only=late)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A project error (a bad scenario, policy, template …) is reported as its one line, naming
    the test, not under the plugin's traceback (``--tb=long`` or ``--fulltrace`` keep it).
    After teardown: summary rows and JUnit properties of the test's sessions."""
    rows = _publish_sessions(item, call)  # before the report: it copies the user properties
    _export_otel(item, call)
    report = yield
    if call.when == "teardown" and hasattr(item.config, "workerinput"):
        from pytest_harness_audit.plugin.worker_rows import attach

        attach(item.config, report, rows)
    if (
        report.failed
        and call.excinfo is not None
        and call.excinfo.errisinstance(HarnessAuditError)
        and not item.config.option.fulltrace
        and item.config.option.tbstyle != "long"
    ):
        report.longrepr = visible(f"{item.nodeid}: {call.excinfo.value}")
    if report.failed and call.when == "call":
        _add_snapshot_diffs(item, report)
    if report.failed and call.when == "setup":
        _note_checked(item)  # the test errs already: only a later change is checked again
    return report


def _check_snapshot_files(item: pytest.Item) -> None:
    """Fail the test when a file of its snapshot folder changed since the run started (under
    ``--snapshot-update``: when a file it wrote no longer holds what it wrote)."""
    __tracebackhide__ = True
    assertion = getattr(item, "funcargs", {}).get("audit_snapshot")
    if assertion is None:
        assertion = item.stash.get(SNAPSHOT_KEY, None)  # harness_snapshot without the fixture
    if assertion is None:
        return
    from pytest_harness_audit.readers.snapshot import end_of_test_changes

    folder = item.stash.get(SNAPSHOT_FOLDER_KEY, None)
    baseline = item.config.stash.get(BASELINE_KEY, None)
    changes = end_of_test_changes(assertion, baseline, folder)
    if changes:
        raise AssertionError("\n".join(changes)) from None


def _add_snapshot_diffs(item: pytest.Item, report: pytest.TestReport) -> None:
    """Every changed line of a failed ``audit_snapshot`` comparison, as a report section."""
    assertion = getattr(item, "funcargs", {}).get("audit_snapshot")
    if assertion is None:
        return
    from pytest_harness_audit.readers.snapshot import failed_report_diffs

    for diff in failed_report_diffs(assertion):
        report.sections.append(("harness audit: snapshot diff (every changed line)", diff))


def _publish_sessions(item: pytest.Item, call: pytest.CallInfo[None]) -> list[SessionSummary]:
    """After teardown: the test's summary rows (also kept for the run's end) and its JUnit
    properties."""
    if call.when != "teardown" or item.stash.get(PUBLISHED_KEY, False):
        return []
    return _publish(item)


def _one_row_per_chain(
    item: pytest.Item, sessions: list[Any]
) -> list[tuple[Any, SessionSummary, bool]]:
    """Each session's row, read from its chain; a chain two ``Harness`` objects of the test
    write (a reopened session) is one row: the worst they read (each checks the chain against
    its own witnesses), so a chain made again over the first one's is not listed as valid."""
    from pytest_harness_audit.plugin.summary import summarise, unreadable_summary

    chosen: dict[tuple[str, str], tuple[Any, SessionSummary, bool]] = {}
    for harness in sessions:
        try:
            row = (harness, summarise(harness, item.nodeid), True)
        except HarnessAuditError:  # the test failed naming why; the run still lists it
            row = (harness, unreadable_summary(harness, item.nodeid), False)
        key = (str(harness.storage_dir), harness.session_id)
        if key not in chosen or _worse(row[1], chosen[key][1]):
            chosen[key] = row
    return list(chosen.values())


def _worse(row: SessionSummary, than: SessionSummary) -> bool:
    rank = {"PASS": 0, "WARN": 1, "FAIL": 2}
    return (not row.chain_valid, rank[row.verdict], row.records) > (
        not than.chain_valid,
        rank[than.verdict],
        than.records,
    )


def _publish(item: pytest.Item) -> list[SessionSummary]:
    sessions = item.stash.get(SESSIONS_KEY, [])
    if not sessions:
        return []
    item.stash[PUBLISHED_KEY] = True
    rows = []
    for harness, summary, readable in _one_row_per_chain(item, sessions):
        rows.append(summary)
        if not hasattr(item.config, "workerinput"):  # a worker's go with its reports
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
        if item.config.stash[OPTIONS_KEY].enabled and readable:
            from pytest_harness_audit.readers.report import write_report

            path = write_report(harness.storage_dir, harness.session_id, harness.report())
            item.user_properties.append(("harness_audit_report", str(path)))
    return rows


#: Set once an OpenTelemetry export failed: the run says so once and exports no more.
OTEL_FAILED_KEY: pytest.StashKey[bool] = pytest.StashKey()


def _export_otel(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    """``--harness-audit-otel``: after teardown, each session of the test as a trace."""
    target = item.config.stash[OPTIONS_KEY].otel
    sessions = item.stash.get(SESSIONS_KEY, [])
    if target is None or call.when != "teardown" or not sessions:
        return
    span_file = item.config.stash.get(SPAN_FILE_KEY, None)
    failed_before = item.config.stash.get(OTEL_FAILED_KEY, False)
    if failed_before and span_file is None:
        return
    from pytest_harness_audit.readers.otel import export_sessions

    written = None if span_file is None else span_file.written
    chains = ((h.chain.path, h.session_id) for h in sessions)
    problem = export_sessions(chains, target, written=written)
    if problem and not failed_before:
        item.config.stash[OTEL_FAILED_KEY] = True
        later = (
            "later sessions are not exported"
            if span_file is None
            else "the file is written whole when the run ends"
        )
        item.warn(pytest.PytestWarning(f"{problem}; the chains are untouched, {later}"))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under ``--harness-audit`` (not on an xdist worker, whose rows went to the controller
    with its reports): list the run's sessions and keep only the last runs' sessions."""
    if hasattr(session.config, "workerinput"):
        return
    summaries = session.config.stash[SUMMARIES_KEY]
    options = session.config.stash[OPTIONS_KEY]
    if options.enabled and summaries:
        from pytest_harness_audit.audit.prune import prune, record_run
        from pytest_harness_audit.plugin.summary import changed_since_published

        lines = session.config.stash[ARTIFACT_LINES_KEY]
        lines.extend((line, True) for line in changed_since_published(summaries))
        record_run(options.directory, (row.session_id for row in summaries))
        if options.keep:
            prune(options.directory, keep=options.keep, runs_only=True)
    _write_run_files(session)


def _write_run_files(session: pytest.Session) -> None:
    """The files written when the run ends: the ``--harness-audit-otel`` file, whole, and the
    ``--harness-audit-html`` view. One that cannot be written fails the run (its line names the
    path and the error)."""
    from pytest_harness_audit.plugin.view import finish_span_file, write_run_view

    config = session.config
    lines = config.stash[ARTIFACT_LINES_KEY]
    span_file = config.stash.get(SPAN_FILE_KEY, None)
    if span_file is not None:
        lines.extend(finish_span_file(span_file))
    html = config.stash[OPTIONS_KEY].html
    if html is not None:
        title = f"harness-audit: {config.rootpath.name}"
        summaries = config.stash[SUMMARIES_KEY]
        lines.append(write_run_view(summaries, html, title))
    if any(failed for _, failed in lines) and session.exitstatus in (
        pytest.ExitCode.OK,
        pytest.ExitCode.NO_TESTS_COLLECTED,
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The table of sessions, under ``--harness-audit``, and the lines of the files written at
    the end of the run (controller only)."""
    options = config.stash[OPTIONS_KEY]
    if hasattr(config, "workerinput"):
        return
    summaries = config.stash[SUMMARIES_KEY]
    if options.enabled:
        from pytest_harness_audit.plugin.summary import format_summary

        terminalreporter.write_sep("=", "harness audit")
        for line in format_summary(summaries):
            terminalreporter.write_line(line)
    for line, failed in config.stash[ARTIFACT_LINES_KEY]:
        terminalreporter.write_line(line, red=failed, bold=failed)
