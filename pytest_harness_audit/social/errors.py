"""The closed failure sets of a social-harness send, as typed exceptions.

Every exception's message is the text the model reads as its tool error; the structured fields
(reason, detail, operation id, failure, check id) travel beside it, for instance as JSON-RPC error
data over MCP (see :mod:`pytest_harness_audit.social.mcp_tool`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias, get_args

from pytest_harness_audit.errors import HarnessAuditError

#: The name of the messaging network in model-facing texts, as in the reference wording.
NETWORK_NAME = "MoltZap"

SendFailureReason: TypeAlias = Literal[
    "invalid-address",
    "unknown-agent",
    "membership-invalid",
    "content-invalid",
    "not-registered",
    "version-mismatch",
    "certification-unavailable",
    "persistence-failed",
    "network-unavailable",
    "idempotency-conflict",
    "outcome-unknown",
    "delivery-pending",
]

#: Every reason one addressed send can fail, in the reference's fixed order.
SEND_FAILURE_REASONS: tuple[SendFailureReason, ...] = get_args(SendFailureReason)

#: What each failure means, in words a model reads as a tool error.
SEND_FAILURE_TEXT: Mapping[SendFailureReason, str] = {
    "invalid-address": "the address is not a valid agent: or group: address",
    "unknown-agent": "an agent the address names is not a known agent",
    "membership-invalid": "the address does not name a valid set of agents",
    "content-invalid": "the message content is invalid",
    "not-registered": f"this agent is not registered with {NETWORK_NAME}",
    "version-mismatch": f"{NETWORK_NAME} is unavailable (version mismatch)",
    "certification-unavailable": f"{NETWORK_NAME} is unavailable (certification unavailable)",
    "persistence-failed": f"{NETWORK_NAME} is unavailable (the message could not be stored)",
    "network-unavailable": f"{NETWORK_NAME} is unavailable (network unavailable)",
    "idempotency-conflict": "this send repeats an earlier send with different content",
    "outcome-unknown": "the connection was lost; the message may or may not have been sent",
    "delivery-pending": (
        f"{NETWORK_NAME} is unavailable; the message is queued and will be delivered once "
        f"{NETWORK_NAME} is reachable"
    ),
}

#: Reasons after which a post exists (or may exist): never report such a send as unsent.
POST_MAY_EXIST_REASONS: frozenset[SendFailureReason] = frozenset(
    {"outcome-unknown", "delivery-pending"}
)


class SocialSendFailure(HarnessAuditError):
    """Base of every typed refusal of a send; ``str(error)`` is the model-facing text."""

    @property
    def message(self) -> str:
        """The model-facing text of this failure."""
        return str(self.args[0]) if self.args else ""

    def error_data(self) -> dict[str, object]:
        """The JSON-RPC error data that carries this failure over MCP."""
        raise NotImplementedError


class SendError(SocialSendFailure):
    """An addressed send failed with one of :data:`SEND_FAILURE_REASONS`.

    ``detail`` names the specific cause when the failing step knows it (which agent is unknown,
    which member limit was crossed); the message is ``send failed: <detail or reason text>``.
    """

    def __init__(self, reason: SendFailureReason, detail: str | None = None) -> None:
        if reason not in SEND_FAILURE_TEXT:
            raise ValueError(f"unknown send failure reason {reason!r}")
        self.reason: SendFailureReason = reason
        self.detail = detail
        super().__init__(
            f"send failed: {detail if detail is not None else SEND_FAILURE_TEXT[reason]}"
        )

    @property
    def post_may_exist(self) -> bool:
        """Whether the message may have gone out (``outcome-unknown``) or still will."""
        return self.reason in POST_MAY_EXIST_REASONS

    def error_data(self) -> dict[str, object]:
        """``{reason, detail?}``."""
        data: dict[str, object] = {"reason": self.reason}
        if self.detail is not None:
            data["detail"] = self.detail
        return data


@dataclass(frozen=True)
class UnreachableMember:
    """One member a collective request post could not reach, and why."""

    member: str
    reason: SendFailureReason
    detail: str | None = None

    def to_json(self) -> dict[str, object]:
        """The wire form ``{member, reason, detail?}``."""
        data: dict[str, object] = {"member": self.member, "reason": self.reason}
        if self.detail is not None:
            data["detail"] = self.detail
        return data

    def text(self) -> str:
        """How a refusal names this member."""
        if self.reason == "unknown-agent":
            return f"{self.member} is not a known agent"
        cause = self.detail if self.detail is not None else SEND_FAILURE_TEXT[self.reason]
        return f"{self.member} could not be reached: {cause}"


AnswerFieldReason: TypeAlias = Literal["missing", "unexpected", "invalid"]

_ANSWER_FIELD_TEXT: Mapping[AnswerFieldReason, str] = {
    "missing": "is missing",
    "unexpected": "is not in the form",
    "invalid": "is invalid",
}


@dataclass(frozen=True)
class AnswerFieldFailure:
    """One answer field that fails its request's form."""

    field: str
    reason: AnswerFieldReason
    detail: str | None = None

    def to_json(self) -> dict[str, object]:
        """The wire form ``{field, reason, detail?}``."""
        data: dict[str, object] = {"field": self.field, "reason": self.reason}
        if self.detail is not None:
            data["detail"] = self.detail
        return data

    def text(self) -> str:
        """For example ``field "slot" is invalid (enum: must be one of the allowed values)``."""
        problem = _ANSWER_FIELD_TEXT[self.reason]
        base = f'field "{self.field}" {problem}'
        return base if self.detail is None else f"{base} ({self.detail})"


