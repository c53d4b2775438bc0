"""The ``send_message`` MCP tool contract, called as a pure function."""

from __future__ import annotations

import jsonschema  # type: ignore[import-untyped]
import pytest
from social_support import SLOT_SCHEMA, gather

from pytest_harness_audit.social import (
    SEND_OPTIONS_META_KEY,
    MessageFirewall,
    MessageRule,
    SocialEndpoint,
    SocialEvent,
    SocialToolError,
    send_message_tool,
)
from pytest_harness_audit.social.errors import INVALID_PARAMS_CODE, REFUSED_CODE


def call(endpoint: SocialEndpoint, arguments: object, meta: object = None) -> dict[str, object]:
    return endpoint.mcp_send_message(arguments, meta)  # type: ignore[arg-type]


def refusal(endpoint: SocialEndpoint, arguments: object, meta: object = None) -> SocialToolError:
    with pytest.raises(SocialToolError) as caught:
        call(endpoint, arguments, meta)
    return caught.value


def test_results(endpoint: SocialEndpoint) -> None:
    assert call(endpoint, {"input": {"to": "agent:bob", "text": "hi"}}) == {}
    result = call(endpoint, {"input": {"to": "agent:bob", "text": "Q", "collective": gather()}})
    assert set(result) == {"operationId"}
    operation_id = endpoint.peer("bob").gather("Q?", SLOT_SCHEMA)
    answered = call(
        endpoint,
        {"input": {"to": "agent:bob", "collectiveResponse": {"action": "decline"}}},
    )
    assert answered == {"operationId": operation_id}


def test_results_match_the_output_schema(endpoint: SocialEndpoint) -> None:
    tool = send_message_tool()
    rule = MessageRule("careful", "guide", reason="take care")
    guided = SocialEndpoint(
        endpoint.store.directory / "guided", "alice", ["bob"], firewall=MessageFirewall([rule])
    )
    try:
        for arguments in (
            {"input": {"to": "agent:bob", "text": "hi"}},
            {"input": {"to": "agent:bob", "text": "Q", "collective": gather()}},
        ):
            jsonschema.validate(arguments, tool["inputSchema"])
            jsonschema.validate(call(guided, arguments), tool["outputSchema"])
    finally:
        guided.close()
    assert tool["name"] == "send_message"


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [
        ({}, "input: is missing"),
        (
            {"input": {"to": "agent:bob", "text": "x"}, "idempotencyKey": "k"},
            "idempotencyKey: is unexpected",
        ),
        ({"input": {"to": "agent:bob", "text": "x", "extra": 1}}, "input.extra: is unexpected"),
        ({"input": "hello"}, 'input: Expected object, actual "hello"'),
        (
            {"input": {"to": "agent:bob", "collectiveResponse": {"action": "cancel"}}},
            "input.collectiveResponse.action",
        ),
        ([1], "Expected object"),
    ],
)
def test_malformed_arguments_are_invalid_params(
    endpoint: SocialEndpoint, arguments: object, detail: str
) -> None:
    error = refusal(endpoint, arguments)
    assert error.code == INVALID_PARAMS_CODE
    assert error.data["reason"] == "content-invalid"
    assert error.data["harnessReason"] == "input-invalid"
    assert detail in str(error.data["detail"])
    assert endpoint.posts() == []


@pytest.mark.parametrize(
    ("options", "detail"),
    [
        ("inbound", "Expected object"),
        ({"failureDelivery": "later"}, "failureDelivery"),
        ({"failureDelivery": "inbound", "retry": True}, "retry: is unexpected"),
        ({"idempotencyKey": ""}, "idempotencyKey"),
    ],
)
def test_malformed_runtime_options_are_rejected(
    endpoint: SocialEndpoint, options: object, detail: str
) -> None:
    error = refusal(
        endpoint, {"input": {"to": "agent:bob", "text": "x"}}, {SEND_OPTIONS_META_KEY: options}
    )
    assert error.code == INVALID_PARAMS_CODE
    assert detail in str(error.data["detail"])
    assert endpoint.posts() == []


def test_unrelated_meta_keeps_its_meaning(endpoint: SocialEndpoint) -> None:
    assert call(endpoint, {"input": {"to": "agent:bob", "text": "x"}}, {"progressToken": 7}) == {}


def test_send_error_data(make_endpoint: object) -> None:
    endpoint = make_endpoint(peers=("bob",))  # type: ignore[operator]
    error = refusal(endpoint, {"input": {"to": "agent:carol", "text": "x"}})
    assert (error.code, error.message) == (
        REFUSED_CODE,
        "send failed: agent:carol is not a known agent",
    )
    assert error.data == {"reason": "unknown-agent", "detail": "agent:carol is not a known agent"}
    assert error.to_error_data() == {
        "code": REFUSED_CODE,
        "message": error.message,
        "data": error.data,
    }


def test_content_over_the_limit(endpoint: SocialEndpoint) -> None:
    error = refusal(endpoint, {"input": {"to": "agent:bob", "text": "a" * 40_000}})
    assert error.data["reason"] == "content-invalid"


def test_collective_error_data(make_endpoint: object) -> None:
    endpoint = make_endpoint(peers=("bob",))  # type: ignore[operator]
    error = refusal(
        endpoint, {"input": {"to": "group:bob,carol", "text": "Q", "collective": gather()}}
    )
    assert error.data["reason"] == "collective-failed"
    assert str(error.data["id"]).startswith("col_")
    assert error.data["failure"] == {
        "kind": "members-unreachable",
        "members": [{"member": "agent:carol", "reason": "unknown-agent"}],
    }


def test_inbound_failure_delivery_completes_the_call(make_endpoint: object) -> None:
    endpoint = make_endpoint(peers=("bob",))  # type: ignore[operator]
    result = call(
        endpoint,
        {"input": {"to": "group:bob,carol", "text": "Q", "collective": gather()}},
        {SEND_OPTIONS_META_KEY: {"failureDelivery": "inbound"}},
    )
    assert set(result) == {"operationId"}
    assert endpoint.inbox()[-1]["kind"] == "operationFailed"


def test_firewall_refusal_data(make_endpoint: object, events: list[SocialEvent]) -> None:
    rule = MessageRule("no-groups", "refuse", reason="no group sends", feedback="ask one agent")
    endpoint = make_endpoint(firewall=MessageFirewall([rule]))  # type: ignore[operator]
    error = refusal(
        endpoint,
        {"input": {"to": "group:bob,carol", "text": "x"}},
        {SEND_OPTIONS_META_KEY: {"failureDelivery": "inbound"}},
    )
    assert error.data == {
        "reason": "firewall-refused",
        "checkId": events[-1].check_id,
        "refusal": "no group sends",
        "feedback": "ask one agent",
    }
    assert endpoint.posts() == []


def test_an_untyped_failure_answers_outcome_unknown(
    endpoint: SocialEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    def defect(*_: object, **__: object) -> None:
        raise ZeroDivisionError

    monkeypatch.setattr(endpoint, "send_input", defect)
    error = refusal(endpoint, {"input": {"to": "agent:bob", "text": "x"}})
    assert error.data == {"reason": "outcome-unknown"}
    assert error.message == (
        "send failed: the connection was lost; the message may or may not have been sent"
    )


def test_keyed_calls_replay(endpoint: SocialEndpoint) -> None:
    meta = {SEND_OPTIONS_META_KEY: {"idempotencyKey": "call-1"}}
    arguments = {"input": {"to": "agent:bob", "text": "Q", "collective": gather()}}
    assert call(endpoint, arguments, meta) == call(endpoint, arguments, meta)
    assert len(endpoint.posts()) == 1
