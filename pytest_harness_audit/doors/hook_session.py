"""The host hook door's session events: Claude Code style ``SessionStart``, ``Stop`` and
``SessionEnd``.

Each first records, as not run, the session's calls the host asked about and settled without
an event (a refusal at its prompt, :mod:`.hook_asks`): ``Stop`` ends a turn, so no call of it is
still waiting for an answer; ``Stop`` does nothing else and prints nothing (it never keeps the
agent going).

``session-start`` opens the session of the payload's ``session_id`` (its chain, Soft LCT and the
policy file beside it) and records a ``session`` record naming the policy, how the host
started (``source``) and the state of the host's settings (:mod:`.hook_host_settings`), which
``stop`` and ``session-end`` (like every ``pre`` and ``post``) compare with the last state the
chain holds. ``session-end`` verifies the chain, records the end (with what the
verification found), writes the session report to ``<storage>/reports/<session>.yaml`` (what
``harness-audit audit report SESSION`` prints) and removes the session's stale pending files:
at either event no call of the session is in flight, so a pending file left by a ``pre`` whose
``post`` never came is stale (first noting any changed or removed behind its seal,
:mod:`.hook_pending_seal`). Both record through the gate's seam, never by appending to the
chain directly, and print nothing on stdout: nothing a host could read as context or a decision.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pytest_harness_audit.audit.errors import AuditError, ChainError
from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.audit.storage import sanitize_session_id
from pytest_harness_audit.audit.verify import ChainReport, verify_chain
from pytest_harness_audit.doors.chain_faults import ChainFaults
from pytest_harness_audit.doors.chain_faults import open_gate as open_session_gate
from pytest_harness_audit.doors.hook import HookPayload, open_gate, read_payload
from pytest_harness_audit.doors.hook_asks import EVERY_AGENT, any_asked, check_seals, reconcile
from pytest_harness_audit.doors.hook_between import between_events
from pytest_harness_audit.doors.hook_between_walk import late_reasons as late_workspace
from pytest_harness_audit.doors.hook_continuity import (
    ROLLED_BACK,
    HookEvent,
    Loss,
    record_loss,
    witnessed_loss,
)
from pytest_harness_audit.doors.hook_effects import workspace_root
from pytest_harness_audit.doors.hook_faults import record_unrecorded_calls
from pytest_harness_audit.doors.hook_host_settings import (
    PROJECT_PREFIX,
    PROJECT_SETTINGS,
    STATE_FIELD,
    Recorded,
    check_between,
    host_settings_state,
    late_reasons,
    recorded_state,
)
from pytest_harness_audit.doors.hook_pending_seal import record_broken
from pytest_harness_audit.doors.hook_unseen import TRANSCRIPT_FIELD, late_unseen
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.gate.session_policy import load_session_policy
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.report import (
    SessionReport,
    build_report,
    load_report_text,
    write_report,
)
from pytest_harness_audit.readers.verdict import Verdict, VerdictReason, ended_reason, judge

if TYPE_CHECKING:
    from pytest_harness_audit.readers.session_view import AuditedSession

SESSION_START = "SessionStart"
SESSION_END = "SessionEnd"
STOP = "Stop"
SUBAGENT_STOP = "SubagentStop"
#: The ``kind`` and ``category`` of the records these events leave in the chain.
SESSION_KIND = "session"
#: The verdict reason of a chain that goes on after its ``SessionEnd`` (see ``unended_report``).
AFTER_END_CODE = "records-after-session-end"
#: The verdict reason of a loss the continuity witness proves after the last event.
LATE_LOSS_CODE = "chain-lost-after-last-event"
#: The verdict reason of a report file changed after the session's end.
REPORT_CHANGED_CODE = "report-file-changed"
_REPORT_VERDICT = re.compile(r"^verdict: (PASS|WARN|FAIL)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class SessionPayload:
    """The fields of a ``SessionStart`` / ``SessionEnd`` payload the door uses."""

    event: str
    session_id: str
    cwd: str | None
    #: ``source`` of a start (startup, resume, clear, compact), ``reason`` of an end.
    why: str | None
    #: The host's transcript (``transcript_path``), when the payload names one.
    transcript: str | None = None
    #: The subagent (``agent_id``) a ``SubagentStop`` payload is about.
    agent_id: str | None = None

    def open_gate(self, storage: Path, policy: Policy) -> Gate:
        """The session's gate, as the hook door opens it."""
        return open_session_gate(
            storage_dir=storage,
            session_id=self.session_id,
            policy=policy,
            root=self.cwd,
            door="hook",
        )


