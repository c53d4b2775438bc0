"""What a cancelled function-tool call's work does after its record.

A framework cancels an async tool's call at its timeout (pydantic-ai's ``Tool(timeout=…)``, the
OpenAI Agents SDK's ``timeout_seconds``) or when its run ends; the call is recorded then, with
what the workspace showed at that moment. Work the tool handed to a thread
(``asyncio.to_thread``, an executor) is not cancelled with it and may go on — and write a
protected file a moment later, after the agent's run, where no later call compares the
workspace again. So, as the MCP proxy does for a call that timed out at it
(:mod:`.proxy.late_effects`), judging a session after a cancelled call compares the workspace
once more: it first gives that work :data:`GRACE` seconds from the cancellation, then records a
change since the last call as a ``note`` named :data:`CANCELLED_WORK` through the gate's seam, its
``effects.between`` judged as a later call's would be. A workspace unchanged since the last
call leaves no record.

The same comparison is made whenever the session is judged, cancelled call or not: a process
or thread a call left running (a detached child a function tool spawned, a background thread)
may change the workspace after the session's last call, where no later call's ``between``
would ever see it. A change since the last call is then recorded as a ``note`` named
:data:`CHANGED_AFTER_LAST_CALL`, judged the same way: what the agent's work did by the time the
verdict is read is judged, not only what it did inside its calls.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any

from pytest_harness_audit.doors.tool_calls import existing_turns, on_loop_thread, running_calls
from pytest_harness_audit.gate.seam import Outcome, changed_since_last_call

if TYPE_CHECKING:
    from pytest_harness_audit.gate.gate import Gate

#: The tool name of the note of a change after a cancelled function-tool call.
CANCELLED_WORK = "FunctionToolCancelled"
#: The tool name of the note of a change made after the session's last call (by no call).
CHANGED_AFTER_LAST_CALL = "WorkspaceChangedAfterLastCall"
#: The category the comparison is judged under (a function tool's without one).
CATEGORY = "unknown"
#: How long (seconds) after a cancellation its work is given before the comparison.
GRACE = 1.0


def compare_after_last_call(gate: Gate) -> None:
    """Record what changed in the workspace since the last call (see the module doc): after a
    cancelled function-tool call, once its grace is over, as :data:`CANCELLED_WORK`; else as
    :data:`CHANGED_AFTER_LAST_CALL`. Nothing inside a call or on a closed gate."""
    if getattr(gate, "closed", False):  # a closed session records nothing more
        return
    turns = existing_turns(gate)
    if turns is not None and turns.held_here():
        return
    if turns is None or turns.cancelled_at is None:
        tool: str = CHANGED_AFTER_LAST_CALL
        params: dict[str, Any] = {}
    else:
        left = turns.cancelled_at + GRACE - time.monotonic()
        if left > 0 and not on_loop_thread():
            time.sleep(min(left, GRACE))
        tool, params = CANCELLED_WORK, {"cancelledCalls": turns.cancelled}

    def act(_decision: object) -> Outcome:
        return Outcome("success", None, None)

    with contextlib.nullcontext() if turns is None else turns.sync_turn():
        if not changed_since_last_call(gate):
            return
        decision = gate.unjudged(tool, CATEGORY, params, target=None, kind="note")
        gate.run(tool, params, act, decision=decision)


def settled_calls(gate: Gate) -> int:
    """Make the function-tool calls of ``gate`` judgeable: wait for those still running
    (:func:`.tool_calls.running_calls`), then, when none is, compare the workspace with the
    last call's end (:func:`compare_after_last_call`);
    the number of calls still running (the session then fails anyway)."""
    running = running_calls(gate)
    if not running:  # a call still running holds or awaits the turn the comparison takes
        compare_after_last_call(gate)
    return running


__all__ = [
    "CANCELLED_WORK",
    "CATEGORY",
    "CHANGED_AFTER_LAST_CALL",
    "GRACE",
    "compare_after_last_call",
    "settled_calls",
]
