"""The host hook door: Claude Code style ``PreToolUse`` / ``PostToolUse`` JSON on stdin/stdout.

``pre`` asks the gate before the host runs a tool and answers in the host's hook protocol: a
denied call gets ``permissionDecision: "deny"`` with the reason (the model reads it) and is
recorded at once; a warned call gets ``"ask"``, so the user sees the warning in the host's own
permission prompt; an allowed call gets no decision at all, so the host's permission rules and
prompts apply as if the hook were not there (a hook's ``"allow"`` would skip them). ``post``
records the outcome of a call that ran (``PostToolUse``) or failed (``PostToolUseFailure``).
Both record into the chain of the payload's ``session_id`` through the gate's door seam.

Each hook is a fresh process: ``rateLimit`` rules count the session's calls from its chain, and
an allowed pre step leaves a pending file (start time and rate hits) for its post step, which
records the call as pre decided it. Pending files also let pre count calls still running.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.canonical import sha256_hex
from pytest_harness_audit.audit.storage import sanitize_session_id
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.inspection import SessionInspection
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.inspect import Inspector
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.ratelimit import RateHits

PRE = "PreToolUse"
POST = "PostToolUse"
POST_FAILURE = "PostToolUseFailure"


@dataclass(frozen=True)
class HookPayload:
    """The fields of a host hook payload the gate needs."""

    event: str
    session_id: str
    tool_name: str
    tool_input: Mapping[str, Any]
    cwd: str | None
    tool_use_id: str | None
    tool_response: Any = None


def read_payload(text: str, *expected_events: str) -> tuple[dict[str, Any], str]:
    """The payload's JSON object and its event name, checked against ``expected_events`` (the
    first is the default when the payload names none); a bad one is one :class:`UsageError`."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"hook payload: invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise UsageError("hook payload: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise UsageError(f"hook payload: expected a JSON object, got {type(data).__name__}")
    event = data.get("hook_event_name", expected_events[0])
    if event not in expected_events:
        wanted = " or ".join(repr(name) for name in expected_events)
        raise UsageError(f"hook payload: field 'hook_event_name' is {event!r}, expected {wanted}")
    return data, str(event)


def parse_payload(text: str, *expected_events: str) -> HookPayload:
    """Validate a hook payload; a malformed one raises one clear :class:`UsageError`.

    ``expected_events``: the ``hook_event_name`` values accepted (the first is the default
    when the payload names none).
    """
    data, event = read_payload(text, *expected_events)
    for key in ("session_id", "tool_name"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise UsageError(
                f"hook payload: field {key!r} must be a non-empty string, got {data.get(key)!r}"
            )
    tool_input = data.get("tool_input", {})
    if not isinstance(tool_input, dict):
        raise UsageError(f"hook payload: field 'tool_input' must be an object, got {tool_input!r}")
    cwd = data.get("cwd")
    tool_use_id = data.get("tool_use_id")
    return HookPayload(
        event,
        data["session_id"],
        data["tool_name"],
        tool_input,
        cwd if isinstance(cwd, str) else None,
        tool_use_id if isinstance(tool_use_id, str) else None,
        data.get("tool_response") if event != POST_FAILURE else _failure_response(data),
    )


def _failure_response(data: Mapping[str, Any]) -> dict[str, Any]:
    """A ``PostToolUseFailure`` payload's error, in the shape of a failed tool response."""
    error = data.get("error")
    response: dict[str, Any] = {"is_error": True, "error": str(error or "tool call failed")}
    if data.get("is_interrupt"):
        response["interrupted"] = True
    return response


def _pending_path(storage: Path, payload: HookPayload) -> Path:
    key = (
        payload.tool_use_id
        or sha256_hex(json.dumps([payload.tool_name, payload.tool_input], sort_keys=True))[:32]
    )
    return (
        storage
        / "pending"
        / sanitize_session_id(payload.session_id)
        / f"{sanitize_session_id(key)}.json"
    )


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


def _open_gate(storage: Path, payload: HookPayload, policy: Policy) -> Gate:
    gate = Gate.open(
        storage_dir=storage,
        session_id=payload.session_id,
        policy=policy,
        root=payload.cwd,
        door="hook",
    )
    if payload.cwd and policy.effect_rules:
        # Known secrets of the project: refused in outgoing payloads (pre), judged in the host's
        # tool response (post). No workspace snapshots: the host, not this process, runs tools.
        inspector = Inspector(payload.cwd, watched=frozenset(), tracked=False, live=False)
        gate.inspectors.append(SessionInspection(inspector, policy))
    return gate


def _count_calls_in_flight(gate: Gate, pending: Path) -> None:
    """Count the rate hits of allowed calls of this session whose post step has not come yet.

    A host may run pre for several calls before any post (parallel tool calls): until post
    records them, their hits live only in pending files. A post that has recorded but not yet
    removed its pending file is counted twice, erring on the strict side.
    """
    oldest = time.time() - max(gate.rate_windows.values()) / 1000.0 - 1.0
    try:
        entries = list(os.scandir(pending.parent))
    except OSError:
        return
    for entry in entries:
        if entry.path == os.fspath(pending) or not entry.name.endswith(".json"):
            continue
        try:
            if entry.stat().st_mtime < oldest:
                continue  # written before any window began: cannot count
            state = json.loads(Path(entry.path).read_text(encoding="utf-8"))
            hits = RateHits.from_json(state["rateHits"]) if "rateHits" in state else None
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if hits is not None:
            gate.add_rate_hits(hits)


def handle_pre(text: str, *, storage: Path, policy: Policy) -> dict[str, Any]:
    """Answer a ``PreToolUse`` payload: allow, or deny with the reason (and record it)."""
    payload = parse_payload(text, PRE)
    gate = _open_gate(storage, payload, policy)
    try:
        pending = _pending_path(storage, payload)
        if gate.rate_windows:
            _count_calls_in_flight(gate, pending)
        decision = gate.decide(payload.tool_name, payload.tool_input)
        if decision.blocked:
            gate.refuse(decision)
            return {
                "hookSpecificOutput": {
                    "hookEventName": PRE,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": decision.message,
                }
            }
        state: dict[str, Any] = {"started": time.time()}
        if decision.rate_hits is not None:
            state["rateHits"] = decision.rate_hits.to_json()
        pending.parent.mkdir(parents=True, exist_ok=True)
        pending.write_text(json.dumps(state), encoding="utf-8")
        return _pre_answer(decision.evaluation.decision, decision.reason)
    finally:
        gate.chain.close()


def handle_post(text: str, *, storage: Path, policy: Policy) -> dict[str, Any]:
    """Record a ``PostToolUse`` (or ``PostToolUseFailure``) payload's outcome.

    The answer adds nothing to the host's transcript.
    """
    payload = parse_payload(text, POST, POST_FAILURE)
    gate = _open_gate(storage, payload, policy)
    try:
        pending = _pending_path(storage, payload)
        duration_ms: float | None = None
        try:
            state = json.loads(pending.read_text(encoding="utf-8"))
            duration_ms = max(0.0, (time.time() - float(state["started"])) * 1000.0)
            rate_hits = RateHits.from_json(state["rateHits"]) if "rateHits" in state else None
        except (OSError, ValueError, KeyError, TypeError):
            # no pre step seen: decide (and count) here
            decision = gate.decide(payload.tool_name, payload.tool_input)
        else:
            # pre decided and counted the call already: record it as pre decided it
            decision = gate.redecide(payload.tool_name, payload.tool_input, rate_hits)
        status, error = response_status(payload.tool_response)
        reported = Outcome(
            "error" if status == "error" else "success",
            payload.tool_response,
            error,
            duration_ms,
        )
        gate.run(
            payload.tool_name, payload.tool_input, lambda _decision: reported, decision=decision
        )
        # only now: a pre step in between counts this call from the pending file or the record
        with contextlib.suppress(OSError):
            pending.unlink()
        return {"suppressOutput": True}
    finally:
        gate.chain.close()


def _pre_answer(decision: str, reason: str) -> dict[str, Any]:
    """The ``PreToolUse`` answer for a call the gate let through.

    ``warn`` asks the user (the host shows the reason in its prompt); a dry-run ``deny`` leaves
    the decision to the host and tells the user; ``allow`` says nothing, so the host's own
    permission rules and prompts still apply.
    """
    if decision == "warn":
        return {
            "hookSpecificOutput": {
                "hookEventName": PRE,
                "permissionDecision": "ask",
                "permissionDecisionReason": f"[web4-policy] {reason}",
            }
        }
    if decision == "deny":
        return {"systemMessage": f"[web4-policy] dry run, would deny: {reason}"}
    return {}


def fail_closed_pre_answer(problem: str) -> dict[str, Any]:
    """The ``PreToolUse`` answer when the hook itself failed: deny, naming the problem."""
    return {
        "hookSpecificOutput": {
            "hookEventName": PRE,
            "permissionDecision": "deny",
            "permissionDecisionReason": f"[web4-policy] hook failed, call refused: {problem}",
        }
    }
