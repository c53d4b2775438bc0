"""``Harness``: one audited session bound to a workspace, a policy and a chain (DESIGN §2).

Every call goes gate → act → record; what tests assert is read back from the verified chain.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import git

from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.audit.witness import Witnesses
from pytest_harness_audit.doors import social as social_bridge
from pytest_harness_audit.doors.agent import AgentRun
from pytest_harness_audit.doors.chain_faults import ChainFaults, GuardedGate
from pytest_harness_audit.doors.scenarios import Scenario, load_scenario
from pytest_harness_audit.doors.tool_calls import gate_failure, still_running
from pytest_harness_audit.doors.tool_late import settled_calls
from pytest_harness_audit.gate import Classifier
from pytest_harness_audit.gate.approvals import Approver, table_approver
from pytest_harness_audit.gate.decision import failed_closed
from pytest_harness_audit.gate.inspection import SessionInspection
from pytest_harness_audit.gate.record_scrub import RecordScrub
from pytest_harness_audit.gate.seam import Outcome, describe_exception
from pytest_harness_audit.policy import Evaluation, Policy
from pytest_harness_audit.policy.source import resolve_policy
from pytest_harness_audit.readers.report import SessionReport, build_report
from pytest_harness_audit.readers.session_queries import ChainQueries
from pytest_harness_audit.readers.verdict import Verdict, VerdictReason, judge
from pytest_harness_audit.session import workspace as workspaces
from pytest_harness_audit.session.door_watches import post_store_of, watch_calls
from pytest_harness_audit.session.post_store_check import note_unexplained_posts
from pytest_harness_audit.session.scenario_fit import check_scenario_fits
from pytest_harness_audit.social import Clock, Peer, Post, SendResult
from pytest_harness_audit.social.secret_ledger import SecretLedger
from pytest_harness_audit.tools.network import NetworkStub
from pytest_harness_audit.tools.supervisor import guard_auditor
from pytest_harness_audit.tools.toolbox import ToolBox, ToolFunction
from pytest_harness_audit.watch import made

if TYPE_CHECKING:
    from pytest_harness_audit.session.proxy_session import RecordingProxySession

#: The agents of a harness's social endpoint when the test names none (first = local).
DEFAULT_AGENTS = ("agent",)

#: Extra verdict rules: given the session's records, more reasons (a pluggy hook feeds these).
VerdictRules = Callable[["Harness", Sequence[CallRecord]], Iterable[VerdictReason]]
#: Extra session-report fields for a session (a pluggy hook feeds these).
ReportFields = Callable[["Harness"], Mapping[str, Any]]


def new_session_id(label: str = "session") -> str:
    """A fresh session id: a readable label and 8 random hex digits."""
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in label).strip("-.")[:60]
    return f"{slug or 'session'}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class CallResult:
    """The outcome of one governed call: the decision, what ran, and the chain record."""

    tool: str
    evaluation: Evaluation
    status: str
    output: Any
    error_message: str | None
    record: Mapping[str, Any]

    @property
    def blocked(self) -> bool:
        """Whether the gate refused the call (it did not run)."""
        return self.status == "blocked"

    @property
    def ok(self) -> bool:
        """Whether the call ran and succeeded."""
        return self.status == "success"

    @property
    def decision(self) -> str:
        """The policy decision: ``allow``, ``warn`` or ``deny``."""
        return self.evaluation.decision

    @property
    def record_id(self) -> str:
        """The chain record's id (empty: the call could not be recorded, see ``unrecorded``)."""
        return str(self.record.get("recordId", ""))

    @property
    def unrecorded(self) -> str | None:
        """Why the call has no record (the chain could no longer be written), else ``None``."""
        problem = self.record.get("unrecorded")
        return None if problem is None else str(problem)


