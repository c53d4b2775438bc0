"""The plugin's fixtures: ``git_workspace``, ``harness_factory``, ``harness``, ``audit_snapshot``
and ``recording_proxy``.

Each imports the harness (``session/``) inside its body, on first use: a test run that requests
none of them never loads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_harness_audit.errors import HarnessAuditError, UsageError
from pytest_harness_audit.plugin.markers import closest_argument
from pytest_harness_audit.plugin.options import (
    BASELINE_KEY,
    OPTIONS_KEY,
    SESSIONS_KEY,
    SNAPSHOT_FOLDER_KEY,
    SNAPSHOT_KEY,
)

if TYPE_CHECKING:
    import git
    from syrupy.assertion import SnapshotAssertion

    from pytest_harness_audit.audit.record_view import CallRecord
    from pytest_harness_audit.policy import Policy
    from pytest_harness_audit.readers.verdict import VerdictReason
    from pytest_harness_audit.session.harness import Harness
    from pytest_harness_audit.session.proxy_session import RecordingProxySession


@pytest.fixture
def git_workspace(request: pytest.FixtureRequest, tmp_path: Path) -> git.Repo:
    """A throw-away git repository (template from ``@pytest.mark.harness_workspace``)."""
    from pytest_harness_audit.session import workspace

    template = closest_argument(request.node, "harness_workspace")
    try:
        return workspace.create_workspace(tmp_path / "workspace", template)
    except HarnessAuditError as exc:
        raise UsageError(f"harness_workspace: {exc}") from None


def _default_policy(request: pytest.FixtureRequest) -> Policy:
    from pytest_harness_audit.plugin.markers import parse_harness_policy
    from pytest_harness_audit.policy.source import resolve_policy

    options = request.config.stash[OPTIONS_KEY]
    mark = request.node.get_closest_marker("harness_policy")
    base_dir = Path(str(request.node.path)).parent
    try:
        if mark is not None:
            return parse_harness_policy(mark.args, mark.kwargs, base_dir)
        return resolve_policy(options.policy, base_dir=Path(str(request.config.rootpath)))
    except HarnessAuditError as exc:
        raise UsageError(f"harness_policy: {exc}") from None


def _plugin_hooks(config: pytest.Config) -> dict[str, Any]:
    """The harness options that call the plugin's own hooks (other plugins extend these)."""
    from pytest_harness_audit.readers.report import merge_report_fields

    hook = config.hook

    def classify(tool: str, params: Any) -> str | None:
        result: str | None = hook.pytest_harness_audit_classify_tool(tool=tool, params=params)
        return result

    def verdict_rules(harness: Harness, records: Iterable[CallRecord]) -> list[VerdictReason]:
        found: list[list[VerdictReason] | None] = hook.pytest_harness_audit_verdict_rules(
            harness=harness, records=list(records)
        )
        return [reason for group in found if group for reason in group]

    def report_fields(harness: Harness) -> dict[str, Any]:
        return merge_report_fields(hook.pytest_harness_audit_report_fields(harness=harness))

    return {"classifier": classify, "verdict_rules": verdict_rules, "report_fields": report_fields}


@pytest.fixture
def harness_factory(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Harness]]:
    """Make harness sessions: ``harness_factory(template=None, policy=None, **options)``.

    ``scenario=`` (a shipped name, a path or a loaded scenario) makes the session on the
    scenario's own ``workspace:`` and ``policy:`` unless ``template``/``policy`` are given.
    Every session it makes is checked against the test's markers at the end of the test.
    """
    from pytest_harness_audit.plugin.markers import parse_harness_agents, parse_harness_approvals
    from pytest_harness_audit.session.harness import new_session_id
    from pytest_harness_audit.watch import watch_sessions

    options = request.config.stash[OPTIONS_KEY]
    sessions = request.node.stash.setdefault(SESSIONS_KEY, [])
    hooks = _plugin_hooks(request.config)

    def make(
        template: str | None = None,
        policy: Any = None,
        *,
        root: Path | None = None,
        scenario: Any = None,
        **kwargs: Any,
    ) -> Harness:
        if scenario is not None:
            from pytest_harness_audit.doors.scenarios import Scenario, load_scenario

            loaded = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
            if template is None and loaded.workspace is not None:
                template = str(loaded.workspace)
            if policy is None:
                policy = loaded.policy
        base = tmp_path_factory.mktemp("harness")
        storage = options.directory if options.enabled else base / "audit"
        given = kwargs.pop("session_id", None)
        if given and options.enabled:
            _refuse_taken(storage, given, sessions)
        session_id = given or new_session_id(request.node.name)
        for key, value in hooks.items():
            kwargs.setdefault(key, value)
        agents = request.node.get_closest_marker("harness_agents")
        if agents is not None:
            kwargs.setdefault("agents", parse_harness_agents(agents.args, agents.kwargs))
        chosen = policy if policy is not None else _default_policy(request)
        with watch_sessions(_keep):  # made here: not also a session of a test around this run
            harness = _made(base, root, template, storage, chosen, session_id, kwargs)
        if options.enabled and request.config.get_verbosity() > 0:
            from pytest_harness_audit.gate.console import RecordConsole

            # -v: the records' lines by the policy's auditLevel, on the test's stderr
            harness.gate.observers.append(RecordConsole(None, harness.policy.audit_level))
        approvals = request.node.get_closest_marker("harness_approvals")
        if approvals is not None:
            approver, name = parse_harness_approvals(approvals.args, approvals.kwargs)
            harness.approver(approver, name=name)
        sessions.append(harness)
        return harness

    yield make
    for session in sessions:
        session.close()
    _sign_session_ends(sessions)


