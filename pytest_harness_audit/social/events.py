"""What a send returns (:class:`SendResult`) and what the endpoint reports (:class:`SocialEvent`).

The endpoint calls its ``on_event`` callback with one :class:`SocialEvent` for every send attempt,
refusal and collective result, before it returns to its caller; a harness turns each into an audit
record (tool ``send_message``, category ``message``, target = :attr:`SocialEvent.target`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from pytest_harness_audit.social.firewall import Decision, FirewallMode, Guidance

EventKind: TypeAlias = Literal["send", "refused", "collective-result"]
EventOutcome: TypeAlias = Literal[
    "sent", "pending", "unknown", "refused", "replayed", "result", "failed"
]
FailureDelivery: TypeAlias = Literal["result", "inbound"]


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
        if self.unreachable:
            data["unreachable"] = list(self.unreachable)
        if self.outcomes:
            data["outcomes"] = [outcome.to_json() for outcome in self.outcomes]
        if self.extra:
            data.update(self.extra)
        return data
