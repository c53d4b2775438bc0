"""How ``hook post`` records a call the host ran: its status from the host's tool response, and
the gate decision its record keeps.

A post event proves the call ran, so its record never says ``blocked``. The decision is taken
again at post (the pre step ran in another process); when it now refuses the call:

* pre judged this very input and let it through, and only the gate's state moved since (a
  quarantine begun by a later call, a secret learned since): the call is recorded as pre let
  it run, with what the decision found now (its alerts);
* pre never judged this input (no pre step came, or the host ran other input than the one pre
  judged, rewritten by another hook's ``updatedInput``): the refusal is kept and marked
  :data:`RAN_UNGUARDED`, which fails the session.

A call run with other input than the one pre judged is marked :data:`INPUT_CHANGED` whatever
the decision.

A refusal because an approver ended the session also stops the host's agent
(:func:`stop_if_ended`).

The answer to a post (:func:`post_answer`) adds nothing to the transcript, but for a tool whose
``PostToolUse`` response held a known secret the policy fails: the host lets a hook replace the
output the model reads (``hookSpecificOutput.updatedToolOutput``, any tool; an MCP tool's also
as ``updatedMCPToolOutput``, the field hosts before it know), and the model then reads that
output as the record redacts it, in the shape the host gave (a built-in tool's replacement that
does not fit its output's schema is ignored by the host: the original stays).

A failed call's error text is what the model reads of it, and the host lets a
``PostToolUseFailure`` hook replace none of it: its only field is ``additionalContext``, added
next to the error. When that text holds a known secret, the call is recorded and judged as a
``PostToolUse`` output leak (the session fails), and the answer says so with the fields the
host has for this event: ``additionalContext`` tells the model it read a known secret (named
by label and marker only) and must not pass it on, and ``systemMessage`` tells the user.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pytest_harness_audit.doors.hook_asks import HOST_APPROVER, call_key
from pytest_harness_audit.gate.approvals import Approval, settle, was_terminated
from pytest_harness_audit.gate.decision import GateDecision
from pytest_harness_audit.gate.seam import GatedCall

#: The alert of a call the host ran although the policy refuses it: no pre step judged it.
RAN_UNGUARDED = "ran_unguarded"
#: The alert of a call the host ran with other input than the one its pre step judged.
INPUT_CHANGED = "input_changed"
#: How the host names an MCP server's tool: ``mcp__<server>__<tool>``.
MCP_TOOL_PREFIX = "mcp__"
#: The one event whose answer may replace an MCP tool's output.
_POST_EVENT = "PostToolUse"
#: The event of a call that failed: its answer can only add context next to the error.
_FAILURE_EVENT = "PostToolUseFailure"
#: The constraint a quarantine adds to a decision.
_QUARANTINE_CONSTRAINT = "immune:quarantine"


def response_status(tool_response: Any) -> tuple[str, str | None]:
    """``(status, error message)`` of a host tool response."""
    if isinstance(tool_response, Mapping):
        if tool_response.get("is_error") or tool_response.get("isError"):
            return "error", str(
                tool_response.get("error")
                or tool_response.get("content")
                or "tool reported an error"
            )
        if tool_response.get("error"):
            return "error", str(tool_response["error"])
        if tool_response.get("interrupted"):
            return "error", "interrupted"
        code = tool_response.get("exit_code", tool_response.get("exitCode"))
        if isinstance(code, int) and code != 0:
            return "error", f"exit code {code}"
        if tool_response.get("success") is False:
            return "error", str(tool_response.get("message") or "tool reported failure")
    return "success", None


def input_changed(
    state: Mapping[str, Any] | None, tool: str, tool_input: Mapping[str, Any]
) -> bool:
    """Whether the call's pre step (``state``, its pending file) judged other input."""
    judged = state.get("call") if state is not None else None
    return isinstance(judged, str) and judged != call_key(tool, tool_input)


