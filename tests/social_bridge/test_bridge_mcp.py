"""``send_message`` over MCP through the bridge: gated, recorded, refusals as JSON-RPC errors."""

from __future__ import annotations

import pytest
from bridge_support import SessionFactory, gather, message_records, social
from mcp.shared.exceptions import MCPError
from mcp_memory import memory_client

from pytest_harness_audit.doors.proxy import RecordingProxy
from pytest_harness_audit.doors.social import SocialSession, send_message_local_tool
from pytest_harness_audit.readers.verdict import Verdict
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import MessageFirewall, MessageRule, SocialToolError

Pair = tuple[Harness, SocialSession]
NO_PASSWORDS = MessageRule("no-passwords", "refuse", text_patterns=("(?i)password",))


def test_multicast_and_gather_results(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    assert session.endpoint.mcp_send_message({"input": {"to": "agent:bob", "text": "hi"}}) == {}
    result = session.endpoint.mcp_send_message(
        {"input": {"to": "group:bob,carol", "text": "slot?", "collective": gather()}}
    )
    assert set(result) == {"operationId"} and str(result["operationId"]).startswith("col_")
    assert [social(r)["operation"] for r in message_records(harness)] == ["multicast", "gather"]


def test_runtime_options_travel_in_meta(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    meta = {"org.social-harness/send": {"failureDelivery": "inbound"}}
    result = session.endpoint.mcp_send_message(
        {"input": {"to": "agent:bob", "collectiveResponse": {"action": "decline"}}}, meta
    )
    assert str(result["operationId"]).startswith("col_")  # request-none arrives inbound
    (record,) = message_records(harness)
    assert social(record)["reason"] == "request-none"
    assert social(record)["failureDelivery"] == "inbound"
    assert session.endpoint.inbox()[-1]["kind"] == "operationFailed"


def test_malformed_arguments_are_invalid_params_and_recorded(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    with pytest.raises(SocialToolError) as missing:
        session.endpoint.mcp_send_message({"message": "hi"})
    assert missing.value.code == -32602 and missing.value.data["reason"] == "content-invalid"
    assert missing.value.data["harnessReason"] == "input-invalid"
    with pytest.raises(SocialToolError) as options:
        session.endpoint.mcp_send_message(
            {"input": {"to": "agent:bob", "text": "hi"}},
            {"org.social-harness/send": {"failureDelivery": "never"}},
        )
    assert options.value.code == -32602
    records = message_records(harness)
    assert [(r.status, social(r)["reason"]) for r in records] == [
        ("error", "input-invalid"),
        ("error", "input-invalid"),
    ]
    assert records[0].params == {"input": None} and records[1].target == "agent:bob"
    assert session.endpoint.posts() == []


def test_a_firewall_refusal_carries_its_check(make_session: SessionFactory) -> None:
    harness, session = make_session(firewall=MessageFirewall([NO_PASSWORDS]))
    with pytest.raises(SocialToolError) as refused:
        session.endpoint.mcp_send_message({"input": {"to": "agent:bob", "text": "password: x"}})
    data = refused.value.data
    assert data["reason"] == "firewall-refused"
    (record,) = message_records(harness)
    assert record.status == "blocked" and record.raw["firewall"]["checkId"] == data["checkId"]
    assert harness.verdict is Verdict.FAIL


@pytest.mark.anyio
async def test_send_message_through_the_proxy_with_the_official_client(
    make_session: SessionFactory,
) -> None:
    harness, session = make_session(firewall=MessageFirewall([NO_PASSWORDS]))
    proxy = RecordingProxy(harness.gate, [], local_tools=[send_message_local_tool(session)])
    async with proxy, memory_client(proxy) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["send_message"].input_schema["required"] == ["input"]

        sent = await client.call_tool(
            "send_message", {"input": {"to": "group:bob,carol", "text": "standup at 10"}}
        )
        assert not sent.is_error and sent.structured_content == {}

        with pytest.raises(MCPError) as refused:
            await client.call_tool(
                "send_message", {"input": {"to": "agent:bob", "text": "the password is x"}}
            )
        assert refused.value.code == -32000
        assert refused.value.data["reason"] == "firewall-refused"
        assert refused.value.message.startswith("send refused:")

        with pytest.raises(MCPError) as unknown:
            await client.call_tool("send_message", {"input": {"to": "agent:zed", "text": "hi"}})
        assert unknown.value.data == {
            "reason": "unknown-agent",
            "detail": "agent:zed is not a known agent",
        }

    records = message_records(harness)
    assert [(r.status, r.target) for r in records] == [
        ("success", "group:alice,bob,carol"),
        ("blocked", "agent:bob"),
        ("error", "agent:zed"),
    ]
    assert len(harness.records) == 3  # self-recording: the proxy did not record twice
    assert [post.text for post in session.endpoint.posts()] == ["standup at 10"]
    assert harness.verify().valid and harness.verdict is Verdict.FAIL
