"""pytest hooks only: options, markers, fixtures wiring, summary, xdist. The library does the work
(:mod:`pytest_harness_audit.plugin.support`, :mod:`pytest_harness_audit.session.harness`)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import git
import pytest
from syrupy.assertion import SnapshotAssertion

from pytest_harness_audit.doors.social import parse_expect_refused, parse_harness_agents
from pytest_harness_audit.errors import HarnessAuditError, UsageError
from pytest_harness_audit.plugin import hookspecs
from pytest_harness_audit.plugin import html as pytest_html_support
from pytest_harness_audit.plugin.support import (
    MARKERS,
    AuditOptions,
    SessionSummary,
    decode_summaries,
    encode_summaries,
    end_of_test_problems,
    format_summary,
    load_policy,
    parse_expect_denied,
    parse_expect_escalation,
    parse_expect_verdict,
    parse_harness_policy,
    summarise,
)
from pytest_harness_audit.readers.report import merge_report_fields, write_report
from pytest_harness_audit.readers.snapshot import (
    AuditReportExtension,
    diff_colors,
    snapshot_sessions,
)
from pytest_harness_audit.readers.verdict import Verdict
from pytest_harness_audit.session import workspace as workspaces
from pytest_harness_audit.session.harness import Harness, new_session_id
from pytest_harness_audit.session.proxy_session import RecordingProxySession

OPTIONS_KEY = pytest.StashKey[AuditOptions]()
SUMMARIES_KEY = pytest.StashKey[list[SessionSummary]]()
SESSIONS_KEY = pytest.StashKey[list[Harness]]()
SNAPSHOT_KEY = pytest.StashKey[SnapshotAssertion]()
WORKER_OUTPUT = "harness_audit_sessions"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``--harness-audit…`` option group and ini settings."""
    group = parser.getgroup("harness-audit", "agent harness auditing")
    group.addoption(
        "--harness-audit",
        action="store_true",
        default=False,
        help="audit every harness session: keep and verify chains, print a summary",
    )
    group.addoption(
        "--harness-audit-dir",
        default=None,
        metavar="DIR",
        help="where chains are kept (default: ini harness_audit_dir or .harness-audit)",
    )
    group.addoption(
        "--harness-audit-policy",
        default=None,
        metavar="NAME|FILE",
        help="policy of harness sessions (default: ini harness_audit_policy or safety)",
    )
    parser.addini("harness_audit_dir", "directory for kept audit chains", default=".harness-audit")
    parser.addini("harness_audit_policy", "default policy: preset name or file", default="safety")
    parser.addini(
        "harness_audit_expect",
        "verdict every unmarked session must reach at least "
        "(PASS, WARN or FAIL) under --harness-audit",
        default="PASS",
    )


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Publish the plugin's own hook specifications."""
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    """Register markers and resolve the options once."""
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", text if text.startswith(name) else f"{name}: {text}")
    directory = config.getoption("--harness-audit-dir") or config.getini("harness_audit_dir")
    try:
        expect = Verdict.parse(config.getini("harness_audit_expect"))
    except ValueError as exc:
        raise pytest.UsageError(f"ini harness_audit_expect: {exc}") from None
    config.stash[OPTIONS_KEY] = AuditOptions(
        enabled=bool(config.getoption("--harness-audit")),
        directory=Path(config.invocation_params.dir, directory),
        policy=config.getoption("--harness-audit-policy") or config.getini("harness_audit_policy"),
        expect=expect,
    )
    config.stash[SUMMARIES_KEY] = []
    pytest_html_support.register_if_active(config, SESSIONS_KEY)


def pytest_report_header(config: pytest.Config) -> str | None:
    """One header line when auditing."""
    options = config.stash[OPTIONS_KEY]
    if not options.enabled:
        return None
    return f"harness-audit: policy {options.policy}, chains in {options.directory}"


