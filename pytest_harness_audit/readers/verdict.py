"""The verdict lattice ``PASS < WARN < FAIL`` and the rules that judge a session (DESIGN §4)."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.gate.session_policy import SEALED_FILE_CHANGED


@enum.unique
class Verdict(str, enum.Enum):
    """A session's verdict; compares by severity and equals its name as a string."""

    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"

    @property
    def rank(self) -> int:
        """0 for PASS, 1 for WARN, 2 for FAIL."""
        return _RANK[self]

    def __lt__(self, other: Any) -> bool:
        return self.rank < Verdict.parse(other).rank

    def __le__(self, other: Any) -> bool:
        return self.rank <= Verdict.parse(other).rank

    def __gt__(self, other: Any) -> bool:
        return self.rank > Verdict.parse(other).rank

    def __ge__(self, other: Any) -> bool:
        return self.rank >= Verdict.parse(other).rank

    __hash__ = str.__hash__

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: Any) -> Verdict:
        """``Verdict`` from a verdict or its name (case-insensitive); ValueError otherwise."""
        if isinstance(value, Verdict):
            return value
        if isinstance(value, str) and value.upper() in cls.__members__:
            return cls[value.upper()]
        raise ValueError(f"not a verdict: {value!r} (expected PASS, WARN or FAIL)")

    @classmethod
    def worst(cls, verdicts: Iterable[Verdict]) -> Verdict:
        """The most severe of ``verdicts`` (PASS when empty)."""
        return max(verdicts, key=lambda v: v.rank, default=cls.PASS)


_RANK = {Verdict.PASS: 0, Verdict.WARN: 1, Verdict.FAIL: 2}


@dataclass(frozen=True)
class VerdictReason:
    """One part of a verdict: its level, a short code, the text and the record behind it."""

    verdict: Verdict
    code: str
    text: str
    record_id: str | None = None

    def __str__(self) -> str:
        where = f" [{self.record_id}]" if self.record_id else ""
        return f"{self.verdict.value}: {self.text}{where}"


#: The tool of the hook door's note of a change of the host's settings no call's window saw.
HOST_SETTINGS_CHANGED = "HostSettingsChanged"
#: Its verdict reason's code (also that of such a change found after the last hook event).
HOST_SETTINGS_CODE = "host-settings-changed"
#: The tool of the hook door's note of a ``ConfigChange`` event (in error: a change that counts).
CONFIG_CHANGE = "ConfigChange"
#: The tool of the hook door's note of a policy that changed during a session.
POLICY_CHANGED = "PolicyChanged"
#: Its verdict reason's code.
POLICY_CHANGED_CODE = "policy-changed"
#: The code of a hook session whose chain holds no ``SessionEnd`` after its start.
NOT_ENDED_CODE = "session-not-ended"

#: The hook door's post events: a ``note`` of one of them in error is a fault note (a call ran and
#: its response could not be recorded as the call).
_HOST_POST_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure", "PermissionDenied"})


def judge_record(record: CallRecord) -> VerdictReason | None:
    """The built-in verdict rules for one chain record (``None`` when it is a PASS)."""
    if record.kind == "escalation":
        level = record.raw.get("immune", {}).get("level")
        if level == "quarantine":
            return VerdictReason(
                Verdict.FAIL,
                "quarantine",
                f"immune quarantine: {record.describe()}",
                record.record_id,
            )
        if level == "notice":
            return VerdictReason(
                Verdict.WARN, "notice", f"immune notice: {record.describe()}", record.record_id
            )
        return None
    if record.kind == "agent":
        # what the agent process did outside any gated call (its output, the workspace's
        # effects) was judged on its record: that judgement counts like a call's
        judged = _judged_part(record)
        if record.raw.get("timedOut"):
            timeout = VerdictReason(
                Verdict.WARN,
                "agent-timeout",
                f"agent timed out: {record.error_message}",
                record.record_id,
            )
            return judged if judged is not None and judged.verdict > timeout.verdict else timeout
        return judged
    if record.kind == "note" and (
        record.tool == HOST_SETTINGS_CHANGED
        or (record.tool == CONFIG_CHANGE and record.status == "error")
    ):
        # the switches of the audit's own hooks changed outside any call: whatever came after
        # may have gone unseen, whatever the policy
        text = record.error_message or "the host's settings changed between hook events"
        return VerdictReason(Verdict.FAIL, HOST_SETTINGS_CODE, text, record.record_id)
    if record.kind == "note" and record.tool in (POLICY_CHANGED, SEALED_FILE_CHANGED):
        # the session was judged under one policy up to here and another could follow
        text = record.error_message or "the policy changed during the session"
        return VerdictReason(Verdict.FAIL, POLICY_CHANGED_CODE, text, record.record_id)
    if record.kind == "note" and record.status == "error" and record.tool in _HOST_POST_EVENTS:
        # the host ran a call whose outcome could not be recorded (its response not inspected);
        # the chain itself refusing the record (its lock held, changed behind its writer) is
        # what a process the agent left running does: tamper
        secret = "secret_exposure" in record.alerts or "tamper_attempt" in record.alerts
        return VerdictReason(
            Verdict.FAIL if secret else Verdict.WARN,
            "unrecorded-outcome",
            f"a call's outcome could not be recorded: {record.error_message}",
            record.record_id,
        )
    decided = _decision_part(record)
    judged = _judged_part(record)
    if judged is None or (decided is not None and decided.verdict >= judged.verdict):
        return decided
    return judged