def parse_session_payload(text: str, event: str) -> SessionPayload:
    """Validate a session event payload; a malformed one raises one clear :class:`UsageError`."""
    data, _ = read_payload(text, event)
    session_id = data.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        raise UsageError(
            f"hook payload: field 'session_id' must be a non-empty string, got {session_id!r}"
        )
    cwd = data.get("cwd")
    why = data.get("source" if event == SESSION_START else "reason")
    return SessionPayload(
        event,
        session_id,
        cwd if isinstance(cwd, str) else None,
        why if isinstance(why, str) else None,
        transcript if isinstance(transcript := data.get("transcript_path"), str) else None,
        agent if isinstance(agent := data.get("agent_id"), str) and agent else None,
    )


def clean_pending(storage: Path, session_id: str) -> int:
    """Remove the session's ``pending/<session>/*.json`` files (and the state of calls
    reconciled there); return how many pending files there were."""
    folder = storage / "pending" / sanitize_session_id(session_id)
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if entry.name.endswith(".settled"):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
        elif entry.name.endswith(".json"):
            try:
                os.unlink(entry.path)
            except OSError:
                continue
            removed += 1
    with contextlib.suppress(OSError):
        folder.rmdir()
    return removed


def _record(
    storage: Path, payload: SessionPayload, policy: Policy, params: Mapping[str, Any]
) -> Mapping[str, Any]:
    """Record the event through the gate's seam (a ``session`` record, nothing judged).

    ``params`` are kept twice: as the call's parameters (at audit level ``verbose``) and, at
    every audit level, as the record's top-level ``session`` field.
    """
    gate = payload.open_gate(storage, policy)
    try:
        decision = gate.unjudged(
            payload.event, SESSION_KIND, params, target=payload.cwd, kind=SESSION_KIND
        )
        done = gate.run(
            payload.event,
            params,
            lambda _decision: Outcome("success", None, None),
            extra={SESSION_KIND: dict(params)},
            decision=decision,
        )
        return done.record
    finally:
        gate.chain.close()


def reconcile_asks(
    payload: SessionPayload, storage: Path, policy: Policy, agent: str = EVERY_AGENT
) -> int:
    """Record the session's asked calls left without an outcome (of ``agent``: every agent's
    unless named) as not run; how many."""
    if not any_asked(storage, payload.session_id):
        return 0
    # the door's gate with its inspection: the project's known secrets never reach the chain
    where = HookPayload(payload.event, payload.session_id, payload.event, {}, payload.cwd, None)
    gate, _inspection = open_gate(storage, where, policy)
    try:
        return reconcile(
            gate, storage, event=payload.event, agent=agent, session_id=payload.session_id
        )
    finally:
        gate.chain.close()


def check_pending_seals(payload: SessionPayload, storage: Path, policy: Policy) -> None:
    """Note the session's pending files changed or removed behind their seals (calls whose
    post never came, :mod:`.hook_pending_seal`) before they are cleaned."""
    for key, how in check_seals(storage, payload.session_id):
        record_broken(
            storage, payload.session_id, policy, payload.cwd, event=payload.event, key=key, how=how
        )
    # a call that ran and whose post never recorded it (the post step ended first)
    lost = record_unrecorded_calls(
        storage, policy, payload.session_id, payload.transcript, payload.cwd, payload.event
    )
    if lost:  # refusals the chain no longer holds: an older copy of it was put back
        event = HookEvent(payload.session_id, payload.event, payload.transcript, None, payload.cwd)
        ids = tuple(use.use_id for use in lost)
        record_loss(storage, policy, event, Loss(ROLLED_BACK, len(lost), ids))


def handle_stop(text: str, *, storage: Path, policy: Policy) -> None:
    """A ``Stop`` payload: the turn is over, so its asks left without an outcome are recorded
    (and a change of the host's settings since the last event)."""
    payload = parse_session_payload(text, STOP)
    between_events(
        storage, payload.session_id, policy=policy, cwd=payload.cwd, event=STOP, calls_done=True
    )
    reconcile_asks(payload, storage, policy)


def handle_subagent_stop(text: str, *, storage: Path, policy: Policy) -> None:
    """A ``SubagentStop`` payload: that subagent's turn is over, so its asks left without an
    outcome are recorded (the main agent's calls may still be in flight: nothing else is
    compared here). A payload naming no subagent settles nothing."""
    payload = parse_session_payload(text, SUBAGENT_STOP)
    if payload.agent_id is not None:
        reconcile_asks(payload, storage, policy, agent=payload.agent_id)


