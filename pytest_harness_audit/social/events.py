"""What a send returns (:class:`SendResult`) and what the endpoint reports (:class:`SocialEvent`).

The endpoint calls its ``on_event`` callback with one :class:`SocialEvent` for every send attempt,
refusal and collective result, before it returns to its caller; a harness turns each into an audit
record (tool ``send_message``, category ``message``, target = :attr:`SocialEvent.target`). A
:class:`SendAttempt` gathers what one send did, and :func:`success_event` /
:func:`failure_event` turn it into its event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pytest_harness_audit.social.errors import (
    CollectiveError,
    FirewallSendError,
    MessageTextError,
    SendError,
    SocialSendFailure,
)
from pytest_harness_audit.social.firewall import FirewallCheck, Guidance
from pytest_harness_audit.social.firewall_rules import Decision, FirewallMode
from pytest_harness_audit.social.inputs import SendInput, TextSend, stated_operation

EventKind: TypeAlias = Literal["send", "refused", "collective-result"]
EventOutcome: TypeAlias = Literal[
    "sent", "pending", "unknown", "refused", "replayed", "result", "failed"
]
FailureDelivery: TypeAlias = Literal["result", "inbound"]
#: Where a refused gather, all_gather or response may report its error.
FAILURE_DELIVERIES: tuple[FailureDelivery, ...] = ("result", "inbound")


@dataclass(frozen=True)
class SendResult:
    """A completed send: a gather's, all_gather's or response's operation id, firewall guidance,
    and the ids of the posts it created (the latter never cross MCP)."""

    operation_id: str | None = None
    guidance: Guidance | None = None
    post_ids: tuple[str, ...] = ()

    def to_mcp(self) -> dict[str, object]:
        """The ``send_message`` tool result: ``{}``, ``{operationId}``, plus ``guidance``."""
        data: dict[str, object] = {}
        if self.operation_id is not None:
            data["operationId"] = self.operation_id
        if self.guidance is not None:
            data["guidance"] = self.guidance.to_json()
        return data

    def to_json(self) -> dict[str, object]:
        """The retained form (for idempotent replay)."""
        return {**self.to_mcp(), "postIds": list(self.post_ids)}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SendResult:
        """Rebuild a retained result."""
        guidance = data.get("guidance")
        post_ids = data.get("postIds", [])
        return cls(
            operation_id=None if data.get("operationId") is None else str(data["operationId"]),
            guidance=(
                Guidance(
                    str(guidance["checkId"]),
                    guidance["decision"],
                    str(guidance["advice"]),
                )
                if isinstance(guidance, Mapping)
                else None
            ),
            post_ids=tuple(str(item) for item in post_ids) if isinstance(post_ids, list) else (),
        )


@dataclass(frozen=True)
class MemberOutcome:
    """One member's outcome in a collective result: ``answered{content}``, ``declined``,
    ``invalid{reason}`` or ``no-answer``."""

    member: str
    kind: Literal["answered", "declined", "invalid", "no-answer"]
    content: Mapping[str, object] | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, object]:
        """``{member, outcome: {kind, content? | reason?}}``."""
        outcome: dict[str, object] = {"kind": self.kind}
        if self.content is not None:
            outcome["content"] = dict(self.content)
        if self.reason is not None:
            outcome["reason"] = self.reason
        return {"member": self.member, "outcome": outcome}


@dataclass(frozen=True)
class CollectiveResult:
    """The one result of a gather or all_gather, named by the send's canonical address."""

    operation_id: str
    op: Literal["gather", "all_gather"]
    to: str
    question: str
    outcomes: tuple[MemberOutcome, ...]
    close_post_id: str | None = None

    def to_json(self) -> dict[str, object]:
        """The inbound item ``{kind: "collectiveResult", id, op, to, question, outcomes,
        closePostId?}``."""
        data: dict[str, object] = {
            "kind": "collectiveResult",
            "id": self.operation_id,
            "op": self.op,
            "to": self.to,
            "question": self.question,
            "outcomes": [outcome.to_json() for outcome in self.outcomes],
        }
        if self.close_post_id is not None:
            data["closePostId"] = self.close_post_id
        return data

    def outcome(self, member: str) -> MemberOutcome:
        """The outcome of ``member`` (``bob`` or ``agent:bob``)."""
        wanted = member if member.startswith("agent:") else f"agent:{member}"
        for outcome in self.outcomes:
            if outcome.member == wanted:
                return outcome
        raise KeyError(member)