def _refuse_taken(storage: Path, session_id: str, sessions: list[Harness]) -> None:
    """Under ``--harness-audit`` (one audit directory for the whole run, and the runs before
    it): a ``session_id`` naming a session the test did not make would continue another
    test's (or an earlier run's) chain, and the summary would count its records twice."""
    from pytest_harness_audit.audit.storage import StorageLayout

    if any(s.session_id == session_id and s.storage_dir == storage for s in sessions):
        return  # the test reopens its own session
    paths = StorageLayout.at(storage).paths(session_id)
    if paths.chain.exists() or paths.session_file.exists():
        raise UsageError(
            f"harness_factory: session_id {session_id!r} names a session already in {storage} "
            "(another test's or an earlier run's); leave session_id out for a fresh one"
        )


def _keep(harness: Harness) -> None:
    """The factory keeps the sessions it makes itself."""


def _made(
    base: Path,
    root: Path | None,
    template: str | None,
    storage: Path,
    policy: Any,
    session_id: str,
    options: dict[str, Any],
) -> Harness:
    """A session on a fresh workspace under ``base``, or on ``root``."""
    from pytest_harness_audit.session.harness import Harness

    if root is None:
        return Harness.create(
            base,
            template=template,
            storage_dir=storage,
            policy=policy,
            session_id=session_id,
            **options,
        )
    return Harness(
        root,
        storage_dir=storage,
        policy=policy,
        session_id=session_id,
        template=template,
        **options,
    )


def _sign_session_ends(sessions: list[Harness]) -> None:
    """With ``$HARNESS_AUDIT_SIGNING_KEY`` set (a key the agent does not hold), sign each
    session's final head, checked against the heads its own process wrote, into a checkpoint."""
    if not sessions or not os.environ.get("HARNESS_AUDIT_SIGNING_KEY"):
        return
    from pytest_harness_audit.audit.checkpoint import sign_session_end, signing_key_from_env

    key = signing_key_from_env()
    for session in sessions:
        sign_session_end(
            session.storage_dir, session.session_id, key, witness=session.published_head()
        )


@pytest.fixture
def harness(
    request: pytest.FixtureRequest, git_workspace: git.Repo, harness_factory: Callable[..., Harness]
) -> Harness:
    """An audited session on ``git_workspace`` with the test's policy."""
    template = closest_argument(request.node, "harness_workspace")
    session = harness_factory(
        template, root=Path(str(git_workspace.working_tree_dir)), repo=git_workspace
    )
    return session


@pytest.fixture
def audit_snapshot(
    snapshot: SnapshotAssertion, request: pytest.FixtureRequest
) -> SnapshotAssertion:
    """syrupy's ``snapshot`` storing session reports as ``.audit.yaml`` files:
    ``assert harness.report() == audit_snapshot``. Without ``--snapshot-update`` it compares
    only with snapshot files unchanged since the run started."""
    from pytest_harness_audit.readers.snapshot import (
        AuditReportExtension,
        SnapshotBaseline,
        guard_snapshots,
    )

    assertion = snapshot.use_extension(AuditReportExtension)
    if not assertion.update_snapshots:
        baseline = request.config.stash.setdefault(BASELINE_KEY, SnapshotBaseline())
        request.node.stash[SNAPSHOT_FOLDER_KEY] = guard_snapshots(assertion, baseline)
    return assertion


@pytest.fixture(autouse=True)
def _harness_snapshot_marker(request: pytest.FixtureRequest) -> None:
    """For ``@pytest.mark.harness_snapshot``: the snapshot the sessions are compared with at
    the end of the test (the test's own ``audit_snapshot``, so indexes continue). A test that
    uses ``audit_snapshot`` has it set up here, before any other fixture can make a call."""
    if request.node.get_closest_marker("harness_snapshot") is not None:
        request.node.stash[SNAPSHOT_KEY] = request.getfixturevalue("audit_snapshot")
    elif "audit_snapshot" in request.fixturenames:
        request.getfixturevalue("audit_snapshot")


@pytest.fixture
def recording_proxy(
    harness: Harness, request: pytest.FixtureRequest
) -> Callable[..., RecordingProxySession]:
    """Start recording MCP proxies on the test's harness session:
    ``recording_proxy(upstream=[argv…], workspace_tools=True, call_timeout=None)``.

    Calls through a proxy are gated and recorded like scripted calls; proxies and their
    upstream processes stop at the end of the test. A relative ``record=``, ``replay=`` or
    ``cassette=`` path is taken from the test file's directory; ``cassette=`` follows
    ``--harness-audit-record``.
    """

    def start(upstream: Any = (), **options: Any) -> RecordingProxySession:
        for key in ("record", "replay", "cassette", "pin"):
            if options.get(key) is not None:
                options[key] = request.path.parent / options[key]
        options.setdefault("record_mode", request.config.getoption("--harness-audit-record"))
        return harness.start_proxy(upstream, **options)

    return start
