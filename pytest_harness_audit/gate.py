"""The gate: every door hands its tool calls here (DESIGN §2).

``decide`` classifies the call, extracts its targets, evaluates the policy and consults the
immune ladder — before anything runs. ``record`` appends the call's R6 record to the session's
chain and lets the immune ladder observe it, appending any escalation as a record too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.chain import AuditChain
from pytest_harness_audit.audit.clock import parse_timestamp
from pytest_harness_audit.audit.records import RecordDraft
from pytest_harness_audit.immune import CallEvent, ImmuneLadder, alerts_for
from pytest_harness_audit.immune.records import Escalation, Lift, Quarantine
from pytest_harness_audit.policy import Evaluation, Policy, SlidingWindowCounter
from pytest_harness_audit.session_policy import save_session_policy

#: What ``Gate.classify`` hooks return: a category for a tool name, or ``None`` to pass.
Classifier = Callable[[str, Mapping[str, Any]], "str | None"]

BLOCK_PREFIX = "[blocked] "


@dataclass
class GateDecision:
    """The gate's answer for one call, before it runs.

    ``blocked`` calls must not run; ``message`` is what the agent reads then
    (``[blocked] [web4-policy] <reason>`` or ``[blocked] [web4-immune] quarantined: <why>``).
    """

    tool: str
    params: Mapping[str, Any]
    evaluation: Evaluation
    blocked: bool
    message: str
    constraints: tuple[str, ...]
    alerts: tuple[str, ...]
    quarantine: Quarantine | None = None
    started: float = field(default_factory=time.perf_counter)

    @property
    def category(self) -> str:
        """The call's category."""
        return self.evaluation.category

    @property
    def reason(self) -> str:
        """Why: the quarantine's, else the policy's reason."""
        return self.quarantine.why if self.quarantine is not None else self.evaluation.reason


