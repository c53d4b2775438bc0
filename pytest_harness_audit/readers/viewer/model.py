"""What the viewer shows of a stored session, read from its verified chain on disk.

:func:`load_session` turns one session of a storage directory into a :class:`SessionView`: the
verdict and its reasons, the chain's verification, one :class:`TimelineItem` per record and
the immune score over time. Nothing is taken from a live process, so the same view comes out of
``harness-audit view`` and of ``--harness-audit-html``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_harness_audit.audit.errors import AuditError
from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.audit.session_file import load_session_file
from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.audit.verify import ChainReport, verify_chain
from pytest_harness_audit.errors import HarnessAuditError, UsageError
from pytest_harness_audit.readers.verdict import Verdict, VerdictReason, judge, judge_record
from pytest_harness_audit.readers.viewer.score import ScoreSeries, score_series

#: The tone of each verdict (see :mod:`.palette`).
VERDICT_TONE = {"PASS": "ok", "WARN": "warn", "FAIL": "bad"}


@dataclass(frozen=True)
class TimelineItem:
    """One record as the timeline shows it: a label, a tone and its details."""

    position: int
    kind: str
    tool: str
    target: str
    label: str
    tone: str
    status: str
    rule: str | None
    reason: str | None
    error: str | None
    alerts: tuple[str, ...]
    effects: tuple[tuple[str, str], ...]
    judged: str | None
    verdict: str | None
    record_id: str
    timestamp: str
    details: str


@dataclass(frozen=True)
class ChainView:
    """The chain's verification, as the viewer words it."""

    valid: bool
    records: int
    head: str
    anchor: str
    problem: str | None

    @property
    def label(self) -> str:
        """``valid`` or ``INVALID``."""
        return "valid" if self.valid else "INVALID"