def handle_session_start(text: str, *, storage: Path, policy: Policy) -> None:
    """Open the session of a ``SessionStart`` payload and record its start."""
    payload = parse_session_payload(text, SESSION_START)
    reconcile_asks(payload, storage, policy)  # a resumed session's asks from before
    check_pending_seals(payload, storage, policy)
    if not Recorded.read(storage, payload.session_id).ended:
        # a start within a session (after a compaction or /clear): a change since its last event
        # counts; after its end, the user's own changes do not
        check_between(
            storage, payload.session_id, policy=policy, cwd=payload.cwd, event=SESSION_START
        )
    params: dict[str, Any] = {
        "source": payload.why,
        "policy": policy.name,
        "policyHash": policy.content_hash,
        "stalePending": clean_pending(storage, payload.session_id),
        STATE_FIELD: host_settings_state(project=workspace_root(payload.cwd)),
    }
    if payload.transcript is not None:
        # read again by `audit report` when no SessionEnd comes (:mod:`.hook_unseen`)
        params[TRANSCRIPT_FIELD] = payload.transcript
    _record(storage, payload, policy, params)


@dataclass(frozen=True)
class SessionEnded:
    """What ``session-end`` found: the verification before the end record, and the report."""

    session_id: str
    chain: ChainReport
    verdict: Verdict
    report: Path


def handle_session_end(text: str, *, storage: Path, policy: Policy) -> SessionEnded:
    """Verify the session's chain, record its end, write its report, clean its pending files.

    A chain that can no longer be written (changed outside the harness) leaves the end
    unrecorded; the session is still judged (FAIL, ``tamper``) and reported."""
    payload = parse_session_payload(text, SESSION_END)
    faults = ChainFaults()
    host = None
    try:
        host = between_events(
            storage,
            payload.session_id,
            policy=policy,
            cwd=payload.cwd,
            event=SESSION_END,
            calls_done=True,
        )
        reconcile_asks(payload, storage, policy)
        check_pending_seals(payload, storage, policy)
    except ChainError as exc:
        faults.note(str(exc))
    before = verify_chain(storage, payload.session_id)
    params: dict[str, Any] = {
        "reason": payload.why,
        "chainValid": before.valid,
        "chainRecords": before.record_count,
        "stalePending": clean_pending(storage, payload.session_id),
    }
    if host is not None and host.now is not None:
        params[STATE_FIELD] = host.now
    if not before.valid:
        params["chainProblem"] = f"{before.reason} at record {before.first_bad_index}"
    if faults.first is None:
        try:
            _record(storage, payload, policy, params)
        except ChainError as exc:
            faults.note(str(exc))
    session = StoredSession(storage, payload.session_id, policy, payload.cwd, faults)
    report = build_report(cast("AuditedSession", session))
    path = write_report(storage, payload.session_id, report)
    return SessionEnded(payload.session_id, session.verify(), report.verdict, path)


class StoredSession:
    """A hook session read back from its store, as the report builder reads a session.

    ``build_report`` reads ``root``, ``storage_dir``, ``template``, ``policy``, ``records``,
    ``verify()`` and ``judge()``; the workspace is the host's ``cwd``.
    """

    def __init__(
        self,
        storage: Path,
        session_id: str,
        policy: Policy,
        cwd: str | None,
        faults: ChainFaults | None = None,
        reasons: tuple[VerdictReason, ...] = (),
    ) -> None:
        self.storage_dir = storage
        self.faults = faults if faults is not None else ChainFaults()
        #: Reasons found outside the chain (see :func:`unended_report`).
        self.reasons = reasons
        self.session_id = session_id
        self.policy = policy
        self.root = Path(cwd) if cwd else Path.cwd()
        self.template: str | None = str(self.root)

    @property
    def records(self) -> list[CallRecord]:
        """Every record of the stored chain, in order."""
        return [CallRecord(raw) for raw in iter_records(self.storage_dir, self.session_id)]

    @property
    def escalations(self) -> list[CallRecord]:
        """Immune escalation records, in order."""
        return [record for record in self.records if record.kind == "escalation"]

    def verify(self) -> ChainReport:
        """The stored chain verified against its anchor."""
        return verify_chain(self.storage_dir, self.session_id)

    def judge(self) -> tuple[Verdict, tuple[VerdictReason, ...]]:
        """The session's verdict and its reasons."""
        chain = self.verify()
        problem = "" if chain.valid else f"{chain.reason} at record {chain.first_bad_index}"
        return judge(
            self.records,
            chain_valid=chain.valid,
            chain_problem=problem,
            extra=(*self.faults.reasons(), *self.reasons),
        )


def unended_report(storage: Path, session_id: str) -> SessionReport | None:
    """The report of a hook session built from its chain, when the report file written at its
    end cannot be printed as its story: the chain holds no ``SessionEnd`` after its start (its
    hooks stopped, or it is still running; the host's settings compared now: a change since the
    chain's last state FAILs it, no event came to record it, the calls its host's transcript
    shows ran with no hook step recording them are judged as their notes would be, and
    ``session-not-ended`` WARNs),
    records after its last ``SessionEnd`` (the report file leaves them out), a loss its
    continuity witness proves now (:func:`.hook_continuity.witnessed_loss`: FAIL), or a report
    file missing or milder than the chain's own verdict (changed after the end: FAIL).
    ``None``: the report file stands (or the chain has no start, or its policy is not kept)."""
    found = _outside_chain(storage, session_id)
    if found is None:
        return None
    start, policy, reasons = found
    session = StoredSession(storage, session_id, policy, _workspace(start), reasons=tuple(reasons))
    if not reasons:
        changed = _report_file_changed(storage, session_id, session.judge()[0])
        if changed is None:
            return None
        session.reasons = (changed,)
    return build_report(cast("AuditedSession", session))