class Harness(ChainQueries):
    """One audited session: a workspace (git repo), a policy, a gate and a chain.

    ``root`` is the workspace directory; chains are written under ``storage_dir``; ``repo`` is
    the workspace's git repository when the caller already has it (else opened on first use);
    ``origins``: the folders it was copied from, whose credential files are watched too
    (:func:`.workspace.template_origins`).
    """

    def __init__(
        self,
        root: str | Path,
        *,
        storage_dir: str | Path,
        policy: Policy | str | Path | None = None,
        session_id: str | None = None,
        template: str | None = None,
        agent_id: str | None = None,
        audit_level: str | None = "verbose",
        classifier: Classifier | None = None,
        verdict_rules: VerdictRules | None = None,
        report_fields: ReportFields | None = None,
        clock: Callable[[], float] = time.time,
        fsync: bool = False,
        agents: Sequence[str] | None = None,
        social_clock: Clock | None = None,
        repo: git.Repo | None = None,
        origins: Sequence[str | Path] = (),
    ) -> None:
        # it is about to hold the workspace's secrets: out of reach of the processes it starts
        # (contained commands, agents, upstream servers) before it learns any (non-dumpable)
        guard_auditor()
        self.root = Path(root).resolve()
        self.storage_dir = Path(storage_dir)
        self.policy = resolve_policy(policy)
        self.session_id = session_id or new_session_id()
        self.template = template
        self.network = NetworkStub()
        self.toolbox = ToolBox(self.root, self.network, withhold=self._read_denied)
        self._external_classifier = classifier
        #: Appends this session's writers could not make: each fails the verdict (``tamper``).
        self.chain_faults = ChainFaults()
        self.gate = GuardedGate.open_guarded(
            faults=self.chain_faults,
            storage_dir=self.storage_dir,
            session_id=self.session_id,
            policy=self.policy,
            root=str(self.root),
            door="scripted",
            agent_id=agent_id,
            fsync=fsync,
            classifier=self._classify,
            clock=clock,
            audit_level=audit_level,
        )
        self.chain = self.gate.chain
        #: The heads this session's writers keep in memory: its chain's, each proxy's.
        self.witnesses: Witnesses = Witnesses(self.chain)
        self._verdict_rules = verdict_rules
        self._report_fields = report_fields
        self._repo = repo
        # the commit changes count from, read before any call: the agent can move HEAD
        self._base = workspaces.session_base(self.root, repo)
        self.agents: tuple[str, ...] = tuple(agents) if agents else DEFAULT_AGENTS
        self.secrets = SecretLedger()
        self.gate.observers.append(self.secrets.note_from)
        self._post_store = post_store_of(self.storage_dir, self.session_id)
        # what each call did, judged by the watches every in-process door has (one list)
        self.watches = watch_calls(
            self.gate,
            root=self.root,
            post_store=self._post_store,
            seeds=True,  # this process copies workspaces from template seeds
            origins=origins,
        )
        kept = self.watches.kept
        assert self.watches.inspection is not None  # a harness always has a workspace
        #: What each call did (effects, exposed secrets), judged by the policy's effect rules.
        self.inspection: SessionInspection = self.watches.inspection
        #: The process's template seeds, judged by what each call did to them.
        self.seed_watch = self.watches.seed_watch
        #: The auditor's installation, judged by what each call did to it.
        self.install_watch = self.watches.install_watch
        self.secrets.on_add = self.inspection.inspector.secrets.add
        # every string of every record, not only the parameters: no field holds a known secret
        self.chain.builder.scrub = RecordScrub(self.gate.inspectors, self.secrets, kept)
        self.social_clock = social_clock
        self._social: social_bridge.SocialSession | None = None
        self._proxies: list[RecordingProxySession] = []
        made(self)

    @classmethod
    def create(
        cls,
        base_dir: str | Path,
        *,
        template: str | None = None,
        storage_dir: str | Path | None = None,
        **options: Any,
    ) -> Harness:
        """Make a fresh git workspace from ``template`` under ``base_dir`` and a session on it."""
        base = Path(base_dir)
        repo = workspaces.create_workspace(base / "workspace", template)
        harness = cls(
            base / "workspace",
            storage_dir=storage_dir or base / "audit",
            template=template,
            repo=repo,
            origins=workspaces.template_origins(template),
            **options,
        )
        return harness

    def _read_denied(self, path: str) -> bool:
        """Whether the policy would block a ``Read`` of ``path`` (Grep withholds such files)."""
        return self.policy.evaluate("Read", {"file_path": path}, root=str(self.root)).blocked

    # -- the pipeline -------------------------------------------------------------------------
    def _classify(self, tool: str, params: Mapping[str, Any]) -> str | None:
        category = self.toolbox.category_of(tool)
        if category is None and self._external_classifier is not None:
            category = self._external_classifier(tool, params)
        return category

    def call(self, tool: str, /, **params: Any) -> CallResult:
        """Run one tool call through gate → act → record."""
        return self.execute(tool, params)

    def execute(self, tool: str, params: Mapping[str, Any]) -> CallResult:
        """Like :meth:`call`, with the parameters as a mapping."""
        own: list[BaseException] = []

        def act(decision: Any) -> Outcome:
            try:
                return self._act(tool, decision.params)
            except BaseException as exc:
                own.append(exc)
                raise

        try:
            gated = self.gate.run(tool, params, act)
        except ChainError:
            raise  # a chain closed or broken: no refusal can be recorded, the caller must know
        except Exception as exc:
            if any(exc is raised for raised in own):
                raise
            # the gate failed (its approval step, say): refused, recorded, the session FAILs
            message = gate_failure(self.gate, tool, params, exc, None)
            refused = failed_closed(tool, params, describe_exception(exc), self.gate.root)
            return CallResult(tool, refused.evaluation, "blocked", None, message, {})
        return CallResult(
            tool,
            gated.decision.evaluation,
            gated.status,
            gated.output,
            gated.error_message,
            gated.record,
        )

    def approver(
        self, approver: Approver | Mapping[str, Any] | None, *, name: str = "scripted"
    ) -> None:
        """Answer calls a rule decided ``ask`` with ``approver`` (recorded as ``name``): a
        callable (see :mod:`~pytest_harness_audit.gate.approvals`) or ``{tool glob: answer}``;
        ``None`` removes it (calls that ask are then rejected)."""
        if isinstance(approver, Mapping):
            approver = table_approver(approver)
        self.gate.approvals.set(approver, name)

    def _act(self, tool: str, params: Mapping[str, Any]) -> Outcome:
        """Run a workspace tool the gate allowed."""
        ran = self.toolbox.run(tool, params)
        return Outcome(ran.status, ran.output, ran.error_message)

    def start_proxy(self, upstream: Any = (), **options: Any) -> RecordingProxySession:
        """Start a recording MCP proxy on this session (HTTP on loopback, its own thread).

        ``upstream``: an argv, a list of argvs or an ``{"mcpServers": …}`` mapping; options:
        ``workspace_tools`` (default on: Read/Write/Edit/Bash/Glob/Grep on the workspace),
        ``call_timeout``, ``local_tools``. Stopped by :meth:`close`.
        """
        from pytest_harness_audit.session.proxy_session import RecordingProxySession

        proxy = RecordingProxySession(self, upstream, **options)
        self.witnesses.add(proxy.gate.chain)  # the proxy thread's chain keeps its own head
        proxy.start()
        self._proxies.append(proxy)
        return proxy

    def run_agent(
        self,
        argv: Sequence[str],
        task: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        *,
        proxy: RecordingProxySession | None = None,
        transport: str = "http",
    ) -> AgentRun:
        """Run a real agent process in the workspace, its MCP config pointing at ``proxy``
        (default: the last proxy started, else a new one with the workspace tools)."""
        from pytest_harness_audit.doors.agent import run_agent

        if proxy is None:
            proxy = self._proxies[-1] if self._proxies else self.start_proxy()
        return run_agent(
            self, proxy, argv, task=task, env=env, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        """Stop this session's proxies and close its chain files (idempotent)."""
        while self._proxies:
            self._proxies.pop().stop()
        if not self.gate.closed:
            note_unexplained_posts(self.gate, self._post_store)
        if self._social is not None:
            self._social.close()
        self.inspection.close()
        if self.seed_watch is not None:
            self.seed_watch.close()
        self.install_watch.close()  # (a test may have put another in its place)
        self.gate.close()

    def register_tool(self, name: str, fn: ToolFunction, *, category: str | None = None) -> None:
        """Add a custom tool (``fn(params) -> output``; raising makes an error outcome)."""
        self.toolbox.register(name, fn, category=category)

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        category: str | None = None,
        on_block: str = "raise",
    ) -> Any:
        """Gate an agent framework's native function tool (decorator or call).

        Every call of the returned function goes gate → act → inspect → record, under the tool
        name ``name or fn.__name__`` with its arguments bound by name; ``category`` classifies it
        for the policy. A blocked call raises ``ToolCallBlocked`` (``on_block="raise"``) or
        returns the block text (``"return"``). See :mod:`pytest_harness_audit.doors.tools`.
        """
        from pytest_harness_audit.doors.tools import tool_decorator

        return tool_decorator(
            self.gate,
            fn,
            name=name,
            category=category,
            on_block=on_block,  # type: ignore[arg-type]  # checked at run time
            toolbox=self.toolbox,
        )

    def run_script(
        self, scenario: str | Path | Scenario, *, check: bool = True
    ) -> list[CallResult]:
        """Play a scripted scenario (a shipped name, a path or a loaded one).

        With ``check`` the step expectations are asserted after the run (the session-level
        ``expect`` too); a mismatch raises ``AssertionError`` listing the recorded calls. A
        scenario naming another ``policy:`` or ``workspace:`` than this session's is refused
        with a ``UsageError`` before any step runs.
        """
        loaded = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        check_scenario_fits(loaded, self.policy, self.template)  # UsageError when they differ
        results = [self.execute(step.tool, step.call_params()) for step in loaded.steps]
        if check:
            from pytest_harness_audit.readers.expectations import check_scenario

            check_scenario(self, loaded, results)
        return results

    # -- the social endpoint ------------------------------------------------------------------
    @property
    def social(self) -> social_bridge.SocialSession:
        """The session's social door, made on first use: ``harness.social.endpoint`` sends,
        answers, reads posts and scripts peers, every send gated and recorded."""
        if self._social is None:
            self._social = social_bridge.SocialSession.for_harness(self, clock=self.social_clock)
            if self._social.firewall is not None:
                self._social.firewall.secret_scanner = self.inspection.message_secrets
        return self._social

    def send(
        self, to: str, text: str, collective: Mapping[str, object] | None = None, **options: Any
    ) -> SendResult:
        """Send ``text`` to ``agent:<name>`` or ``group:<names>`` (see ``SocialEndpoint.send``)."""
        return self.social.endpoint.send(to, text, collective, **options)

    def respond(self, to: str, response: Mapping[str, object], **options: Any) -> SendResult:
        """Answer the question open in ``to``'s conversation."""
        return self.social.endpoint.respond(to, response, **options)

    def peer(self, name: str) -> Peer:
        """The scripted peer ``name``."""
        return self.social.endpoint.peer(name)

    def posts(self, to: str | None = None) -> list[Post]:
        """Stored posts, oldest first: all, or those of ``to``'s conversation."""
        return self.social.endpoint.posts(to)

    def assert_sent(self, to: str, text_glob: str = "*") -> list[CallRecord]:
        """Assert that a message matching ``text_glob`` was sent to ``to`` (from the chain)."""
        return social_bridge.assert_sent(self.records, to, text_glob)

    def assert_not_sent(self, to: str | None = None, text_glob: str | None = None) -> None:
        """Assert that no matching message went out or may have gone out."""
        social_bridge.assert_not_sent(self.records, to, text_glob)

    def lift(self, reason: str) -> CallRecord:
        """End an immune quarantine, recorded with ``reason``; nothing lifts silently."""
        return CallRecord(self.gate.lift(reason))

    # -- workspace ----------------------------------------------------------------------------
    @property
    def repo(self) -> git.Repo:
        """The workspace's git repository."""
        if self._repo is None:
            self._repo = git.Repo(str(self.root))
        return self._repo

    def changed_files(self) -> list[str]:
        """Paths changed since the initial commit (relative, sorted)."""
        return workspaces.changed_files(self.repo, self._base)

    def diff(self) -> str:
        """Unified diff of the workspace against its initial commit."""
        return workspaces.diff(self.repo, self._base)

    # -- verdict and report (the queries and assertions: ChainQueries) -------------------------
    @property
    def immune_level(self) -> str:
        """The immune ladder's level now: ``observe``, ``notice`` or ``quarantine``."""
        self.gate.sync()
        return str(self.gate.ladder.level)

    def judge(self) -> tuple[Verdict, tuple[VerdictReason, ...]]:
        """The session's verdict and its reasons, from the verified chain (a post store that
        no send of the session explains is recorded in it first: :mod:`.post_store_check`).

        Function-tool calls still running (a framework stopped waiting for them) are waited
        for first, and what changed after a cancelled one is recorded; one still running after
        that fails the session (:func:`~pytest_harness_audit.doors.tool_late.settled_calls`)."""
        if not self.gate.closed:
            note_unexplained_posts(self.gate, self._post_store)
        running = settled_calls(self.gate)
        report = self.verify()
        records = self.records
        extra: list[VerdictReason] = []
        extra.extend(self.chain_faults.reasons())  # appends that failed: the chain was changed
        if running:
            extra.append(still_running(running))
        if self._verdict_rules is not None:
            extra.extend(self._verdict_rules(self, records))
        problem = f"{report.reason} at record {report.first_bad_index}" if not report.valid else ""
        return judge(records, chain_valid=report.valid, chain_problem=problem, extra=extra)

    @property
    def verdict(self) -> Verdict:
        """``PASS``, ``WARN`` or ``FAIL`` (DESIGN §4)."""
        return self.judge()[0]

    @property
    def verdict_reasons(self) -> tuple[VerdictReason, ...]:
        """The records behind the verdict, worst first."""
        return self.judge()[1]

    def report(self, *, output_hashes: bool = True) -> SessionReport:
        """The session's deterministic report (YAML via ``str()``), for snapshots and review.

        ``output_hashes=False`` leaves out output hashes (outputs that print absolute paths).
        """
        extra = self._report_fields(self) if self._report_fields is not None else None
        return build_report(self, extra=extra, output_hashes=output_hashes)

    def __repr__(self) -> str:
        return (
            f"Harness(session_id={self.session_id!r}, policy={self.policy.name!r}, "
            f"root={str(self.root)!r})"
        )