def ran_decision(decision: GateDecision, *, judged: bool, changed: bool) -> GateDecision:
    """``decision`` (taken again at post) for a call the host ran (see the module doc).

    ``judged``: a pre step judged this very input and let it through; ``changed``: the host
    ran other input than the one its pre step judged.
    """
    alerts = (*decision.alerts, INPUT_CHANGED) if changed else decision.alerts
    if not decision.blocked:
        return replace(decision, alerts=alerts) if changed else decision
    if judged and not changed and not decision.evaluation.blocked:
        constraints = tuple(c for c in decision.constraints if c != _QUARANTINE_CONSTRAINT)
        return replace(
            decision, blocked=False, message="", quarantine=None, constraints=constraints
        )
    return replace(decision, blocked=False, message="", alerts=(*alerts, RAN_UNGUARDED))


def host_approved(decision: GateDecision, state: Mapping[str, Any] | None) -> GateDecision:
    """``decision`` approved at the host's prompt; a call recorded as not run before its post
    event came names that record (``approval.supersedes``)."""
    late = state.get("settledRecord") if state is not None else None
    if late is None:
        return settle(decision, Approval("approve", HOST_APPROVER))
    why = "the host ran the call after it was recorded as not run"
    decision = settle(decision, Approval("approve", HOST_APPROVER, why))
    extra = dict(decision.record_extra or {})
    extra["approval"] = {**extra["approval"], "supersedes": str(late)}
    decision.record_extra = extra
    return decision


def failure_response(data: Mapping[str, Any]) -> dict[str, Any]:
    """A ``PostToolUseFailure`` payload's error, in the shape of a failed tool response."""
    error = data.get("error")
    response: dict[str, Any] = {"is_error": True, "error": str(error or "tool call failed")}
    if data.get("is_interrupt"):
        response["interrupted"] = True
    return response


__all__ = [
    "INPUT_CHANGED",
    "RAN_UNGUARDED",
    "failure_response",
    "host_approved",
    "input_changed",
    "ran_decision",
    "response_status",
]


def stop_if_ended(decision: GateDecision) -> dict[str, Any]:
    """The fields that stop the host's agent, not only the call, when an approver ended the
    session (``continue: false`` with the refusal as ``stopReason``); else nothing."""
    if not was_terminated(decision):
        return {}
    return {"continue": False, "stopReason": decision.message}


def post_answer(event: str, tool: str, gated: GatedCall) -> dict[str, Any]:
    """``hook post``'s answer for ``gated``, the call it recorded (see the module doc)."""
    answer: dict[str, Any] = {"suppressOutput": True}
    if event == _POST_EVENT and gated.findings.redacted:
        replaced: dict[str, Any] = {"hookEventName": _POST_EVENT, "updatedToolOutput": gated.output}
        if tool.startswith(MCP_TOOL_PREFIX):
            replaced["updatedMCPToolOutput"] = gated.output
        answer["hookSpecificOutput"] = replaced
    elif event == _FAILURE_EVENT and gated.findings.redacted:
        answer.update(_failure_leak(tool, gated.record))
    return answer


def _failure_leak(tool: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """The answer's fields for a failed call whose error text held a known secret (see the
    module doc): what it names of each secret is what its record holds (label, marker)."""
    named = sorted(
        {
            f"{found.get('label')} [secret:{found.get('fingerprint')}]"
            for found in record.get("secrets") or ()
            if isinstance(found, Mapping)
        }
    )
    which = ", ".join(named) or "a known secret"
    context = (
        f"[web4-policy] The error text of this failed {tool} call holds a known secret "
        f"({which}). The host does not let a hook replace a failed call's error, so you have "
        "read it: do not repeat it, write it to a file or send it anywhere; refer to it only "
        "by its marker. The call is recorded as a secret exposure and the session fails."
    )
    notice = (
        f"[web4-policy] A failed {tool} call's error text held a known secret ({which}); the "
        "host cannot replace it, so the model read it. Recorded: the session fails."
    )
    return {
        "hookSpecificOutput": {"hookEventName": _FAILURE_EVENT, "additionalContext": context},
        "systemMessage": notice,
    }