@dataclass(frozen=True)
class SocialEvent:
    """One send attempt, refusal or collective result, as the harness records it.

    ``kind`` is ``send`` when a post exists or may exist (``outcome`` ``sent``, ``pending``,
    ``unknown`` or ``replayed``), ``refused`` when nothing was posted, and ``collective-result`` for
    a result (``result``) or an all_gather whose close failed (``failed``). ``reason`` is the
    failure's reason or kind (``firewall-refused``, ``input-invalid`` and ``text-invalid``
    included); ``message`` its model-facing text. Firewall fields are set when a check ran.
    """

    kind: EventKind
    at_ms: int
    to: str
    address: str | None
    operation: str
    outcome: EventOutcome
    text: str | None = None
    reason: str | None = None
    message: str | None = None
    operation_id: str | None = None
    post_ids: tuple[str, ...] = ()
    check_id: str | None = None
    decision: Decision | None = None
    mode: FirewallMode | None = None
    rule_ids: tuple[str, ...] = ()
    guidance: str | None = None
    #: The firewall held the send: its evidence went stale twice (see :mod:`.capture`).
    held: bool = False
    unreachable: tuple[str, ...] = ()
    outcomes: tuple[MemberOutcome, ...] = ()
    failure_delivery: FailureDelivery = "result"
    extra: Mapping[str, object] = field(default_factory=dict)

    @property
    def target(self) -> str:
        """The canonical address when it resolved, else the address as given."""
        return self.address if self.address is not None else self.to

    def to_json(self) -> dict[str, object]:
        """A JSON-ready form (None fields and empty tuples left out)."""
        data: dict[str, object] = {
            "kind": self.kind,
            "atMs": self.at_ms,
            "to": self.to,
            "target": self.target,
            "operation": self.operation,
            "outcome": self.outcome,
            "failureDelivery": self.failure_delivery,
        }
        optional: dict[str, object] = {
            "address": self.address,
            "text": self.text,
            "reason": self.reason,
            "message": self.message,
            "operationId": self.operation_id,
            "checkId": self.check_id,
            "decision": self.decision,
            "mode": self.mode,
            "guidance": self.guidance,
        }
        data.update({key: value for key, value in optional.items() if value is not None})
        if self.post_ids:
            data["postIds"] = list(self.post_ids)
        if self.rule_ids:
            data["ruleIds"] = list(self.rule_ids)
        if self.held:
            data["held"] = True
        if self.unreachable:
            data["unreachable"] = list(self.unreachable)
        if self.outcomes:
            data["outcomes"] = [outcome.to_json() for outcome in self.outcomes]
        if self.extra:
            data.update(self.extra)
        return data


# -- one send attempt and its event ---------------------------------------------------------------


@dataclass
class SendAttempt:
    """What one send invocation has done so far, for its event."""

    to: str
    operation: str
    text: str | None
    failure_delivery: FailureDelivery
    address: str | None = None
    operation_id: str | None = None
    post_ids: tuple[str, ...] = ()
    pending: bool = False
    check: FirewallCheck | None = None
    unreachable: tuple[str, ...] = ()
    extra: dict[str, object] = field(default_factory=dict)

    def firewall_fields(self) -> dict[str, Any]:
        """The event's firewall fields when a check ran (else none)."""
        check = self.check
        if check is None:
            return {}
        return {
            "check_id": check.check_id,
            "decision": check.decision,
            "mode": check.mode,
            "rule_ids": check.rule_ids,
            "guidance": check.advice,
            "held": check.held,
        }


def attempt_of(decoded: SendInput, failure_delivery: FailureDelivery) -> SendAttempt:
    """The attempt of a decoded send: its text, or for a response its answer's JSON."""
    text = (
        decoded.text
        if isinstance(decoded, TextSend)
        else json.dumps(decoded.response.to_json(), sort_keys=True, separators=(",", ":"))
    )
    return SendAttempt(decoded.to, decoded.operation, text, failure_delivery)


def undecoded_attempt(input: object, failure_delivery: FailureDelivery) -> SendAttempt:
    """The attempt of an input that does not decode: its ``to`` as given (or its repr)."""
    raw_to = input.get("to") if isinstance(input, Mapping) else None
    return SendAttempt(
        to=raw_to if isinstance(raw_to, str) else repr(raw_to),
        operation=stated_operation(input),
        text=None,
        failure_delivery=failure_delivery,
    )


def success_event(
    attempt: SendAttempt, result: SendResult, at_ms: int, *, replayed: bool = False
) -> SocialEvent:
    """The event of a send that completed (``sent``, or ``replayed`` from the ledger)."""
    return SocialEvent(
        kind="send",
        at_ms=at_ms,
        to=attempt.to,
        address=attempt.address,
        operation=attempt.operation,
        outcome="replayed" if replayed else "sent",
        text=attempt.text,
        operation_id=result.operation_id,
        post_ids=result.post_ids,
        unreachable=attempt.unreachable,
        failure_delivery=attempt.failure_delivery,
        extra=dict(attempt.extra),
        **attempt.firewall_fields(),
    )


def failure_event(attempt: SendAttempt, error: SocialSendFailure, at_ms: int) -> SocialEvent:
    """The event of a send that failed: ``refused`` when nothing was posted, else a ``send``
    whose outcome is ``pending`` or ``unknown``."""
    unreachable = attempt.unreachable
    if isinstance(error, CollectiveError) and error.failure.members:
        unreachable = tuple(f"{item.member}: {item.reason}" for item in error.failure.members)
    may_exist = isinstance(error, SendError) and error.reason == "outcome-unknown"
    if attempt.post_ids or may_exist:
        kind: EventKind = "send"
        outcome: EventOutcome = "pending" if attempt.pending and not may_exist else "unknown"
    else:
        kind, outcome = "refused", "refused"
    fields = attempt.firewall_fields()
    if isinstance(error, FirewallSendError):
        fields["check_id"] = error.check_id
    return SocialEvent(
        kind=kind,
        at_ms=at_ms,
        to=attempt.to,
        address=attempt.address,
        operation=attempt.operation,
        outcome=outcome,
        text=attempt.text,
        reason=failure_reason(error),
        message=error.message,
        operation_id=attempt.operation_id,
        post_ids=attempt.post_ids,
        unreachable=unreachable,
        failure_delivery=attempt.failure_delivery,
        extra=dict(attempt.extra),
        **fields,
    )


def failure_reason(error: SocialSendFailure) -> str:
    """The event reason of ``error``: its send reason or collective kind, ``firewall-refused``,
    ``text-invalid`` or ``input-invalid``."""
    if isinstance(error, SendError):
        return error.reason
    if isinstance(error, CollectiveError):
        return error.kind
    if isinstance(error, FirewallSendError):
        return "firewall-refused"
    if isinstance(error, MessageTextError):
        return "text-invalid"
    return "input-invalid"