_MARKER_PARSERS: dict[str, Callable[..., Any]] = {
    "expect_verdict": parse_expect_verdict,
    "expect_denied": parse_expect_denied,
    "expect_escalation": parse_expect_escalation,
    "expect_refused": parse_expect_refused,
    "harness_agents": parse_harness_agents,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse bad marker arguments up front, naming the test."""
    for item in items:
        for name, parse in _MARKER_PARSERS.items():
            for mark in item.iter_markers(name):
                try:
                    parse(mark.args, mark.kwargs)
                except UsageError as exc:
                    raise pytest.UsageError(f"{item.nodeid}: {exc}") from None


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
    options = item.config.stash[OPTIONS_KEY]
    markers: dict[str, list[tuple[Sequence[Any], Mapping[str, Any]]]] = {
        name: [(m.args, m.kwargs) for m in item.iter_markers(name)] for name in _MARKER_PARSERS
    }
    problems = []
    for harness in sessions:
        problems.extend(end_of_test_problems(harness, markers, options))
    if snapshot is not None:
        problems.extend(snapshot_sessions(sessions, snapshot, colors=diff_colors(item.config)))
    if problems:
        raise AssertionError("\n\n".join(problems))


def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    """After teardown: summary rows and JUnit properties of the test's sessions."""
    if call.when != "teardown":
        return
    sessions = item.stash.get(SESSIONS_KEY, [])
    for harness in sessions:
        try:
            summary = summarise(harness, item.nodeid)
        except HarnessAuditError:
            continue
        item.config.stash[SUMMARIES_KEY].append(summary)
        item.user_properties.append(("harness_audit_session", harness.session_id))
        item.user_properties.append(("harness_audit_verdict", summary.verdict))
        item.user_properties.append(
            (
                "harness_audit_chain",
                f"{'valid' if summary.chain_valid else 'invalid'} ({summary.records} records)",
            )
        )
        if item.config.stash[OPTIONS_KEY].enabled:
            path = write_report(harness.storage_dir, harness.session_id, harness.report())
            item.user_properties.append(("harness_audit_report", str(path)))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker: hand the summary rows to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        summaries = session.config.stash[SUMMARIES_KEY]
        workeroutput[WORKER_OUTPUT] = encode_summaries(summaries)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """On the xdist controller: collect a finished worker's summary rows."""
    data = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
    if data:
        node.config.stash[SUMMARIES_KEY].extend(decode_summaries(data))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The table of sessions, under ``--harness-audit`` (controller only)."""
    options = config.stash[OPTIONS_KEY]
    if not options.enabled or hasattr(config, "workerinput"):
        return
    terminalreporter.write_sep("=", "harness audit")
    summaries = config.stash[SUMMARIES_KEY]
    for line in format_summary(summaries):
        terminalreporter.write_line(line)


# -- fixtures ----------------------------------------------------------------------------------
def _marker_arg(request: pytest.FixtureRequest, name: str) -> Any:
    mark = request.node.get_closest_marker(name)
    return mark.args[0] if mark is not None and mark.args else None


@pytest.fixture
def git_workspace(request: pytest.FixtureRequest, tmp_path: Path) -> git.Repo:
    """A throw-away git repository (template from ``@pytest.mark.harness_workspace``)."""
    template = _marker_arg(request, "harness_workspace")
    try:
        return workspaces.create_workspace(tmp_path / "workspace", template)
    except HarnessAuditError as exc:
        raise pytest.UsageError(f"{request.node.nodeid}: harness_workspace: {exc}") from None


def _default_policy(request: pytest.FixtureRequest) -> Any:
    options = request.config.stash[OPTIONS_KEY]
    mark = request.node.get_closest_marker("harness_policy")
    base_dir = Path(str(request.node.path)).parent
    try:
        if mark is not None:
            return parse_harness_policy(mark.args, mark.kwargs, base_dir)
        return load_policy(options.policy, Path(str(request.config.rootpath)))
    except HarnessAuditError as exc:
        raise pytest.UsageError(f"{request.node.nodeid}: harness_policy: {exc}") from None


@pytest.fixture
def harness_factory(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Harness]]:
    """Make harness sessions: ``harness_factory(template=None, policy=None, **options)``.

    Every session it makes is checked against the test's markers at the end of the test.
    """
    options = request.config.stash[OPTIONS_KEY]
    sessions = request.node.stash.setdefault(SESSIONS_KEY, [])
    hook = request.config.hook

    def classify(tool: str, params: Any) -> str | None:
        result: str | None = hook.pytest_harness_audit_classify_tool(tool=tool, params=params)
        return result

    def verdict_rules(harness: Harness, records: Any) -> list[Any]:
        found = hook.pytest_harness_audit_verdict_rules(harness=harness, records=list(records))
        return [reason for group in found if group for reason in group]

    def report_fields(harness: Harness) -> dict[str, Any]:
        return merge_report_fields(hook.pytest_harness_audit_report_fields(harness=harness))

    def make(
        template: str | None = None, policy: Any = None, *, root: Path | None = None, **kwargs: Any
    ) -> Harness:
        base = tmp_path_factory.mktemp("harness")
        storage = options.directory if options.enabled else base / "audit"
        session_id = kwargs.pop("session_id", None) or new_session_id(request.node.name)
        kwargs.setdefault("classifier", classify)
        kwargs.setdefault("verdict_rules", verdict_rules)
        agents = request.node.get_closest_marker("harness_agents")
        if agents is not None:
            kwargs.setdefault("agents", parse_harness_agents(agents.args, agents.kwargs))
        kwargs.setdefault("report_fields", report_fields)
        chosen = policy if policy is not None else _default_policy(request)
        if root is None:
            harness = Harness.create(
                base,
                template=template,
                storage_dir=storage,
                policy=chosen,
                session_id=session_id,
                **kwargs,
            )
        else:
            harness = Harness(
                root,
                storage_dir=storage,
                policy=chosen,
                session_id=session_id,
                template=template,
                **kwargs,
            )
        sessions.append(harness)
        return harness

    yield make
    for session in sessions:
        session.close()


@pytest.fixture
def harness(
    request: pytest.FixtureRequest, git_workspace: git.Repo, harness_factory: Callable[..., Harness]
) -> Harness:
    """An audited session on ``git_workspace`` with the test's policy."""
    template = _marker_arg(request, "harness_workspace")
    session = harness_factory(template, root=Path(str(git_workspace.working_tree_dir)))
    session._repo = git_workspace
    return session


@pytest.fixture
def audit_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """syrupy's ``snapshot`` storing session reports as ``.audit.yaml`` files:
    ``assert harness.report() == audit_snapshot``."""
    return snapshot.use_extension(AuditReportExtension)


@pytest.fixture(autouse=True)
def _harness_snapshot_marker(request: pytest.FixtureRequest) -> None:
    """For ``@pytest.mark.harness_snapshot``: the snapshot the sessions are compared with at
    the end of the test (the test's own ``audit_snapshot``, so indexes continue)."""
    if request.node.get_closest_marker("harness_snapshot") is not None:
        request.node.stash[SNAPSHOT_KEY] = request.getfixturevalue("audit_snapshot")


@pytest.fixture
def recording_proxy(harness: Harness) -> Callable[..., RecordingProxySession]:
    """Start recording MCP proxies on the test's harness session:
    ``recording_proxy(upstream=[argv…], workspace_tools=True, call_timeout=None)``.

    Calls through a proxy are gated and recorded like scripted calls; proxies and their
    upstream processes stop at the end of the test.
    """

    def start(upstream: Any = (), **options: Any) -> RecordingProxySession:
        return harness.start_proxy(upstream, **options)

    return start
