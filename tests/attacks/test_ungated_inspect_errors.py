"""``ungated_calls`` over inspect_ai: a tool message whose error says the tool never ran.

inspect_ai answers a call its approver rejected, or one naming a tool or arguments that do not
parse, with a tool message carrying the error (``approval``, ``parsing``): the tool did not run.
``ungated_calls`` counted every tool message as a call that ran, so a gated tool whose call was
rejected was named ungated although nothing ran. Benign twins: a tool message with an error
the tool raised itself (it ran), or the ``parsing`` error inspect_ai gives an embedded null byte
its subprocess found, is still a call.
"""

from __future__ import annotations

import pytest

from pytest_harness_audit.doors.ungated import ungated_calls

pytest.importorskip("inspect_ai")

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.tool import ToolCall, ToolCallError


class NoRecords:
    """A session that recorded no call."""

    def calls(self) -> list[object]:
        return []


def _messages(error: ToolCallError | None) -> list[object]:
    call = ToolCall(id="c1", function="shell", arguments={"command": "ls"})
    return [
        ChatMessageAssistant(content="", tool_calls=[call]),
        ChatMessageTool(content="", tool_call_id="c1", function="shell", error=error),
    ]


@pytest.mark.parametrize(
    "error",
    [
        ToolCallError("approval", "Tool call rejected by the approver"),
        ToolCallError("parsing", "Tool shell not found"),
    ],
    ids=["rejected", "unparsed"],
)
def test_a_call_that_never_ran_is_not_named(error: ToolCallError) -> None:
    assert ungated_calls(NoRecords(), _messages(error)) == []


@pytest.mark.parametrize(
    "error",
    [
        None,
        ToolCallError("unknown", "the tool failed"),
        ToolCallError("parsing", "An argument to tool 'shell' contained an embedded null byte."),
    ],
    ids=["ran", "raised", "null-byte"],
)
def test_a_call_that_ran_is_named(error: ToolCallError | None) -> None:
    assert ungated_calls(NoRecords(), _messages(error)) == ["shell"]
