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

import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from pytest_harness_audit.audit.chain import AuditChain
from pytest_harness_audit.audit.clock import parse_timestamp
from pytest_harness_audit.audit.records import RecordDraft
from pytest_harness_audit.gate.seam import (
    GatedCall,
    Inspector,
    Outcome,
    describe_exception,
    run_call,
    run_call_async,
)
from pytest_harness_audit.gate.session_policy import publish_session_policy
from pytest_harness_audit.immune import CallEvent, ImmuneLadder, alerts_for
from pytest_harness_audit.immune.records import Escalation, Lift, Quarantine
from pytest_harness_audit.policy import Evaluation, Policy, RateCounter
from pytest_harness_audit.policy.ratelimit import (
    HitLog,
    RateHits,
    ReplayedHits,
    SlidingWindowCounter,
)

#: What ``Gate.classify`` hooks return: a category for a tool name, or ``None`` to pass.
Classifier = Callable[[str, Mapping[str, Any]], "str | None"]

BLOCK_PREFIX = "[blocked] "


@dataclass
class GateDecision:
    """The gate's answer for one call, before it runs.

    ``blocked`` calls must not run; ``message`` is what the agent reads then
    (``[blocked] [web4-policy] <reason>`` or ``[blocked] [web4-immune] quarantined: <why>``).
    ``rate_hits`` are the rate-limited rules the decision counted (its record carries them).
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
    rate_hits: RateHits | None = None
    #: The record's kind: ``call`` for tool calls; other kinds (``agent``) are not judged.
    kind: str = "call"
    #: The target the record shows when it is not the policy's (an agent run's program).
    shown_target: str | None = None

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
        #: Rate-limited rules by id, with their windows (ms); empty = nothing to count.
        self._rate_windows = {
            rule.rule.id: rule.window_ms for rule in policy.compiled_rules if rule.max_count
        }
        # Only a ladder or rate limits need other processes' records.
        self._follow = self.immune_config.enabled or bool(self._rate_windows)
        #: Leading records whose effects our state holds (our own included).
        self._seen_records = 0
        # The next chain line to read and its byte offset. Reading lags behind our own records
        # until another process appends (a session with one writer never reads): the lines
        # from ``_read_index`` up to ``_seen_records`` are always our own.
        self._read_index = 0
        self._read_offset = 0
        #: Called with ``(record, output)`` after each call's record is appended.
        self.observers: list[Callable[[Mapping[str, Any], Any], object]] = []
        # one gate may serve a test thread and a proxy thread at once
        self._lock = threading.RLock()
        #: What looks at each call's effects and outputs after it ran (DESIGN §2, inspect).
        self.inspectors: list[Inspector] = []
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
        chain = AuditChain(
            storage_dir,
            session_id,
            audit_level=audit_level or policy.audit_level,
            fsync=fsync,
            agent_id=agent_id,
        )
        gate = cls(policy, chain, root=root, door=door, classifier=classifier, clock=clock)
        publish_session_policy(chain.storage_dir, chain.session_id, policy)
        return gate

    # -- state from the chain ------------------------------------------------------------------
    def sync(self) -> None:
        """Bring the immune ladder and rate counter up to date with records others appended."""
        with self._lock:
            self._sync()

    def _sync(self) -> None:
        """Replay the records other processes appended since we last looked."""
        if not self._follow:
            return
        count = self.chain.record_count
        if count != self._seen_records:
            self._replay(count)

    def _replay(self, stop: int) -> None:
        """Apply the records before position ``stop`` not applied yet, skipping our own."""
        ladder = self.ladder if self.immune_config.enabled else None
        windows = self._rate_windows
        now_ms = self.clock() * 1000.0
        own_until = self._seen_records
        for index, record in self._read_until(stop):
            if index < own_until or record is None:
                continue
            if ladder is not None:
                entry = immune_entry(record)
                if entry is not None:
                    ladder.apply(entry)
            if windows:
                self._count_rate_hits(record, windows, now_ms)
        self._seen_records = max(self._seen_records, self._read_index)

    def _read_until(self, stop: int) -> Iterator[tuple[int, dict[str, Any] | None]]:
        """``(position, record)`` of the chain lines not read yet, up to ``stop`` (excluded).

        A line that is not a JSON object still takes its position (its record is ``None``).
        """
        if self._read_index >= stop:
            return
        try:
            handle = open(self.chain.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with handle:
            handle.seek(self._read_offset)
            for line in handle:
                if not line.endswith(b"\n"):
                    return  # a write in progress
                index = self._read_index
                self._read_index = index + 1
                self._read_offset += len(line)
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    # orjson refuses escaped lone surrogates, which the writer may produce
                    try:
                        record = json.loads(line)
                    except ValueError:
                        record = None
                yield index, record if isinstance(record, dict) else None
                if self._read_index >= stop:
                    return

    def _count_rate_hits(
        self, record: Mapping[str, Any], windows: Mapping[str, float], now_ms: float
    ) -> None:
        """Add another gate's ``rateHits`` to our counter (the ones still inside a window)."""
        rule_ids = record.get("rateHits")
        if not rule_ids or not isinstance(rule_ids, list):
            return
        at = record.get("rateClock", record.get("clock"))
        if not isinstance(at, (int, float)) or isinstance(at, bool):
            return
        for rule_id in rule_ids:
            window = windows.get(rule_id) if isinstance(rule_id, str) else None
            if window is not None and at * 1000.0 > now_ms - window:
                self.rate_counter.add(rule_id, at)

    @property
    def rate_windows(self) -> Mapping[str, float]:
        """The policy's rate-limited rules by id, with their windows in ms (empty: none)."""
        return self._rate_windows

    def add_rate_hits(self, hits: RateHits) -> None:
        """Count hits decided elsewhere whose record is not in the chain yet.

        The hook door uses it for calls an earlier pre step allowed that are still running.
        """
        with self._lock:
            now_ms = self.clock() * 1000.0
            for rule_id in hits.rule_ids:
                window = self._rate_windows.get(rule_id)
                if window is not None and hits.at * 1000.0 > now_ms - window:
                    self.rate_counter.add(rule_id, hits.at)

    def _appended(self, record: Mapping[str, Any]) -> None:
        """Note a record we appended: catch up with others' records before it, skip it later."""
        if not self._follow:
            return
        position = int(record["provenance"]["actionIndex"])
        if position > self._seen_records:
            self._replay(position)
        self._seen_records = position + 1

    # -- the two steps ------------------------------------------------------------------------
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
            return self._decide_locked(tool, params)
        except Exception as exc:
            return self._failed_closed(tool, params, exc)

    def _failed_closed(
        self, tool: str, params: Mapping[str, Any], exc: BaseException
    ) -> GateDecision:
        reason = f"internal gate error, refused: {describe_exception(exc)}"
        evaluation = Evaluation(
            "deny",
            True,
            "gate-error",
            "Gate error",
            None,
            reason,
            ("policy:deny", "rule:gate-error"),
            "unknown",
            [],
            {},
            self.root,
        )
        safe_params = params if isinstance(params, Mapping) else {}
        return GateDecision(
            str(tool),
            safe_params,
            evaluation,
            True,
            f"{BLOCK_PREFIX}[web4-policy] {reason}",
            evaluation.constraints,
            ("gate_error",),
        )

    def _decide_locked(self, tool: str, params: Mapping[str, Any]) -> GateDecision:
        with self._lock:
            self._sync()
            if not self._rate_windows:
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
        rate_hits = decision.rate_hits
        if rate_hits is not None and rate_hits.rule_ids:
            extra["rateHits"] = list(rate_hits.rule_ids)
            extra["rateClock"] = round(rate_hits.at, 6)
        if more:
            extra.update(more)
        draft = RecordDraft(
            tool=decision.tool,
            category=evaluation.category,
            target=evaluation.target if decision.shown_target is None else decision.shown_target,
            targets=evaluation.targets,
            params=decision.params,
            constraints=decision.constraints,
            status=status,
            output=output,
            error_message=error_message,
            duration_ms=round(duration_ms, 3),
            kind=decision.kind,
            extra=extra,
        )
        record = self.chain.append(draft)
        if decision.kind != "call":
            self._appended(record)
            return record
        self._observe(record, decision, status)
        for observer in self.observers:
            observer(record, output)
        return record

    def _observe(self, record: Mapping[str, Any], decision: GateDecision, status: str) -> None:
        self._appended(record)
        if not self.immune_config.enabled:
            return
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

    def lift(self, reason: str) -> dict[str, Any]:
        """End the quarantine (recorded with ``reason``); return the lift record."""
        with self._lock:
            return self._lift(reason)

    def _lift(self, reason: str) -> dict[str, Any]:
        self._sync()
        lift = self.ladder.lift(reason)
        return self._append_immune("lift", lift)


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


def _never(decision: GateDecision) -> Outcome:
    raise AssertionError("a refused call never acts")  # pragma: no cover - blocked: never run