def outside_reasons(storage: Path, session_id: str) -> tuple[VerdictReason, ...]:
    """The reasons a hook session is judged by now that its chain does not hold (those of
    :func:`unended_report`: no end, and what was found after the last event; a loss its witness
    proves), for readers that judge the chain alone (the viewer). A chain that cannot be read
    gives none (its reader says so)."""
    try:
        found = _outside_chain(storage, session_id)
    except (AuditError, OSError, ValueError):
        return ()
    return tuple(found[2]) if found is not None else ()


def _outside_chain(
    storage: Path, session_id: str
) -> tuple[CallRecord, Policy, list[VerdictReason]] | None:
    """The session's start record, its policy and the reasons found outside its chain
    (``None``: no start, or its policy is not kept)."""
    records = [CallRecord(raw) for raw in iter_records(storage, session_id)]
    start = next((r for r in records if r.kind == SESSION_KIND and r.tool == SESSION_START), None)
    policy = load_session_policy(storage, session_id) if start is not None else None
    if start is None or policy is None:
        return None
    reasons: list[VerdictReason] = []
    not_ended = ended_reason(records) or _after_end(records)
    if not_ended is not None:
        late = (*late_reasons(storage, session_id), *late_workspace(storage, session_id, policy))
        # calls that ran with no hook step recording them (killed hooks), as SessionEnd would
        unseen = late_unseen(storage, session_id, policy, records, _workspace(start))
        reasons.extend((*late, *unseen, not_ended))
    lost = witnessed_loss(storage, session_id)
    if lost is not None:
        text = f"the session's chain changed after its last hook event: {lost}"
        reasons.append(VerdictReason(Verdict.FAIL, LATE_LOSS_CODE, text))
    return start, policy, reasons


def _report_file_changed(storage: Path, session_id: str, judged: Verdict) -> VerdictReason | None:
    """FAIL when the ended session's report file is gone, or names no verdict or one milder
    than its chain's (``session-end`` writes it from the same chain, its extra reasons only
    ever adding to it): it was changed after the end."""
    text = load_report_text(storage, session_id)
    found = _REPORT_VERDICT.findall(text or "")
    written = Verdict.worst(Verdict.parse(v) for v in found) if found else None
    if written is not None and written >= judged:
        return None
    said = "is missing" if text is None else f"says {written or 'no verdict'}"
    reason = f"the session's report file {said}, its chain judges {judged}: changed after the end"
    return VerdictReason(Verdict.FAIL, REPORT_CHANGED_CODE, reason)


def _after_end(records: list[CallRecord]) -> VerdictReason | None:
    """``session-not-ended`` (WARN) for a chain that goes on after its last ``SessionEnd``
    with no ``SessionStart`` (a resume) since: the report written at the end is not the
    session's whole story."""
    ends = [i for i, r in enumerate(records) if r.kind == SESSION_KIND and r.tool == SESSION_END]
    if not ends or ends[-1] == len(records) - 1:
        return None
    later = len(records) - 1 - ends[-1]
    text = (
        f"the chain goes on after its SessionEnd record ({later} later records): the session "
        "went on after its end, or the end was not the host's"
    )
    return VerdictReason(Verdict.WARN, AFTER_END_CODE, text, records[ends[-1]].record_id)


def _workspace(start: CallRecord) -> str | None:
    """The project a ``SessionStart`` record names: its settings' folder in the state it holds
    (the record's target is cut at 80 characters), else its target."""
    for name in recorded_state(start.raw) or {}:
        if name.startswith(PROJECT_PREFIX) and name.endswith(PROJECT_SETTINGS[0]):
            return name[len(PROJECT_PREFIX) : -len(PROJECT_SETTINGS[0])].rstrip("/") or "/"
    return start.target


__all__ = [
    "AFTER_END_CODE",
    "LATE_LOSS_CODE",
    "REPORT_CHANGED_CODE",
    "SESSION_END",
    "SESSION_START",
    "STOP",
    "SUBAGENT_STOP",
    "SessionEnded",
    "SessionPayload",
    "StoredSession",
    "check_pending_seals",
    "clean_pending",
    "handle_session_end",
    "handle_session_start",
    "handle_stop",
    "handle_subagent_stop",
    "outside_reasons",
    "parse_session_payload",
    "unended_report",
]
