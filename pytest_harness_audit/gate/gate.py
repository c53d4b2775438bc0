"""The gate: every door hands its tool calls here (DESIGN §2).

``decide`` classifies the call, extracts its targets, evaluates the policy and consults the
immune ladder — before anything runs. ``record`` appends the call's R6 record to the session's
chain and lets the immune ladder observe it, appending any escalation as a record too.

Several processes may gate calls into one session. The state that spans calls — the immune
ladder and the ``rateLimit`` counters — is therefore rebuilt from the chain: before deciding, a
gate replays the records others appended since it last looked (one pass for both), so every
process counts every call of the session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.chain import AuditChain
from pytest_harness_audit.audit.records import RecordDraft
from pytest_harness_audit.gate.approvals import ASK, Approvals, escalation_for, immune_decision
from pytest_harness_audit.gate.built_in import BuiltInRules
from pytest_harness_audit.gate.decision import (
    BLOCK_PREFIX,
    GateDecision,
    failed_closed,
    unread_refusal,
)
from pytest_harness_audit.gate.follower import ChainFollower
from pytest_harness_audit.gate.inspection import OutgoingLeak, leak_decision, store_refusal
from pytest_harness_audit.gate.lift_watch import LiftWatch
from pytest_harness_audit.gate.seam import (
    CallInspector,
    GatedCall,
    Outcome,
    describe_exception,
    own_reading,
    run_call,
    run_call_async,
)
from pytest_harness_audit.gate.session_policy import SealWatch, seal_session_policy
from pytest_harness_audit.gate.store_guard import TAMPER_ALERT
from pytest_harness_audit.immune import CallEvent, ImmuneLadder, alerts_for
from pytest_harness_audit.immune.records import Escalation, Lift
from pytest_harness_audit.policy import Evaluation, Policy, RateCounter
from pytest_harness_audit.policy.param_targets import UNREAD_PARAMETERS
from pytest_harness_audit.policy.ratelimit import (
    HitLog,
    RateHits,
    ReplayedHits,
    SlidingWindowCounter,
)

#: What ``Gate.classify`` hooks return: a category for a tool name, or ``None`` to pass.
Classifier = Callable[[str, Mapping[str, Any]], "str | None"]


class Gate:
    """One session's gate: a policy, a chain and (when the policy enables it) an immune ladder.

    Several processes may gate calls into the same session (a test and its MCP proxy, or one
    hook process per call): the chain serialises appends, and the ladder and the rate counter
    are brought up to date from the chain before each decision, so the chain stays the single
    source of truth.
    """

    def __init__(
        self,
        policy: Policy,
        chain: AuditChain,
        *,
        root: str | None = None,
        door: str = "scripted",
        classifier: Classifier | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.policy = policy
        self.chain = chain
        self.root = root.rstrip("/") if root else None
        self.door = door
        self.classifier = classifier
        self.clock = clock
        self.rate_counter = SlidingWindowCounter(clock=clock)
        self.immune_config = policy.immune_config
        self.ladder = ImmuneLadder(self.immune_config, clock=clock)
        #: Replays other processes' records into the ladder and the rate counter.
        self.follower = ChainFollower(
            chain,
            self.ladder if self.immune_config.enabled else None,
            self.rate_counter,
            {rule.rule.id: rule.window_ms for rule in policy.compiled_rules if rule.max_count},
            clock,
        )
        #: Called with ``(record, output)`` after each call's record is appended.
        self.observers: list[Callable[[Mapping[str, Any], Any], object]] = []
        # one gate may serve a test thread and a proxy thread at once
        self._lock = threading.RLock()
        #: What looks at each call's effects and outputs after it ran (DESIGN §2, inspect).
        self.inspectors: list[CallInspector] = []
        rules = BuiltInRules.for_session(chain.storage_dir, self.root, policy)
        #: The built-in rule: no call touches the audit store.
        self.store_guard = rules.store_guard
        #: The built-in rule: no call changes the auditor's own installation.
        self.install_guard = rules.install_guard
        #: The built-in rule: no call signals the harness's own processes (or the host's).
        self.process_guard = rules.process_guard
        #: The approver of calls a rule decided ``ask`` (DESIGN §2, approvals).
        self.approvals = Approvals()
        #: Lifts recorded by others while a call ran (``None``: no ladder).
        self.lift_watch: LiftWatch | None = None
        if self.immune_config.enabled:
            self.lift_watch = LiftWatch(
                self.follower, self.ladder, self.sync, self._put_back, clock
            )
            self.inspectors.append(self.lift_watch)
        self._sync()

    @classmethod
    def open(
        cls,
        *,
        storage_dir: Path,
        session_id: str,
        policy: Policy,
        root: str | None = None,
        door: str = "proxy",
        agent_id: str | None = None,
        fsync: bool = False,
        classifier: Classifier | None = None,
        clock: Callable[[], float] = time.time,
        audit_level: str | None = None,
    ) -> Gate:
        """Open (or resume) the session ``session_id`` under ``storage_dir``: the one place
        that composes a session's gate, and keeps its policy beside the chain for other
        processes (the proxy, the hook, ``harness-audit immune``)."""
        level = audit_level or policy.audit_level
        chain = AuditChain(
            storage_dir, session_id, audit_level=level, fsync=fsync, agent_id=agent_id
        )
        gate = cls(policy, chain, root=root, door=door, classifier=classifier, clock=clock)
        # the stored policy is sealed: looked at after each call (an observer)
        gate.observers.append(
            SealWatch(gate, *seal_session_policy(storage_dir, session_id, policy))
        )
        return gate

    # -- state from the chain ------------------------------------------------------------------
    def sync(self) -> None:
        """Bring the immune ladder and rate counter up to date with records others appended."""
        with self._lock:
            self.follower.sync()

    def _sync(self) -> None:
        self.follower.sync()

    @property
    def rate_windows(self) -> Mapping[str, float]:
        """The policy's rate-limited rules by id, with their windows in ms (empty: none)."""
        return self.follower.rate_windows

    def add_rate_hits(self, hits: RateHits) -> None:
        """Count hits decided elsewhere whose record is not in the chain yet.

        The hook door uses it for calls an earlier pre step allowed that are still running.
        """
        with self._lock:
            self.follower.add_rate_hits(hits)

    def _appended(self, record: Mapping[str, Any]) -> None:
        self.follower.appended(record)

    # -- the door seam ------------------------------------------------------------------------
    def run(
        self,
        tool: str,
        params: Mapping[str, Any],
        act: Callable[[GateDecision], Outcome],
        *,
        extra: Mapping[str, Any] | None = None,
        decision: GateDecision | None = None,
    ) -> GatedCall:
        """Decide → act → inspect → record one call (``act`` runs only if the gate allows it).

        Every door goes through here (or :meth:`run_async`). ``extra`` adds top-level fields to
        the record; ``decision`` reuses one made earlier (the hook's pre step).
        """
        return run_call(self, tool, params, act, extra=extra, decision=decision)

    async def run_async(
        self,
        tool: str,
        params: Mapping[str, Any],
        act: Callable[[GateDecision], Awaitable[Outcome]],
        *,
        extra: Mapping[str, Any] | None = None,
        decision: GateDecision | None = None,
    ) -> GatedCall:
        """:meth:`run` for a coroutine act (the MCP proxy)."""
        return await run_call_async(self, tool, params, act, extra=extra, decision=decision)

    def unjudged(
        self, tool: str, category: str, params: Mapping[str, Any], *, target: str | None, kind: str
    ) -> GateDecision:
        """A decision for an event that is not a tool call (an agent run): nothing to judge,
        recorded through the same seam with ``kind``."""
        evaluation = Evaluation(
            "allow", True, None, None, None, "", (), category, [], params, self.root
        )
        return GateDecision(
            tool, params, evaluation, False, "", (), (), kind=kind, shown_target=target
        )

    def refuse(
        self, decision: GateDecision, *, extra: Mapping[str, Any] | None = None
    ) -> GatedCall:
        """Record a blocked call the door will not run (the hook's pre step)."""
        return self.run(decision.tool, decision.params, _never, extra=extra, decision=decision)

    # -- the two steps ------------------------------------------------------------------------
    def decide(self, tool: str, params: Mapping[str, Any]) -> GateDecision:
        """Classify and evaluate a call; nothing has run yet.

        Any internal error fails closed: the call is refused with the error as its reason.
        """
        try:
            with own_reading(self.inspectors):  # a search's judgement may read its files
                return self._decide_locked(tool, params)
        except Exception as exc:
            return failed_closed(tool, params, describe_exception(exc), self.root)

    def _decide_locked(self, tool: str, params: Mapping[str, Any]) -> GateDecision:
        with self._lock:
            self._sync()
            if not self.rate_windows:
                return self._decide(tool, params, self.rate_counter)
            log = HitLog(self.rate_counter)
            decision = self._decide(tool, params, log)
            decision.rate_hits = log.result(self.clock())
            return decision

    def redecide(
        self, tool: str, params: Mapping[str, Any], rate_hits: RateHits | None
    ) -> GateDecision:
        """Evaluate again a call decided before, maybe in another process (the hook's pre step).

        Rate-limited rules get the answers ``rate_hits`` (that decision's) recorded, and nothing
        is counted a second time; the decision carries ``rate_hits`` to the call's record.
        """
        with self._lock:
            self._sync()
            decision = self._decide(tool, params, ReplayedHits(rate_hits))
            decision.rate_hits = rate_hits
            return decision

    def _decide(
        self,
        tool: str,
        params: Mapping[str, Any],
        rate_counter: RateCounter,
    ) -> GateDecision:
        category = self.classifier(tool, params) if self.classifier is not None else None
        evaluation = self.policy.evaluate(
            tool, params, rate_counter=rate_counter, root=self.root, category=category
        )
        alerts = alerts_for(tool, evaluation.category, evaluation.targets)
        rules = BuiltInRules(self.store_guard, self.install_guard, self.process_guard)
        reached = rules.reached(evaluation, params)
        if reached is not None:
            if not evaluation.blocked:
                what, touched = reached
                return store_refusal(tool, params, evaluation, alerts, touched, self.root, what)
            alerts = (*alerts, TAMPER_ALERT)  # refused by the policy already: keep its reason
        constraints = evaluation.constraints
        quarantine = self.ladder.check(tool, evaluation.category)
        if quarantine is not None:
            return GateDecision(
                tool,
                params,
                evaluation,
                True,
                BLOCK_PREFIX + quarantine.message,
                (*constraints, "immune:quarantine"),
                alerts,
                quarantine,
            )
        if not evaluation.blocked and UNREAD_PARAMETERS in evaluation.target_list:
            return unread_refusal(tool, params, evaluation, alerts, self.root)
        if evaluation.blocked:
            return GateDecision(
                tool,
                params,
                evaluation,
                True,
                f"{BLOCK_PREFIX}[web4-policy] {evaluation.reason}",
                constraints,
                alerts,
            )
        leak = self._outgoing_leak(tool, evaluation.category, params)
        if leak is not None:
            return leak_decision(tool, params, evaluation, alerts, leak, self.root)
        return GateDecision(tool, params, evaluation, False, "", constraints, alerts)

    def _outgoing_leak(
        self, tool: str, category: str, params: Mapping[str, Any]
    ) -> OutgoingLeak | None:
        for inspector in self.inspectors:
            outgoing = getattr(inspector, "outgoing", None)
            if outgoing is not None:
                leak: OutgoingLeak | None = outgoing(tool, category, params)
                if leak is not None:
                    return leak
        return None

    def record(
        self,
        decision: GateDecision,
        *,
        status: str,
        output: Any = None,
        error_message: str | None = None,
        duration_ms: float | None = None,
        extra: Mapping[str, Any] | None = None,
        observed: Any = None,
    ) -> dict[str, Any]:
        """Append the call's record (and any escalation it causes); return the call's record.

        ``extra`` adds top-level fields to the record (e.g. ``social`` for message sends).
        ``observed`` is what in-process observers see instead of ``output`` (the output before
        inspection redacted it; never written to the chain).
        """
        with self._lock:
            record = self._record(decision, status, output, error_message, duration_ms, extra)
            if decision.kind == "call":
                seen = output if observed is None else observed
                for observer in self.observers:
                    observer(record, seen)
            return record

    def _record(
        self,
        decision: GateDecision,
        status: str,
        output: Any,
        error_message: str | None,
        duration_ms: float | None,
        more: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        if duration_ms is None:
            duration_ms = (time.perf_counter() - decision.started) * 1000.0
        if status == "blocked" and error_message is None:
            error_message = decision.message
        evaluation = decision.evaluation
        extra: dict[str, Any] = {
            "door": self.door,
            "reason": decision.reason,
            "clock": round(self.clock(), 6),
        }
        if decision.alerts:
            extra["alerts"] = list(decision.alerts)
        if decision.record_extra:
            extra.update(decision.record_extra)
        rate_hits = decision.rate_hits
        if rate_hits is not None and rate_hits.rule_ids:
            extra["rateHits"] = list(rate_hits.rule_ids)
            extra["rateClock"] = round(rate_hits.at, 6)
        if more:
            extra.update(more)
        target = evaluation.target if decision.shown_target is None else decision.shown_target
        params, target, error_message, targets = _scrubbed(
            self.inspectors, decision.params, target, error_message, evaluation.targets
        )
        draft = RecordDraft(
            tool=decision.tool,
            category=evaluation.category,
            target=target,
            targets=targets,
            params=params,
            constraints=decision.constraints,
            status=status,
            output=output,
            error_message=error_message,
            duration_ms=round(duration_ms, 3),
            kind=decision.kind,
            extra=extra,
            approval_required=evaluation.decision == ASK,
        )
        record = self.chain.append(draft)
        if decision.kind != "call":
            self._appended(record)
            return record
        self._observe(record, decision, status)
        return record

    def _observe(self, record: Mapping[str, Any], decision: GateDecision, status: str) -> None:
        self._appended(record)
        if (step := escalation_for(record, self.clock())) is not None:
            self._append_immune("escalation", step)
        if not self.immune_config.enabled:
            return
        event = CallEvent(
            record_id=str(record["recordId"]),
            tool=decision.tool,
            category=decision.evaluation.category,
            input_hash=str(record["request"]["inputHash"]),
            decision=immune_decision(decision.evaluation.decision, status),  # type: ignore[arg-type]
            enforced=decision.evaluation.enforced,
            status=status,  # type: ignore[arg-type]
            alerts=tuple(record.get("alerts", ())),  # the inspection's findings too
            timestamp=float(record.get("clock", self.clock())),
        )
        for escalation in self.ladder.observe(event):
            self._append_immune("escalation", escalation)

    def _append_immune(self, kind: str, step: Escalation | Lift) -> dict[str, Any]:
        data = step.to_dict()
        draft = RecordDraft(
            tool="immune",
            category="immune",
            target=None,
            targets=(),
            params=data,
            constraints=(f"immune:{kind}",) if kind == "lift" else (f"immune:{data.get('level')}",),
            status="success",
            output=None,
            error_message=None,
            duration_ms=0.0,
            kind=kind,
            extra={"door": self.door, "immune": data},
        )
        record = self.chain.append(draft)
        self._appended(record)
        return record

    def _put_back(self, escalation: Escalation) -> None:
        with self._lock:
            self.ladder.apply(escalation)
            self._append_immune("escalation", escalation)

    def lift(self, reason: str) -> dict[str, Any]:
        """End the quarantine (recorded with ``reason``); return the lift record."""
        with self._lock:
            return self._lift(reason)

    def _lift(self, reason: str) -> dict[str, Any]:
        self._sync()
        lift = self.ladder.lift(reason)
        return self._append_immune("lift", lift)


def _scrubbed(
    inspectors: list[CallInspector],
    params: Mapping[str, Any],
    target: str | None,
    error_message: str | None,
    targets: tuple[str, ...],
) -> tuple[Any, Any, Any, tuple[Any, ...]]:
    """A record's fields scrubbed by each inspector that can: the chain never holds a known
    secret (each inspector scrubs the four fields at once, a text in several scanned once)."""
    for inspector in inspectors:
        scrub_all = getattr(inspector, "scrub_all", None)
        if scrub_all is not None:
            params, target, error_message, listed = scrub_all(
                (params, target, error_message, list(targets))
            )
            targets = tuple(listed)
    return params, target, error_message, targets


def _never(decision: GateDecision) -> Outcome:
    raise AssertionError("a refused call never acts")  # pragma: no cover - blocked: never run
