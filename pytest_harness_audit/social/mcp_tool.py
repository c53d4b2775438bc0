"""The ``send_message`` MCP tool contract, as pure functions over a :class:`SocialEndpoint`.

Arguments are exactly ``{input: SendInput}``. Runtime options travel in the request's
``_meta["org.social-harness/send"]`` (``failureDelivery: "result" | "inbound"``, optional
``idempotencyKey``), validated separately; unrelated ``_meta`` keys keep their SDK meaning. The
result is ``{}`` for a multicast, ``{operationId}`` for a gather, all_gather or response, plus
``guidance`` when the firewall gave some. A refusal is a JSON-RPC error (:class:`SocialToolError`)
with data ``{reason, detail?}``, ``{reason: "collective-failed", id, failure}`` or
``{reason: "firewall-refused", checkId, refusal, feedback}``; malformed arguments or options are
invalid-params errors; anything untyped answers ``outcome-unknown``.

A proxy serves it by listing :func:`send_message_tool` and answering a call with
``endpoint.mcp_send_message(arguments, meta)``, turning :class:`SocialToolError` into the SDK's
JSON-RPC error (``MCPError(code, message, data)``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Protocol

from pytest_harness_audit.social.errors import (
    INVALID_PARAMS_CODE,
    REFUSED_CODE,
    SEND_FAILURE_REASONS,
    SendError,
    SendInputError,
    SocialConfigError,
    SocialSendFailure,
    SocialToolError,
)
from pytest_harness_audit.social.events import FailureDelivery, SendResult
from pytest_harness_audit.social.inputs import (
    MAXIMUM_DEADLINE_SECONDS,
    actual_text,
    decode_send_input,
)
from pytest_harness_audit.social.json_check import schema_issues
from pytest_harness_audit.social.ledger import check_idempotency_key

SEND_MESSAGE_TOOL_NAME = "send_message"
#: Where the runtime send options travel in a request's ``_meta``.
SEND_OPTIONS_META_KEY = "org.social-harness/send"


class InputSender(Protocol):
    """What the tool sends through: one exact input (a :class:`~.endpoint.SocialEndpoint`)."""

    def send_input(
        self,
        input: Mapping[str, object],
        *,
        failure_delivery: FailureDelivery = "result",
        idempotency_key: str | None = None,
    ) -> SendResult:
        """Send ``input``; raise the typed refusals of the surface."""


#: Where a refusal's ``reason`` is not one of the spec's closed words, the closed word it is sent
#: as; the harness's own finer word travels additively as ``harnessReason``.
CLOSED_REASON_OF: Mapping[str, str] = {
    # a local action policy that refuses surfaces as certification-unavailable in the spec
    "policy-blocked": "certification-unavailable",
    # ill-formed input: a refusal no retry can fix, like invalid content
    "input-invalid": "content-invalid",
    "text-invalid": "content-invalid",
}
#: Every ``reason`` a refusal's data may carry: the ``SendError`` reasons, ``collective-failed``
#: and ``firewall-refused``.
CLOSED_REASONS: frozenset[str] = frozenset(
    {*SEND_FAILURE_REASONS, "collective-failed", "firewall-refused"}
)


def closed_error_data(data: Mapping[str, object]) -> dict[str, object]:
    """``data`` with its ``reason`` in :data:`CLOSED_REASONS`.

    A harness-only reason (``policy-blocked``, ``input-invalid``, ``text-invalid``) becomes
    ``{reason: <closed word>, detail, harnessReason: <harness word>}``; any other word (a send
    guard's own refusal) is a local refusal before any post: ``certification-unavailable``.
    A host that knows only the closed lists reads ``reason``; one that wants the finer word
    reads ``harnessReason``.
    """
    reason = data.get("reason")
    if isinstance(reason, str) and reason in CLOSED_REASONS:
        return dict(data)
    closed = CLOSED_REASON_OF.get(str(reason), "certification-unavailable")
    mapped: dict[str, object] = {"reason": closed}
    if "detail" in data:
        mapped["detail"] = data["detail"]
    mapped["harnessReason"] = reason
    return mapped


def _invalid_params(detail: str) -> SocialToolError:
    return SocialToolError(
        INVALID_PARAMS_CODE,
        f"send_message not sent: {detail}",
        closed_error_data({"reason": "input-invalid", "detail": detail}),
    )


def decode_send_options(meta: Mapping[str, object] | None) -> tuple[FailureDelivery, str | None]:
    """``(failureDelivery, idempotencyKey)`` from ``_meta``; an omitted entry is ordinary result
    delivery. Raises an invalid-params :class:`SocialToolError` for malformed options."""
    if meta is None:
        return "result", None
    if not isinstance(meta, Mapping):
        raise _invalid_params(f"_meta: Expected object, actual {actual_text(meta)}")
    if SEND_OPTIONS_META_KEY not in meta:
        return "result", None
    options = meta[SEND_OPTIONS_META_KEY]
    where = f"_meta.{SEND_OPTIONS_META_KEY}"
    if not isinstance(options, Mapping):
        raise _invalid_params(f"{where}: Expected object, actual {actual_text(options)}")
    issues = [
        f'{where}.{key}: is unexpected, expected: "failureDelivery" | "idempotencyKey"'
        for key in options
        if key not in ("failureDelivery", "idempotencyKey")
    ]
    delivery = options.get("failureDelivery", "result")
    if delivery not in ("result", "inbound"):
        issues.append(
            f'{where}.failureDelivery: Expected "result" | "inbound", '
            f"actual {actual_text(delivery)}"
        )
    key = options.get("idempotencyKey")
    if key is not None:
        try:
            check_idempotency_key(key)
        except SocialConfigError:
            issues.append(
                f"{where}.idempotencyKey: Expected 1 to 128 UTF-8 bytes without NUL, actual "
                f"{actual_text(key)}"
            )
    if issues:
        raise _invalid_params("; ".join(issues))
    return ("inbound" if delivery == "inbound" else "result"), (
        key if isinstance(key, str) else None
    )


def call_send_message(
    endpoint: InputSender,
    arguments: Mapping[str, object] | None,
    meta: Mapping[str, object] | None,
) -> dict[str, object]:
    """Answer one ``send_message`` call; raises :class:`SocialToolError` for every refusal."""
    if not isinstance(arguments, Mapping):
        raise _invalid_params(f"Expected object, actual {actual_text(arguments)}")
    extra = [key for key in arguments if key != "input"]
    if extra or "input" not in arguments:
        issues = [f'{key}: is unexpected, expected: "input"' for key in extra]
        if "input" not in arguments:
            issues.insert(0, "input: is missing")
        raise _invalid_params("; ".join(issues))
    failure_delivery, key = decode_send_options(meta)
    send_input = arguments["input"]
    try:
        result = endpoint.send_input(
            send_input,  # type: ignore[arg-type]  # any shape: the endpoint refuses and records it
            failure_delivery=failure_delivery,
            idempotency_key=key,
        ).to_mcp()
    except SendInputError:
        try:
            decode_send_input(send_input, "input")
        except SendInputError as pathed:
            error = pathed
        raise _invalid_params("; ".join(error.issues)) from error
    except SocialSendFailure as error:
        data = closed_error_data(error.error_data())
        raise SocialToolError(REFUSED_CODE, error.message, data) from error
    except Exception as error:
        unknown = SendError("outcome-unknown")
        raise SocialToolError(REFUSED_CODE, unknown.message, unknown.error_data()) from error
    if result_issues(result):
        unknown = SendError("outcome-unknown")
        raise SocialToolError(REFUSED_CODE, unknown.message, unknown.error_data())
    return result


def result_issues(result: object) -> list[str]:
    """How a completed result fails the tool's ``outputSchema``, exactly (empty: it conforms).

    A result with any issue answers ``outcome-unknown``: the send completed, but what it
    returned cannot be read as the contract says.
    """
    return schema_issues(result, OUTPUT_SCHEMA)


_ANSWER_VALUE = {
    "anyOf": [
        {"type": "string"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": {"type": "string"}},
    ]
}


def send_message_tool() -> dict[str, object]:
    """The tool definition: ``{name, description, inputSchema, outputSchema}`` (JSON Schema)."""
    text_send = {
        "type": "object",
        "properties": {
            "to": {"type": "string", "description": "agent:<name> or group:<name>,<name>,..."},
            "text": {"type": "string"},
            "collective": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"op": {"const": "multicast"}},
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {
                            "op": {"enum": ["gather", "all_gather"]},
                            "deadline": {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": MAXIMUM_DEADLINE_SECONDS,
                            },
                            "requestedSchema": {"type": "object"},
                        },
                        "required": ["op", "deadline", "requestedSchema"],
                        "additionalProperties": False,
                    },
                ]
            },
        },
        "required": ["to", "text"],
        "additionalProperties": False,
    }
    response_send = {
        "type": "object",
        "properties": {
            "to": {"type": "string"},
            "collectiveResponse": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "action": {"const": "accept"},
                            "content": {"type": "object", "additionalProperties": _ANSWER_VALUE},
                        },
                        "required": ["action", "content"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {"action": {"const": "decline"}},
                        "required": ["action"],
                        "additionalProperties": False,
                    },
                ]
            },
        },
        "required": ["to", "collectiveResponse"],
        "additionalProperties": False,
    }
    return {
        "name": SEND_MESSAGE_TOOL_NAME,
        "description": (
            "Send a message to agent:<name> or group:<name>,<name>,... — a multicast, a gather "
            "or all_gather question with a form, or an answer to the question open in a "
            "conversation."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"input": {"anyOf": [text_send, response_send]}},
            "required": ["input"],
            "additionalProperties": False,
        },
        "outputSchema": copy.deepcopy(OUTPUT_SCHEMA),
    }


#: The ``send_message`` result: ``{operationId?, guidance?}``, each in its exact form.
OUTPUT_SCHEMA: Mapping[str, object] = {
    "type": "object",
    "properties": {
        "operationId": {"type": "string", "pattern": "^col_[A-Za-z0-9_-]{43}$"},
        "guidance": {
            "type": "object",
            "properties": {
                "checkId": {"type": "string"},
                "decision": {"enum": ["admit", "guide", "refuse"]},
                "advice": {"type": "string"},
            },
            "required": ["checkId", "decision", "advice"],
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}