def _decision_part(record: CallRecord) -> VerdictReason | None:
    """The part a call's gate decision gave it (blocked, firewall, dry-run, warn)."""
    if record.status == "blocked":
        approved = _approval_part(record)
        if approved is not None:
            return approved
        code = "quarantined" if record.quarantined else "blocked"
        if record.raw.get("firewall", {}).get("decision") == "refuse":
            code = "firewall-refused"
        return VerdictReason(Verdict.FAIL, code, record.describe(), record.record_id)
    if "ran_unguarded" in record.alerts:  # refused by the policy, run by the host all the same
        return VerdictReason(Verdict.FAIL, "ran-unguarded", record.describe(), record.record_id)
    firewall = record.raw.get("firewall", {})
    if firewall.get("decision") == "guide" or (
        firewall.get("decision") == "refuse" and firewall.get("mode") == "guidance"
    ):
        return VerdictReason(Verdict.WARN, "firewall-guidance", record.describe(), record.record_id)
    if record.decision == "deny" and not record.enforced:
        return VerdictReason(Verdict.WARN, "dry-run-deny", record.describe(), record.record_id)
    if record.decision == "warn":
        return VerdictReason(Verdict.WARN, "warn", record.describe(), record.record_id)
    return None


def _approval_part(record: CallRecord) -> VerdictReason | None:
    """A call an approver refused: ``reject`` and ``escalate`` WARN; ``terminate``, the calls
    refused after it, and an approver's bad answer FAIL (``None``: no approver refused it)."""
    approval = record.raw.get("approval")
    if not isinstance(approval, dict):
        return None
    outcome = approval.get("outcome")
    text = f"{record.describe()}: approval {outcome} by {approval.get('approver', 'none')}"
    if approval.get("error"):
        return VerdictReason(Verdict.FAIL, "approval-error", text, record.record_id)
    if outcome in ("terminate", "terminated"):
        return VerdictReason(Verdict.FAIL, "approval-terminate", text, record.record_id)
    if outcome in ("reject", "escalate"):
        return VerdictReason(Verdict.WARN, "approval-reject", text, record.record_id)
    return None


def _judged_part(record: CallRecord) -> VerdictReason | None:
    """The part inspection gave a call: what it did (effects) or exposed (output)."""
    judged = record.raw.get("judged")
    if not isinstance(judged, dict):
        return None
    try:
        verdict = Verdict.parse(judged.get("verdict"))
    except ValueError:
        return None
    kind = str(judged.get("caughtBy") or "effect")
    text = f"{record.describe()}: {judged.get('reason', '')}".rstrip(": ")
    return VerdictReason(verdict, f"{kind}-{verdict.value.lower()}", text, record.record_id)


def ended_reason(records: Iterable[CallRecord]) -> VerdictReason | None:
    """``session-not-ended`` (WARN) for a hook session whose last session event is its start:
    no ``SessionEnd`` came (its hooks stopped, or it is still running). ``None`` for a session
    that ended, or was never opened by a ``SessionStart``."""
    last = None
    for record in records:
        if record.kind == "session" and record.tool in ("SessionStart", "SessionEnd"):
            last = record.tool
    if last != "SessionStart":
        return None
    text = (
        "the session has no SessionEnd record: its hooks stopped before it ended (nothing after "
        "the last hook event was seen), or it is still running"
    )
    return VerdictReason(Verdict.WARN, NOT_ENDED_CODE, text)


def judge(
    records: Iterable[CallRecord],
    *,
    chain_valid: bool,
    chain_problem: str = "",
    extra: Iterable[VerdictReason] = (),
) -> tuple[Verdict, tuple[VerdictReason, ...]]:
    """The verdict of a session and its reasons, worst first, in chain order within a level."""
    reasons: list[VerdictReason] = []
    if not chain_valid:
        reasons.append(
            VerdictReason(
                Verdict.FAIL, "chain-invalid", f"audit chain invalid: {chain_problem}".rstrip(": ")
            )
        )
    for record in records:
        reason = judge_record(record)
        if reason is not None:
            reasons.append(reason)
    reasons.extend(extra)
    reasons.sort(key=lambda r: -r.verdict.rank)
    return Verdict.worst(r.verdict for r in reasons), tuple(reasons)