class Gate:
    """One session's gate: a policy, a chain and (when the policy enables it) an immune ladder.

    Several processes may gate calls into the same session (a test and its MCP proxy): the
    chain serialises appends, and the ladder is brought up to date from the chain before each
    decision, so the chain stays the single source of truth.
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
        self._seen_records = 0
        #: Called with ``(record, output)`` after each call's record is appended.
        self.observers: list[Callable[[Mapping[str, Any], Any], object]] = []
        # one gate may serve a test thread and a proxy thread at once
        self._lock = threading.RLock()
        self._sync_ladder()
        save_session_policy(chain.storage_dir, chain.session_id, policy)

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
    ) -> Gate:
        """Open (or resume) the session ``session_id`` under ``storage_dir``."""
        chain = AuditChain(
            storage_dir, session_id, audit_level=policy.audit_level, fsync=fsync, agent_id=agent_id
        )
        return cls(policy, chain, root=root, door=door)

    # -- immune state from the chain ------------------------------------------------------------
    def sync(self) -> None:
        """Bring the immune ladder up to date with records other gates appended."""
        with self._lock:
            self._sync_ladder()

    def _sync_ladder(self) -> None:
        """Replay records that other processes appended since we last looked."""
        if not self.immune_config.enabled:
            return
        if self.chain.record_count == self._seen_records:
            return
        for index, record in enumerate(self.chain.records()):
            if index < self._seen_records:
                continue
            entry = immune_entry(record)
            if entry is not None:
                self.ladder.apply(entry)
        self._seen_records = self.chain.record_count

    # -- the two steps ------------------------------------------------------------------------
    def decide(self, tool: str, params: Mapping[str, Any]) -> GateDecision:
        """Classify and evaluate a call; nothing has run yet."""
        with self._lock:
            return self._decide(tool, params)

    def _decide(self, tool: str, params: Mapping[str, Any]) -> GateDecision:
        category = self.classifier(tool, params) if self.classifier is not None else None
        evaluation = self.policy.evaluate(
            tool, params, rate_counter=self.rate_counter, root=self.root, category=category
        )
        alerts = alerts_for(tool, evaluation.category, evaluation.targets)
        constraints = evaluation.constraints
        self._sync_ladder()
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
        return GateDecision(tool, params, evaluation, False, "", constraints, alerts)

    def record(
        self,
        decision: GateDecision,
        *,
        status: str,
        output: Any = None,
        error_message: str | None = None,
        duration_ms: float | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Append the call's record (and any escalation it causes); return the call's record.

        ``extra`` adds top-level fields to the record (e.g. ``social`` for message sends).
        """
        with self._lock:
            return self._record(decision, status, output, error_message, duration_ms, extra)

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
        if more:
            extra.update(more)
        draft = RecordDraft(
            tool=decision.tool,
            category=evaluation.category,
            target=evaluation.target,
            targets=evaluation.targets,
            params=decision.params,
            constraints=decision.constraints,
            status=status,
            output=output,
            error_message=error_message,
            duration_ms=round(duration_ms, 3),
            extra=extra,
        )
        record = self.chain.append(draft)
        self._observe(record, decision, status)
        for observer in self.observers:
            observer(record, output)
        return record

    def _observe(self, record: Mapping[str, Any], decision: GateDecision, status: str) -> None:
        if not self.immune_config.enabled:
            self._seen_records = self.chain.record_count
            return
        self._sync_ladder_before(record)
        event = CallEvent(
            record_id=str(record["recordId"]),
            tool=decision.tool,
            category=decision.evaluation.category,
            input_hash=str(record["request"]["inputHash"]),
            decision=decision.evaluation.decision,  # type: ignore[arg-type]
            enforced=decision.evaluation.enforced,
            status=status,  # type: ignore[arg-type]
            alerts=decision.alerts,
            timestamp=float(record.get("clock", self.clock())),
        )
        for escalation in self.ladder.observe(event):
            self._append_immune("escalation", escalation)
        self._seen_records = self.chain.record_count

    def _sync_ladder_before(self, record: Mapping[str, Any]) -> None:
        """Catch up with records appended by others before ours (ours is observed live)."""
        position = int(record["provenance"]["actionIndex"])
        if position > self._seen_records:
            for index, other in enumerate(self.chain.records()):
                if self._seen_records <= index < position:
                    entry = immune_entry(other)
                    if entry is not None:
                        self.ladder.apply(entry)
        self._seen_records = position

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
        return self.chain.append(draft)

    def lift(self, reason: str) -> dict[str, Any]:
        """End the quarantine (recorded with ``reason``); return the lift record."""
        with self._lock:
            return self._lift(reason)

    def _lift(self, reason: str) -> dict[str, Any]:
        self._sync_ladder()
        lift = self.ladder.lift(reason)
        record = self._append_immune("lift", lift)
        self._seen_records = self.chain.record_count
        return record


def immune_entry(record: Mapping[str, Any]) -> CallEvent | Escalation | Lift | None:
    """The immune ladder's view of a chain record (``None`` for records it ignores)."""
    kind = record.get("kind", "call")
    if kind == "escalation":
        return Escalation.from_dict(record["immune"])
    if kind == "lift":
        return Lift.from_dict(record["immune"])
    if kind != "call":
        return None
    constraints = record.get("rules", {}).get("constraints", [])
    decision = next((c[7:] for c in constraints if c.startswith("policy:")), "allow")
    return CallEvent(
        record_id=str(record["recordId"]),
        tool=str(record["tool"]),
        category=str(record["category"]),
        input_hash=str(record["request"]["inputHash"]),
        decision=decision,  # type: ignore[arg-type]
        enforced="enforced:false" not in constraints,
        status=record["result"]["status"],
        alerts=tuple(record.get("alerts", ())),
        timestamp=float(record["clock"])
        if "clock" in record
        else _timestamp_seconds(str(record.get("timestamp", ""))),
    )


def _timestamp_seconds(stamp: str) -> float:
    parsed = parse_timestamp(stamp)
    return parsed.timestamp() if parsed is not None else 0.0