def answer_fields_text(fields: tuple[AnswerFieldFailure, ...]) -> str:
    """One clause per failing field, joined by ``; `` (a refusal and an ``invalid`` outcome)."""
    return "; ".join(field.text() for field in fields)


CollectiveFailureKind: TypeAlias = Literal[
    "members-unreachable",
    "schema-invalid",
    "answer-invalid",
    "request-none",
    "request-ambiguous",
    "request-answered",
    "request-expired",
]

#: The closed set of collective failure kinds.
COLLECTIVE_FAILURE_KINDS: tuple[CollectiveFailureKind, ...] = get_args(CollectiveFailureKind)

_FIXED_COLLECTIVE_TEXT: Mapping[CollectiveFailureKind, str] = {
    "request-none": "reply failed: no question is open in this conversation",
    "request-ambiguous": (
        "reply failed: more than one question is open in this conversation, and answering one "
        "of several is not supported"
    ),
    "request-answered": "reply failed: the question was already answered",
    "request-expired": "reply failed: the question's deadline has passed",
}


@dataclass(frozen=True)
class CollectiveFailure:
    """Why a gather, all_gather or response was refused, discriminated by ``kind``.

    Only the fields of the kind are set: ``members`` for ``members-unreachable``, ``detail`` for
    ``schema-invalid``, ``fields`` for ``answer-invalid``; the ``request-*`` kinds carry nothing.
    """

    kind: CollectiveFailureKind
    members: tuple[UnreachableMember, ...] = ()
    detail: str | None = None
    fields: tuple[AnswerFieldFailure, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in COLLECTIVE_FAILURE_KINDS:
            raise ValueError(f"unknown collective failure kind {self.kind!r}")
        if (self.kind == "members-unreachable") != bool(self.members):
            raise ValueError("members are required for, and only for, members-unreachable")
        if (self.kind == "schema-invalid") != (self.detail is not None):
            raise ValueError("detail is required for, and only for, schema-invalid")
        if (self.kind == "answer-invalid") != bool(self.fields):
            raise ValueError("fields are required for, and only for, answer-invalid")

    def to_json(self) -> dict[str, object]:
        """The wire form, for instance ``{kind: "schema-invalid", detail}``."""
        data: dict[str, object] = {"kind": self.kind}
        if self.members:
            data["members"] = [member.to_json() for member in self.members]
        if self.detail is not None:
            data["detail"] = self.detail
        if self.fields:
            data["fields"] = [field.to_json() for field in self.fields]
        return data

    def text(self) -> str:
        """The model-facing text of the refusal."""
        if self.kind == "members-unreachable":
            return "send failed: " + "; ".join(member.text() for member in self.members)
        if self.kind == "schema-invalid":
            return f"send failed: the form is invalid ({self.detail})"
        if self.kind == "answer-invalid":
            return f"reply failed: {answer_fields_text(self.fields)}"
        return _FIXED_COLLECTIVE_TEXT[self.kind]


class CollectiveError(SocialSendFailure):
    """A gather, all_gather or answer was refused; the operation id stays in the data."""

    def __init__(self, operation_id: str, failure: CollectiveFailure) -> None:
        self.operation_id = operation_id
        self.failure = failure
        super().__init__(failure.text())

    @property
    def kind(self) -> CollectiveFailureKind:
        """The failure's kind."""
        return self.failure.kind

    def error_data(self) -> dict[str, object]:
        """``{reason: "collective-failed", id, failure}``."""
        return {
            "reason": "collective-failed",
            "id": self.operation_id,
            "failure": self.failure.to_json(),
        }


class FirewallSendError(SocialSendFailure):
    """The message firewall refused a send in enforcement mode; no post was created.

    ``check_id`` names the retained check (with its private evidence, which is never part of this
    error); ``refusal`` and ``feedback`` are what the model may read.
    """

    def __init__(self, check_id: str, refusal: str, feedback: str) -> None:
        self.check_id = check_id
        self.refusal = refusal
        self.feedback = feedback
        text = f"send refused: {refusal}"
        super().__init__(f"{text}; {feedback}" if feedback else text)

    def error_data(self) -> dict[str, object]:
        """``{reason: "firewall-refused", checkId, refusal, feedback}``."""
        return {
            "reason": "firewall-refused",
            "checkId": self.check_id,
            "refusal": self.refusal,
            "feedback": self.feedback,
        }


class SendInputError(SocialSendFailure):
    """A send's input does not have the exact shape ``{to, text, collective?}`` or
    ``{to, collectiveResponse}``; ``issues`` name each failing field by path."""

    def __init__(self, issues: tuple[str, ...]) -> None:
        self.issues = issues
        super().__init__("invalid send input: " + "; ".join(issues))

    def error_data(self) -> dict[str, object]:
        """``{reason: "input-invalid", detail}`` (carried with JSON-RPC invalid-params)."""
        return {"reason": "input-invalid", "detail": "; ".join(self.issues)}


StatedOperation: TypeAlias = Literal["message", "gather", "all_gather", "answer"]


class MessageTextError(SocialSendFailure):
    """A message text states an operation it does not validly carry, or is ill-formed text.

    The message is ``<operation> not sent: <path>: <issue>`` with issues joined by ``; ``.
    """

    def __init__(self, operation: StatedOperation, detail: str) -> None:
        self.operation: StatedOperation = operation
        self.detail = detail
        super().__init__(f"{operation} not sent: {detail}")

    def error_data(self) -> dict[str, object]:
        """``{reason: "text-invalid", operation, detail}``."""
        return {"reason": "text-invalid", "operation": self.operation, "detail": self.detail}


class SocialToolError(HarnessAuditError):
    """The JSON-RPC error a ``send_message`` tool call answers with.

    ``code`` is :data:`REFUSED_CODE` for typed refusals and :data:`INVALID_PARAMS_CODE` for
    malformed arguments or runtime options; ``message`` is the model-facing text; ``data`` the
    error data (``{reason, detail?}``, ``{reason: "collective-failed", id, failure}`` or
    ``{reason: "firewall-refused", checkId, refusal, feedback}``).
    """

    def __init__(self, code: int, message: str, data: dict[str, object]) -> None:
        self.code = code
        self.message = message
        self.data = data
        super().__init__(message)

    def to_error_data(self) -> dict[str, object]:
        """``{code, message, data}``, ready for an MCP ``ErrorData``."""
        return {"code": self.code, "message": self.message, "data": self.data}


#: JSON-RPC code of a typed send refusal (server-defined range).
REFUSED_CODE = -32000
#: JSON-RPC "Invalid params": malformed tool arguments or runtime options.
INVALID_PARAMS_CODE = -32602


class SocialConfigError(HarnessAuditError):
    """The social endpoint or its firewall was configured with a bad value (names field/value)."""


def failure_from_json(data: Mapping[str, object]) -> CollectiveFailure:
    """Rebuild a :class:`CollectiveFailure` from its wire form (the inverse of ``to_json``)."""
    members = tuple(
        UnreachableMember(
            str(item["member"]),
            item["reason"],  # type: ignore[arg-type]
            None if item.get("detail") is None else str(item["detail"]),
        )
        for item in _mappings(data.get("members", []))
    )
    fields = tuple(
        AnswerFieldFailure(
            str(item["field"]),
            item["reason"],  # type: ignore[arg-type]
            None if item.get("detail") is None else str(item["detail"]),
        )
        for item in _mappings(data.get("fields", []))
    )
    detail = data.get("detail")
    return CollectiveFailure(
        data["kind"],  # type: ignore[arg-type]
        members=members,
        detail=None if detail is None else str(detail),
        fields=fields,
    )


def _mappings(value: object) -> list[Mapping[str, object]]:
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {value!r}")
    return [item for item in value if isinstance(item, Mapping)]


def error_to_json(error: SendError | CollectiveError) -> dict[str, object]:
    """A retained send failure (for idempotent replay)."""
    if isinstance(error, SendError):
        return {"type": "SendError", **error.error_data()}
    return {"type": "CollectiveError", "id": error.operation_id, "failure": error.failure.to_json()}


def error_from_json(data: Mapping[str, object]) -> SendError | CollectiveError:
    """Rebuild a retained send failure, ``detail`` included."""
    if data.get("type") == "SendError":
        detail = data.get("detail")
        return SendError(data["reason"], None if detail is None else str(detail))  # type: ignore[arg-type]
    failure = data.get("failure")
    if data.get("type") != "CollectiveError" or not isinstance(failure, Mapping):
        raise ValueError(f"not a retained send failure: {data!r}")
    return CollectiveError(str(data["id"]), failure_from_json(failure))
