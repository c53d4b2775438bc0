"""The closed failure sets, their model-facing texts and their wire data."""

from __future__ import annotations

import pytest

from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.social import (
    COLLECTIVE_FAILURE_KINDS,
    SEND_FAILURE_REASONS,
    AnswerFieldFailure,
    CollectiveError,
    CollectiveFailure,
    FirewallSendError,
    SendError,
    UnreachableMember,
)
from pytest_harness_audit.social.errors import error_from_json, error_to_json

EXPECTED_TEXT = {
    "invalid-address": "send failed: the address is not a valid agent: or group: address",
    "unknown-agent": "send failed: an agent the address names is not a known agent",
    "membership-invalid": "send failed: the address does not name a valid set of agents",
    "content-invalid": "send failed: the message content is invalid",
    "not-registered": "send failed: this agent is not registered with MoltZap",
    "version-mismatch": "send failed: MoltZap is unavailable (version mismatch)",
    "certification-unavailable": "send failed: MoltZap is unavailable (certification unavailable)",
    "persistence-failed": "send failed: MoltZap is unavailable (the message could not be stored)",
    "network-unavailable": "send failed: MoltZap is unavailable (network unavailable)",
    "idempotency-conflict": "send failed: this send repeats an earlier send with different content",
    "outcome-unknown": (
        "send failed: the connection was lost; the message may or may not have been sent"
    ),
    "delivery-pending": (
        "send failed: MoltZap is unavailable; the message is queued and will be delivered once "
        "MoltZap is reachable"
    ),
}


def test_the_reason_set_is_closed_and_ordered() -> None:
    assert list(SEND_FAILURE_REASONS) == list(EXPECTED_TEXT)
    with pytest.raises(ValueError, match="unknown send failure reason"):
        SendError("nope")  # type: ignore[arg-type]


@pytest.mark.parametrize("reason", SEND_FAILURE_REASONS)
def test_send_error_text_and_data(reason: str) -> None:
    error = SendError(reason)  # type: ignore[arg-type]
    assert str(error) == EXPECTED_TEXT[reason]
    assert error.error_data() == {"reason": reason}
    assert isinstance(error, HarnessAuditError)
    assert error.post_may_exist is (reason in ("outcome-unknown", "delivery-pending"))


def test_detail_replaces_the_generic_text_and_travels_in_data() -> None:
    error = SendError("unknown-agent", "agent:carol is not a known agent")
    assert str(error) == "send failed: agent:carol is not a known agent"
    assert error.error_data() == {
        "reason": "unknown-agent",
        "detail": "agent:carol is not a known agent",
    }


QUEUED = (
    "MoltZap is unavailable; the message is queued and will be delivered once MoltZap is reachable"
)


@pytest.mark.parametrize(
    ("failure", "text"),
    [
        (
            CollectiveFailure(
                "members-unreachable",
                members=(
                    UnreachableMember("agent:carol", "unknown-agent"),
                    UnreachableMember("agent:dave", "network-unavailable"),
                ),
            ),
            "send failed: agent:carol is not a known agent; agent:dave could not be reached: "
            "MoltZap is unavailable (network unavailable)",
        ),
        (
            CollectiveFailure(
                "members-unreachable",
                members=(
                    UnreachableMember("agent:bob", "delivery-pending"),
                    UnreachableMember("agent:carol", "delivery-pending"),
                ),
            ),
            f"send failed: agent:bob could not be reached: {QUEUED}; "
            f"agent:carol could not be reached: {QUEUED}",
        ),
        (
            CollectiveFailure("schema-invalid", detail='required: names "slot", which x'),
            'send failed: the form is invalid (required: names "slot", which x)',
        ),
        (
            CollectiveFailure(
                "answer-invalid",
                fields=(
                    AnswerFieldFailure(
                        "slot", "invalid", "enum: must be one of the allowed values"
                    ),
                    AnswerFieldFailure("hours", "missing"),
                    AnswerFieldFailure("mood", "unexpected"),
                ),
            ),
            'reply failed: field "slot" is invalid (enum: must be one of the allowed values); '
            'field "hours" is missing; field "mood" is not in the form',
        ),
        (
            CollectiveFailure("request-none"),
            "reply failed: no question is open in this conversation",
        ),
        (
            CollectiveFailure("request-ambiguous"),
            "reply failed: more than one question is open in this conversation, and answering "
            "one of several is not supported",
        ),
        (
            CollectiveFailure("request-answered"),
            "reply failed: the question was already answered",
        ),
        (
            CollectiveFailure("request-expired"),
            "reply failed: the question's deadline has passed",
        ),
    ],
)
def test_collective_error_texts(failure: CollectiveFailure, text: str) -> None:
    error = CollectiveError("col_" + "A" * 43, failure)
    assert str(error) == text
    assert error.error_data() == {
        "reason": "collective-failed",
        "id": "col_" + "A" * 43,
        "failure": failure.to_json(),
    }
    assert "col_" not in str(error)


def test_every_collective_kind_has_a_text() -> None:
    assert len(COLLECTIVE_FAILURE_KINDS) == 7
    for kind in COLLECTIVE_FAILURE_KINDS:
        if kind in ("members-unreachable", "schema-invalid", "answer-invalid"):
            continue
        assert str(CollectiveError("col_x", CollectiveFailure(kind))).startswith("reply failed: ")


@pytest.mark.parametrize(
    "arguments",
    [
        {"kind": "members-unreachable"},
        {"kind": "schema-invalid"},
        {"kind": "answer-invalid"},
        {"kind": "request-none", "detail": "x"},
        {"kind": "bogus"},
    ],
)
def test_failures_carry_exactly_their_kind_fields(arguments: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        CollectiveFailure(**arguments)  # type: ignore[arg-type]


def test_firewall_error_text_and_data() -> None:
    error = FirewallSendError("chk_1", "secrets never go to groups", "send it to one agent")
    assert str(error) == "send refused: secrets never go to groups; send it to one agent"
    assert error.error_data() == {
        "reason": "firewall-refused",
        "checkId": "chk_1",
        "refusal": "secrets never go to groups",
        "feedback": "send it to one agent",
    }


@pytest.mark.parametrize(
    "error",
    [
        SendError("persistence-failed"),
        SendError("unknown-agent", "agent:x is not a known agent"),
        CollectiveError(
            "col_y",
            CollectiveFailure(
                "answer-invalid", fields=(AnswerFieldFailure("slot", "invalid", "enum: x"),)
            ),
        ),
        CollectiveError(
            "col_z",
            CollectiveFailure(
                "members-unreachable", members=(UnreachableMember("agent:b", "unknown-agent"),)
            ),
        ),
    ],
)
def test_retained_failures_round_trip(error: SendError | CollectiveError) -> None:
    rebuilt = error_from_json(error_to_json(error))
    assert type(rebuilt) is type(error)
    assert str(rebuilt) == str(error)
    assert rebuilt.error_data() == error.error_data()
