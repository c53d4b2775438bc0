"""An approver's modified parameters are what a function tool runs with.

A call the policy asks about goes to the session's approver, which may answer ``modify`` with
new parameters: the gate judges those again and the record holds them. The function-tool door
ran the tool with the model's own arguments all the same, so a write the approver redirected to
``notes/review.txt`` still rewrote ``deploy/app.yaml``, while the record said the review file
was written and the session was PASS. The tool now runs with the approved parameters (a
parameter the approver left keeps the tool's own argument object). Benign twins: an approval
without changes runs the call as the model made it; a modified call naming a parameter the
tool does not take is an error, and nothing runs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness

#: Writes to ``deploy/`` ask for a human first; everything else is allowed.
ASK_DEPLOY: dict[str, Any] = {
    "defaultPolicy": "allow",
    "rules": [
        {
            "id": "ask-deploy",
            "name": "Deploy files need approval",
            "priority": 5,
            "decision": "ask",
            "match": {"tools": ["Write"], "targetPatterns": ["deploy/**"]},
        }
    ],
}
REVIEW = {"file_path": "notes/review.txt", "content": "held for review\n"}


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    made = Harness.create(tmp_path, policy=Policy.from_dict(ASK_DEPLOY))
    yield made
    made.close()


def _writer(harness: Harness, got: list[Any]) -> Any:
    def write(file_path: str, content: str) -> str:
        """Write a file of the repository."""
        got.append((file_path, content))
        path = harness.root / file_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        return "written"

    return harness.tool(write, name="Write", on_block="return")


def test_a_redirected_write_writes_the_approved_file(harness: Harness) -> None:
    harness.approver(lambda call: ("modify", REVIEW))
    got: list[Any] = []
    assert _writer(harness, got)("deploy/app.yaml", "replicas: 99\n") == "written"
    assert got == [("notes/review.txt", "held for review\n")]
    assert not (harness.root / "deploy/app.yaml").exists()
    (call,) = harness.calls()
    assert call.params == REVIEW


def test_a_redirected_write_through_pydantic_ai_writes_the_approved_file(
    harness: Harness,
) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            args = {"file_path": "deploy/app.yaml", "content": "replicas: 99\n"}
            return ModelResponse(parts=[ToolCallPart("Write", args)])
        return ModelResponse(parts=[TextPart("done")])

    harness.approver(lambda call: ("modify", REVIEW))
    got: list[Any] = []
    Agent(FunctionModel(respond), tools=[_writer(harness, got)]).run_sync("go")
    assert got == [("notes/review.txt", "held for review\n")]
    assert not (harness.root / "deploy/app.yaml").exists()


def test_a_changed_content_keeps_the_tool_s_own_other_arguments(harness: Harness) -> None:
    class Target(BaseModel):
        path: str

    got: list[Any] = []

    async def write(target: Target, content: str, mode: str = "w") -> str:
        """Write a file."""
        got.append((target, content, mode))
        return "written"

    tool = harness.tool(write, name="Write", on_block="return")
    harness.approver(lambda call: ("modify", {**call.params, "content": "reviewed\n"}))
    target = Target(path="deploy/app.yaml")
    assert asyncio.run(tool(target, "replicas: 99\n")) == "written"
    assert got == [(target, "reviewed\n", "w")]
    assert got[0][0] is target


def test_an_approved_call_runs_as_the_model_made_it(harness: Harness) -> None:
    harness.approver(lambda call: "approve")
    got: list[Any] = []
    assert _writer(harness, got)("deploy/app.yaml", "replicas: 2\n") == "written"
    assert got == [("deploy/app.yaml", "replicas: 2\n")]
    assert json.loads(json.dumps(harness.calls()[0].params))["file_path"] == "deploy/app.yaml"


def test_a_modified_call_naming_no_parameter_of_the_tool_runs_nothing(harness: Harness) -> None:
    harness.approver(lambda call: ("modify", {**REVIEW, "mode": "a"}))
    got: list[Any] = []
    with pytest.raises(TypeError, match="'mode'"):
        _writer(harness, got)("deploy/app.yaml", "replicas: 99\n")
    assert got == []
    assert harness.calls()[0].status == "error"