@dataclass(frozen=True)
class SessionView:
    """One session of the view: the overview row and its page."""

    session_id: str
    test: str | None
    created: str
    policy: str
    verdict: str
    reasons: tuple[str, ...]
    chain: ChainView
    items: tuple[TimelineItem, ...]
    score: ScoreSeries | None
    immune_note: str | None
    escalations: tuple[TimelineItem, ...] = ()
    lifts: tuple[TimelineItem, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def tone(self) -> str:
        """The verdict's tone."""
        return VERDICT_TONE.get(self.verdict, "info")

    @property
    def calls(self) -> int:
        """Tool calls and sends recorded."""
        return self.counts.get("calls", 0)

    @property
    def denied(self) -> int:
        """Calls denied or blocked."""
        return self.counts.get("denied", 0)

    @property
    def warned(self) -> int:
        """Calls warned or denied in dry-run."""
        return self.counts.get("warned", 0)

    @property
    def level(self) -> str:
        """The highest immune level the session reached."""
        levels = [item.label.lower() for item in self.escalations]
        return "quarantine" if "quarantine" in levels else "notice" if levels else "observe"


def session_exists(storage: str | os.PathLike[str], session_id: str) -> bool:
    """Whether ``storage`` holds a chain, session file or anchor for ``session_id``."""
    try:
        paths = StorageLayout.at(storage).paths(session_id)
    except AuditError:
        return False
    return paths.chain.exists() or paths.session_file.exists() or paths.anchor.exists()


def _run_reasons(run_verdict: str | None) -> tuple[VerdictReason, ...]:
    """The run's own verdict as a reason (``judge`` keeps the worst): a plugin's verdict rule or
    a record the disk refused judged the session where its chain cannot say so."""
    try:
        verdict = Verdict.parse(run_verdict) if run_verdict else Verdict.PASS
    except ValueError:
        verdict = Verdict.FAIL  # a summary that names no verdict is not a PASS
    if verdict is Verdict.PASS:
        return ()
    text = f"the run judged this session {verdict.value} (see its test's report)"
    return (VerdictReason(verdict, "run-verdict", text),)


def session_created(storage: str | os.PathLike[str], session_id: str) -> str:
    """When the session started (its session file's ``createdAt``; ``""`` when not known)."""
    metadata = load_session_file(StorageLayout.at(storage).paths(session_id).session_file)
    return str(metadata.get("createdAt", "")) if metadata else ""


def load_session(
    storage: str | os.PathLike[str],
    session_id: str,
    *,
    test: str | None = None,
    head: str | None = None,
    run_verdict: str | None = None,
    reasons: tuple[VerdictReason, ...] = (),
) -> SessionView:
    """The view of one stored session (``UsageError`` when the storage does not hold it);
    ``head`` and ``run_verdict`` as :class:`SessionRef` says."""
    if not session_exists(storage, session_id):
        raise UsageError(f"no audit session {session_id!r} in {storage}")
    report = verify_chain(storage, session_id, witness=head or None)
    records = [CallRecord(raw) for raw in iter_records(storage, session_id)]
    problem = None if report.valid else _problem(report)
    verdict, reasons = judge(
        records,
        chain_valid=report.valid,
        chain_problem=problem or "",
        extra=(*_run_reasons(run_verdict), *reasons),
    )
    items = tuple(_item(record) for record in records)
    calls = [r for r in records if r.kind in ("call", "message")]
    series, note = _score(storage, session_id, records)
    created = session_created(storage, session_id)
    return SessionView(
        session_id=session_id,
        test=test,
        created=created,
        policy=_policy_name(storage, session_id),
        verdict=verdict.value,
        reasons=tuple(str(reason) for reason in reasons),
        chain=ChainView(
            valid=report.valid,
            records=report.record_count,
            head=report.head,
            anchor=report.anchor_state,
            problem=problem,
        ),
        items=items,
        score=series,
        immune_note=note,
        escalations=tuple(item for item in items if item.kind == "escalation"),
        lifts=tuple(item for item in items if item.kind == "lift"),
        counts={
            "calls": len(calls),
            "denied": sum(1 for c in calls if c.decision == "deny" or c.status == "blocked"),
            "warned": sum(
                1
                for c in calls
                if c.decision == "warn" or (c.decision == "deny" and not c.enforced)
            ),
        },
    )


def _problem(report: ChainReport) -> str:
    where = f"record {report.first_bad_index}"
    if report.first_bad_record_id:
        where += f" ({report.first_bad_record_id})"
    return f"{where}: {report.reason}"


def _policy_name(storage: str | os.PathLike[str], session_id: str) -> str:
    from pytest_harness_audit.gate.session_policy import policy_path

    path = policy_path(storage, session_id)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "(not recorded)"
    name = document.get("name") if isinstance(document, dict) else None
    return str(name) if name else "(unnamed)"


def _score(
    storage: str | os.PathLike[str], session_id: str, records: list[CallRecord]
) -> tuple[ScoreSeries | None, str | None]:
    from pytest_harness_audit.gate.session_policy import load_session_policy

    try:
        policy = load_session_policy(storage, session_id)
    except (HarnessAuditError, OSError, ValueError, KeyError) as exc:
        return None, f"the session's recorded policy cannot be read: {exc}"
    if policy is None:
        return None, "no recorded policy: the session was not written by a gate"
    config = policy.immune_config
    if not config.enabled:
        return None, "the immune ladder is off in this session's policy"
    try:
        return score_series(config, [r.raw for r in records]), None
    except (HarnessAuditError, KeyError, TypeError, ValueError) as exc:
        return None, f"the immune score cannot be replayed: {exc}"


def _tone_and_label(record: CallRecord) -> tuple[str, str]:
    if record.kind == "escalation":
        level = str(record.raw.get("immune", {}).get("level", "?"))
        return ("bad" if level == "quarantine" else "warn"), level.upper()
    if record.kind == "lift":
        return "info", "LIFT"
    if record.kind not in ("call", "message"):
        return "info", record.kind.upper()
    if record.status == "blocked":
        return "bad", "QUARANTINED" if record.quarantined else "DENIED"
    if record.decision == "deny" and not record.enforced:
        return "warn", "DRY-RUN DENY"
    if record.decision == "warn":
        return "warn", "WARN"
    return "ok", (record.decision or "recorded").upper()


def _effects(raw: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    effects = raw.get("effects")
    if not isinstance(effects, Mapping):
        return ()
    shown: list[tuple[str, str]] = []
    for kind, value in effects.items():
        if isinstance(value, list):
            text = ", ".join(
                " → ".join(map(str, v)) if isinstance(v, list) else str(v) for v in value
            )
        else:
            text = str(value)
        shown.append((str(kind), text))
    return tuple(shown)


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else "?"


def _immune_text(kind: str, immune: Mapping[str, Any]) -> str:
    """``trigger repeated_failure: score 10 ≥ 10, session scope, 7 evidence records`` or the
    lift's reason and the level it ended."""
    if kind == "lift":
        return f"{immune.get('reason', '?')} (ended {immune.get('previousLevel', '?')})"
    scope = str(immune.get("scope", "session"))
    if immune.get("scopeValue"):
        scope += f" {immune['scopeValue']}"
    evidence = immune.get("evidence") or ()
    return (
        f"trigger {immune.get('trigger', '?')}: score {_number(immune.get('score'))} ≥ "
        f"{_number(immune.get('threshold'))}, {scope} scope, {len(evidence)} evidence records"
    )


def _item(record: CallRecord) -> TimelineItem:
    tone, label = _tone_and_label(record)
    part = judge_record(record)
    verdict = part.verdict.value if part is not None else None
    if part is not None and part.verdict is Verdict.FAIL:
        tone = "bad"
    elif part is not None and part.verdict is Verdict.WARN and tone == "ok":
        tone = "warn"
    judged = record.raw.get("judged")
    judged_text = None
    if isinstance(judged, Mapping):
        judged_text = f"{judged.get('verdict', '?')} ({judged.get('caughtBy', 'effect')}): "
        judged_text += str(judged.get("reason") or "")
    if record.kind in ("escalation", "lift"):
        immune = record.raw.get("immune", {})
        target = _immune_text(record.kind, immune)
        details: Any = immune
    else:
        target = record.recorded_target or ""
        details = record.params if record.params is not None else record.raw.get("request", {})
    return TimelineItem(
        position=record.position,
        kind=record.kind,
        tool=record.tool,
        target=target,
        label=label,
        tone=tone,
        status=record.status,
        rule=record.rule_id,
        reason=record.reason,
        error=record.error_message,
        alerts=record.alerts,
        effects=_effects(record.raw),
        judged=judged_text,
        verdict=verdict,
        record_id=record.record_id,
        timestamp=str(record.raw.get("timestamp", "")),
        details=json.dumps(details, indent=2, ensure_ascii=False, sort_keys=True, default=str),
    )


@dataclass(frozen=True)
class SessionRef:
    """Where a session is stored, and the test that made it (when known).

    A run's view also gives what the run published at the test's end, out of the agent's
    reach: ``head`` (the chain must contain it: a chain replaced since is ``witness_mismatch``)
    and ``verdict`` (kept when worse than the chain's: reasons outside the chain).
    """

    storage: str
    session_id: str
    test: str | None = None
    head: str | None = None
    verdict: str | None = None
    #: Reasons the session is judged by outside its chain, found by the caller (a hook session
    #: whose end never came: calls its host's transcript shows ran unseen …).
    reasons: tuple[VerdictReason, ...] = ()


@dataclass(frozen=True)
class RunView:
    """Every session of the page, in the order given."""

    title: str
    sessions: tuple[SessionView, ...]

    def count(self, verdict: str) -> int:
        """Sessions with this verdict."""
        return sum(1 for s in self.sessions if s.verdict == verdict)

    @property
    def has_tests(self) -> bool:
        """Whether any session names the test that made it."""
        return any(s.test for s in self.sessions)

    @property
    def invalid_chains(self) -> int:
        """Sessions whose chain does not verify."""
        return sum(1 for s in self.sessions if not s.chain.valid)

    def totals(self) -> str:
        """``4 sessions, 27 calls, 11 denied; 0 PASS, 0 WARN, 4 FAIL; 0 invalid chains``."""
        sessions = len(self.sessions)
        calls = sum(s.calls for s in self.sessions)
        denied = sum(s.denied for s in self.sessions)
        chains = self.invalid_chains
        return (
            f"{sessions} session{'s' * (sessions != 1)}, {calls} call{'s' * (calls != 1)}, "
            f"{denied} denied; {self.count('PASS')} PASS, {self.count('WARN')} WARN, "
            f"{self.count('FAIL')} FAIL; {chains} invalid chain{'s' * (chains != 1)}"
        )
