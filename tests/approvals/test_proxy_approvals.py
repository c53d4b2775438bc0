"""Approvals at the proxy: ``ask`` becomes an MCP elicitation to the client, or a rejection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext
from mcp_memory import memory_client

from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.doors.proxy import RecordingProxy
from pytest_harness_audit.doors.proxy.workspace_tools import workspace_tools
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import Verdict, judge

pytestmark = pytest.mark.anyio

DEPLOY = {"file_path": "deploy/app.yaml", "content": "replicas: 2\n"}


class Approver:
    """A client's elicitation callback that answers like a user at a form would."""

    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None) -> None:
        self.action, self.content = action, content
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(params)
        return types.ElicitResult(action=self.action, content=self.content)  # type: ignore[arg-type]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    made = tmp_path / "work"
    made.mkdir()
    return made


@pytest.fixture
def gate(tmp_path: Path, root: Path, ask_policy: Policy) -> Iterator[Gate]:
    opened = Gate.open(
        storage_dir=tmp_path / "audit",
        session_id="proxy-approvals",
        policy=ask_policy,
        root=str(root),
    )
    yield opened
    opened.chain.close()


def calls(gate: Gate) -> list[dict[str, Any]]:
    return [dict(r) for r in gate.chain.records() if r.get("kind", "call") == "call"]


async def call_deploy(gate: Gate, root: Path, **client: Any) -> types.CallToolResult:
    proxy = RecordingProxy(gate, [], local_tools=workspace_tools(root), report=lambda _: None)
    async with proxy, memory_client(proxy, **client) as session:
        return await session.call_tool("Write", DEPLOY)


def text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_accept_approves_the_call(gate: Gate, root: Path) -> None:
    user = Approver(content={"decision": "approve"})
    result = await call_deploy(gate, root, elicitation_callback=user)
    assert not result.is_error, text(result)
    assert (root / "deploy/app.yaml").exists()
    [asked] = user.asked
    assert isinstance(asked, types.ElicitRequestFormParams)
    assert asked.message == "Approve Write? deploy files need a human"
    assert asked.requested_schema["required"] == ["decision"]
    [record] = calls(gate)
    assert record["resource"] == {"approvalRequired": True}
    assert record["approval"]["outcome"] == "approve"
    assert record["approval"]["approver"].startswith("client:")


async def test_the_client_may_reject_with_a_reason(gate: Gate, root: Path) -> None:
    user = Approver(content={"decision": "reject", "reason": "freeze week"})
    result = await call_deploy(gate, root, elicitation_callback=user)
    assert result.is_error
    assert text(result) == "[blocked] [web4-approval] reject: freeze week"
    assert not (root / "deploy/app.yaml").exists()
    [record] = calls(gate)
    assert record["approval"]["reason"] == "freeze week"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reject(gate: Gate, root: Path, action: str) -> None:
    result = await call_deploy(gate, root, elicitation_callback=Approver(action))
    assert result.is_error
    assert f"the client answered {action}" in text(result)
    assert calls(gate)[0]["approval"]["outcome"] == "reject"


async def test_a_client_without_elicitation_gets_a_rejection(gate: Gate, root: Path) -> None:
    result = await call_deploy(gate, root)
    assert result.is_error
    assert "declared no 'elicitation' capability" in text(result)
    assert not (root / "deploy/app.yaml").exists()
    [record] = calls(gate)
    assert record["approval"]["outcome"] == "reject"


async def test_an_unknown_word_from_the_client_rejects(gate: Gate, root: Path) -> None:
    user = Approver(content={"decision": "sure"})
    result = await call_deploy(gate, root, elicitation_callback=user)
    assert result.is_error
    assert "unknown answer 'sure'" in text(result)
    [record] = calls(gate)
    assert record["approval"]["error"]


async def test_terminate_from_the_client_ends_the_session(gate: Gate, root: Path) -> None:
    user = Approver(content={"decision": "terminate"})
    proxy = RecordingProxy(gate, [], local_tools=workspace_tools(root), report=lambda _: None)
    async with proxy, memory_client(proxy, elicitation_callback=user) as session:
        first = await session.call_tool("Write", DEPLOY)
        later = await session.call_tool("Read", {"file_path": "deploy/app.yaml"})
    assert first.is_error and later.is_error
    assert "session terminated" in text(later)
    assert [r["approval"]["outcome"] for r in calls(gate)] == ["terminate", "terminated"]
    assert judge([CallRecord(r) for r in calls(gate)], chain_valid=True)[0] == Verdict.FAIL


async def test_escalate_from_the_client_appends_an_escalation(gate: Gate, root: Path) -> None:
    user = Approver(content={"decision": "escalate"})
    result = await call_deploy(gate, root, elicitation_callback=user)
    assert result.is_error
    kinds = [r.get("kind", "call") for r in gate.chain.records()]
    assert kinds == ["call", "escalation"]


async def test_a_scripted_approver_wins_over_the_client(gate: Gate, root: Path) -> None:
    user = Approver(content={"decision": "reject"})
    gate.approvals.set(lambda call: "approve", "scripted")
    result = await call_deploy(gate, root, elicitation_callback=user)
    assert not result.is_error
    assert user.asked == []
    assert calls(gate)[0]["approval"] == {"approver": "scripted", "outcome": "approve"}


async def test_calls_that_do_not_ask_never_elicit(gate: Gate, root: Path) -> None:
    user = Approver(content={"decision": "reject"})
    proxy = RecordingProxy(gate, [], local_tools=workspace_tools(root), report=lambda _: None)
    async with proxy, memory_client(proxy, elicitation_callback=user) as session:
        result = await session.call_tool("Write", {"file_path": "notes.md", "content": "x"})
    assert not result.is_error
    assert user.asked == []
