"""Social Harness spec sentences of the MCP adapter projection, one test each.

Spec (host-native addressed output, "MCP adapter projection"):

* "A send that ends without a typed failure, or whose completed result fails the tool's output
  schema, answers `outcome-unknown`. The daemon checks its own result exactly."
* "A refused send is a JSON-RPC error whose data is `{reason, detail?}` with the `SendError`
  reason and detail, or `{reason: "collective-failed", id, failure}` … or
  `{reason: "firewall-refused", checkId, refusal, feedback}`."
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest
from mcp.shared.exceptions import MCPError
from mcp_memory import memory_client

from pytest_harness_audit.doors.proxy import RecordingProxy
from pytest_harness_audit.doors.social import SocialSession, send_message_local_tool
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import SEND_FAILURE_REASONS, SocialToolError, send_message_tool
from pytest_harness_audit.social.mcp_tool import (
    CLOSED_REASONS,
    call_send_message,
    closed_error_data,
    result_issues,
)

OPERATION_ID = "col_" + "A" * 43
GUIDANCE = {"checkId": "chk_1", "decision": "guide", "advice": "take care"}

#: The nine malformed completed results: three of ``operationId``'s type and prefix, three of
#: its 43 base64url characters, three of ``guidance``'s exact form.
MALFORMED_RESULTS: dict[str, dict[str, object]] = {
    "an undeclared field": {"operationId": OPERATION_ID, "postIds": ["p1"]},
    "operationId not a string": {"operationId": 7},
    "operationId without col_": {"operationId": "op_" + "A" * 43},
    "operationId too short (col_abc)": {"operationId": "col_abc"},
    "operationId outside base64url (col_!!…)": {"operationId": "col_" + "!" * 43},
    "operationId of 44 characters": {"operationId": "col_" + "A" * 44},
    "guidance not an object": {"guidance": "take care"},
    "guidance missing advice": {"guidance": {"checkId": "chk_1", "decision": "guide"}},
    "guidance with an unknown decision": {"guidance": {**GUIDANCE, "decision": "maybe"}},
}


class _Completed:
    """A send that completed and returned ``result`` as its MCP result."""

    def __init__(self, result: object) -> None:
        self.result = result

    def to_mcp(self) -> object:
        return copy.deepcopy(self.result)


class _Sender:
    def __init__(self, result: Mapping[str, object]) -> None:
        self.result = result
        self.calls = 0

    def send_input(self, input: object, **options: object) -> _Completed:
        self.calls += 1
        return _Completed(self.result)


def _answer(result: Mapping[str, object]) -> dict[str, object]:
    sender = _Sender(result)
    answer = call_send_message(sender, {"input": {"to": "agent:bob", "text": "hi"}}, None)  # type: ignore[arg-type]
    assert sender.calls == 1
    return answer


@pytest.mark.parametrize("shape", list(MALFORMED_RESULTS))
def test_a_completed_result_failing_the_output_schema_answers_outcome_unknown(shape: str) -> None:
    result = MALFORMED_RESULTS[shape]
    with pytest.raises(jsonschema.ValidationError):  # the published schema refuses it too
        jsonschema.validate(result, send_message_tool()["outputSchema"])
    assert result_issues(result)
    with pytest.raises(SocialToolError) as answered:
        _answer(result)
    assert answered.value.data == {"reason": "outcome-unknown"}
    assert answered.value.message.startswith("send failed:")


@pytest.mark.parametrize(
    "result",
    [
        {},
        {"operationId": OPERATION_ID},
        {"operationId": "col_" + "-_" * 21 + "z"},
        {"guidance": GUIDANCE},
        {"operationId": OPERATION_ID, "guidance": {**GUIDANCE, "decision": "refuse"}},
    ],
)
def test_a_conforming_result_is_returned_as_it_is(result: dict[str, object]) -> None:
    jsonschema.validate(result, send_message_tool()["outputSchema"])
    assert result_issues(result) == []
    assert _answer(result) == result


def test_the_operation_id_check_is_exact_at_its_end() -> None:
    # a trailing newline passes a Python ``$``, not the schema's
    assert result_issues({"operationId": OPERATION_ID + "\n"})


@pytest.mark.parametrize(
    "result",
    [
        {"operationId": OPERATION_ID + "\n"},  # a trailing newline
        {"operationId": "col_" + "\uff21" * 43},  # fullwidth letters look like base64url
        {"operationId": "col_" + "\u00e9" * 43},  # letters outside ASCII
        {"operationId": " " + OPERATION_ID},  # a leading space
        {"operationId": None},  # null is not an omitted id
        {"operationId": True},
        {"guidance": {**GUIDANCE, "evidence": ["private"]}},  # private evidence smuggled out
        {"guidance": {**GUIDANCE, "advice": 7}},
        {"guidance": None},
        {"guidance": [GUIDANCE]},
        [],
        "{}",
        None,
    ],
)
def test_near_miss_results_answer_outcome_unknown(result: object) -> None:
    assert result_issues(result)
    with pytest.raises(SocialToolError) as answered:
        _answer(result)  # type: ignore[arg-type]
    assert answered.value.data == {"reason": "outcome-unknown"}


# -- tools/list serves the output schema ---------------------------------------------------------


@pytest.fixture
def harness_and_session(tmp_path: Path) -> Iterator[tuple[Harness, SocialSession]]:
    harness = Harness.create(tmp_path / "h", policy=Policy.from_dict({"defaultPolicy": "allow"}))
    session = SocialSession(harness.gate, tmp_path / "social", "alice", ("bob", "carol"))
    yield harness, session
    session.close()
    harness.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_tools_list_serves_send_message_with_its_output_schema(
    harness_and_session: tuple[Harness, SocialSession],
) -> None:
    harness, session = harness_and_session
    proxy = RecordingProxy(harness.gate, [], local_tools=[send_message_local_tool(session)])
    async with proxy, memory_client(proxy) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["send_message"].output_schema == send_message_tool()["outputSchema"]
        sent = await client.call_tool("send_message", {"input": {"to": "agent:bob", "text": "hi"}})
        assert not sent.is_error and sent.structured_content == {}


# -- refusal reasons are the closed lists; the harness's finer word is additive -------------------


def test_every_refusal_reason_on_the_wire_is_closed() -> None:
    assert {*SEND_FAILURE_REASONS, "collective-failed", "firewall-refused"} == CLOSED_REASONS
    for reason in SEND_FAILURE_REASONS:
        assert closed_error_data({"reason": reason, "detail": "d"}) == {
            "reason": reason,
            "detail": "d",
        }


@pytest.mark.parametrize(
    ("harness_reason", "closed"),
    [
        ("policy-blocked", "certification-unavailable"),
        ("input-invalid", "content-invalid"),
        ("text-invalid", "content-invalid"),
        ("guard-refused", "certification-unavailable"),
    ],
)
def test_a_harness_reason_is_sent_as_its_closed_word(harness_reason: str, closed: str) -> None:
    assert closed_error_data({"reason": harness_reason, "detail": "why"}) == {
        "reason": closed,
        "detail": "why",
        "harnessReason": harness_reason,
    }


def test_a_policy_block_over_mcp_reads_as_certification_unavailable(tmp_path: Path) -> None:
    deny = {
        "rules": [
            {
                "id": "no-messages",
                "name": "no messages",
                "priority": 1,
                "decision": "deny",
                "reason": "messages are not allowed here",
                "match": {"tools": ["send_message"]},
            }
        ]
    }
    harness = Harness.create(tmp_path / "h", policy=Policy.from_dict(deny))
    session = SocialSession(harness.gate, tmp_path / "social", "alice", ("bob",))
    try:
        with pytest.raises(SocialToolError) as refused:
            session.endpoint.mcp_send_message({"input": {"to": "agent:bob", "text": "hi"}})
        assert refused.value.data == {
            "reason": "certification-unavailable",
            "detail": "[blocked] [web4-policy] messages are not allowed here",
            "harnessReason": "policy-blocked",
        }
    finally:
        session.close()
        harness.close()


def test_malformed_arguments_read_as_content_invalid(
    harness_and_session: tuple[Harness, SocialSession],
) -> None:
    _, session = harness_and_session
    with pytest.raises(SocialToolError) as malformed:
        session.endpoint.mcp_send_message({"message": "hi"})
    assert malformed.value.code == -32602
    assert malformed.value.data == {
        "reason": "content-invalid",
        "detail": 'input: is missing; message: is unexpected, expected: "input"',
        "harnessReason": "input-invalid",
    }


# -- the stdio form of a social proxy serves send_message ----------------------------------------


def test_the_stdio_command_of_a_social_proxy_carries_social(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path / "h", agents=("alice", "bob", "carol"))
    try:
        proxy = harness.start_proxy(social=True)
        argv = proxy.stdio_command
        assert argv[argv.index("--social") + 1] == "alice,bob,carol"
        plain = harness.start_proxy()
        assert "--social" not in plain.stdio_command
    finally:
        harness.close()


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_stdio_client_of_the_social_proxy_gets_send_message(tmp_path: Path) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    harness = Harness.create(tmp_path / "h", agents=("alice", "bob", "carol"))
    try:
        argv = harness.start_proxy(social=True).stdio_command
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        async with stdio_client(params) as streams, ClientSession(*streams) as client:
            await client.initialize()
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert listed["send_message"].output_schema == send_message_tool()["outputSchema"]
            sent = await client.call_tool(
                "send_message", {"input": {"to": "agent:bob", "text": "over stdio"}}
            )
            assert not sent.is_error and sent.structured_content == {}
            with pytest.raises(MCPError) as refused:
                await client.call_tool("send_message", {"input": {"to": "agent:zed", "text": "hi"}})
            assert refused.value.data["reason"] == "unknown-agent"
    finally:
        harness.close()
    assert sys.executable == argv[0]
