"""The host hook door: Claude Code style ``PreToolUse`` / ``PostToolUse`` JSON on stdin/stdout.

``pre`` asks the gate before the host runs a tool and answers in the host's hook protocol: a
denied call gets ``permissionDecision: "deny"`` with the reason (the model reads it) and is
recorded at once; a warned call gets ``"ask"``, so the user sees the warning in the host's own
permission prompt; an allowed call gets no decision at all, so the host's permission rules and
prompts apply as if the hook were not there (a hook's ``"allow"`` would skip them). ``post``
records the outcome of a call that ran (``PostToolUse``) or failed (``PostToolUseFailure``).
Both record into the chain of the payload's ``session_id`` through the gate's door seam.

Each hook is a fresh process: ``rateLimit`` rules count the session's calls from its chain, and
an allowed pre step leaves a pending file (start time, rate hits and, for a call that can change
files, the workspace snapshot of :mod:`.hook_effects`), sealed (:mod:`.hook_pending_seal`), for
its post step, which records the call as pre decided it, with its effects (a post proves the
call ran: it is never recorded as blocked, see :mod:`.hook_outcome`). Pending files also let pre
count calls still running.

A call pre answered ``ask`` gets exactly one outcome record: post records it approved by the
host, ``PermissionDenied`` records the host's auto mode refusing it, and a refusal at the host's
prompt (which sends no event) is recorded at the next event that proves the ask is over
(:mod:`.hook_asks`).

How pre answers is :class:`PreAnswers`: ``--approve-allowed`` answers ``"allow"`` for allowed
calls (skipping the host's prompt, opt-in; only in :data:`APPROVING_MODES`), and ``--warn
pass`` lets a warned call through without a decision, the warning still reaching the model
(``additionalContext``) and the user (``systemMessage``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_harness_audit.doors.chain_faults import open_gate as open_session_gate
from pytest_harness_audit.doors.hook_asks import (
    ASKED_KEY,
    AUTO_MODE_APPROVER,
    EVERY_AGENT,
    NEVER_ASKS,
    asked_entry,
    call_key,
    carry_lifts,
    note_lifts,
    pending_path,
    reconcile,
    refuse_asked,
    sealed_facts,
    take,
    write_state,
)
from pytest_harness_audit.doors.hook_between import after_call, between_events, resume
from pytest_harness_audit.doors.hook_continuity import WitnessGuard, witness_dir
from pytest_harness_audit.doors.hook_effects import (
    DEFAULT_ENTRY_LIMIT,
    PENDING_KEY,
    HookInspection,
    HookInspector,
    workspace_root,
)
from pytest_harness_audit.doors.hook_evidence_guard import EvidenceGuard
from pytest_harness_audit.doors.hook_host_settings import HostWatch, check_between
from pytest_harness_audit.doors.hook_in_flight import runs_on
from pytest_harness_audit.doors.hook_outcome import (
    RAN_UNGUARDED,
    failure_response,
    host_approved,
    input_changed,
    post_answer,
    ran_decision,
    response_status,
    stop_if_ended,
)
from pytest_harness_audit.doors.hook_pending_seal import pending_key, record_broken, seal
from pytest_harness_audit.doors.hook_unfinished import use_id_fields
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.approvals import ASK, Approval, ended, recording_only
from pytest_harness_audit.gate.console import consoles
from pytest_harness_audit.gate.record_scrub import RecordScrub
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.ratelimit import RateHits
from pytest_harness_audit.types import Status

PRE = "PreToolUse"
POST = "PostToolUse"
POST_FAILURE = "PostToolUseFailure"
PERMISSION_DENIED = "PermissionDenied"
#: The host's tools that ask the user something: ``--approve-allowed`` never answers for them.
USER_INPUT_TOOLS = frozenset({"AskUserQuestion", "ExitPlanMode"})
#: What pre answers for a warned call: ``ask`` the user, or ``pass`` it through (see the doc).
WARN_MODES = ("ask", "pass")
#: The host's permission modes in which ``--approve-allowed`` answers ``"allow"``: those whose
#: prompt it stands in for. ``plan`` (no edits) and ``dontAsk`` (only what the user allowed
#: beforehand) refuse what they do not allow, and an ``allow`` would override that.
APPROVING_MODES = frozenset({"default", "acceptEdits", "auto", "bypassPermissions"})
_NOT_UTF8 = re.compile("[\ud800-\udfff]")
_TAG = "[web4-policy]"


@dataclass(frozen=True)
class PreAnswers:
    """How ``hook pre`` answers calls the gate lets through (see the module doc)."""

    #: Answer ``permissionDecision: "allow"`` for allowed calls (the host skips its prompt).
    approve_allowed: bool = False
    #: ``ask`` (the default) or ``pass`` for warned calls.
    warn: str = "ask"
    #: Entries a workspace snapshot walks at most (:mod:`.hook_effects`).
    snapshot_limit: int = DEFAULT_ENTRY_LIMIT

    def __post_init__(self) -> None:
        if self.warn not in WARN_MODES:
            raise UsageError(f"hook pre: warn mode must be 'ask' or 'pass', got {self.warn!r}")
        if self.snapshot_limit < 1:
            raise UsageError(
                f"hook pre: snapshot limit must be a positive number, got {self.snapshot_limit}"
            )


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
    #: The subagent the call comes from (``None``: the main agent).
    agent_id: str | None = None
    #: The host's permission mode (``None``: the payload names none; one that is not a string
    #: as its ``repr``, a mode no host has).
    permission_mode: str | None = None
    #: The host's transcript of the session (``transcript_path``), evidence the door reads.
    transcript: str | None = None


def read_payload(text: str, *expected_events: str) -> tuple[dict[str, Any], str]:
    """The payload's JSON object and its event name, checked against ``expected_events`` (the
    first is the default when the payload names none); a bad one is one :class:`UsageError`."""
    if _NOT_UTF8.search(text):  # bytes that are not UTF-8, read as lone surrogates
        raise UsageError("hook payload: not UTF-8 text")
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
    if "tool_input" not in data:  # the host always sends it: judging ``{}`` judges nothing
        raise UsageError("hook payload: field 'tool_input' is missing")
    tool_input = data["tool_input"]
    if not isinstance(tool_input, dict):
        raise UsageError(f"hook payload: field 'tool_input' must be an object, got {tool_input!r}")
    cwd = data.get("cwd")
    tool_use_id = data.get("tool_use_id")
    agent_id = data.get("agent_id")
    mode, transcript = data.get("permission_mode"), data.get("transcript_path")
    return HookPayload(
        event,
        data["session_id"],
        data["tool_name"],
        tool_input,
        cwd if isinstance(cwd, str) else None,
        tool_use_id if isinstance(tool_use_id, str) else None,
        data.get("tool_response") if event != POST_FAILURE else failure_response(data),
        agent_id if isinstance(agent_id, str) and agent_id else None,
        None if mode is None else mode if isinstance(mode, str) else repr(mode),
        transcript if isinstance(transcript, str) and transcript else None,
    )


def _pending_path(storage: Path, payload: HookPayload) -> Path:
    return pending_path(
        storage, payload.session_id, payload.tool_name, payload.tool_input, payload.tool_use_id
    )


def open_gate(
    storage: Path, payload: HookPayload, policy: Policy, limit: int = DEFAULT_ENTRY_LIMIT
) -> tuple[Gate, HookInspection | None]:
    """The gate of the payload's session as the hook door opens it: its record lines on stderr
    and, in a project, the inspection of secrets and workspace effects.

    A chain that can no longer be written (changed outside the harness) is one
    :class:`~pytest_harness_audit.audit.errors.ChainError` saying so: the event fails, and a
    ``pre`` refuses its call."""
    gate = open_session_gate(
        storage_dir=storage,
        session_id=payload.session_id,
        policy=policy,
        root=payload.cwd,
        door="hook",
    )
    gate.observers.extend(consoles(sys.stderr, policy.audit_level))  # record lines on stderr
    # the continuity witnesses are evidence too: out of the agent's reach as the store is
    gate.store_guard = WitnessGuard(storage, payload.cwd, witness_dir())
    gate.install_guard = EvidenceGuard(gate.root, policy.source, payload.transcript)
    root = workspace_root(payload.cwd)
    if root is None:
        return gate, None
    # Known secrets of the project: refused in outgoing payloads (pre), judged in the host's
    # tool response (post). Workspace effects: a snapshot at pre, compared at post.
    inspector = HookInspector(
        root,
        policy,
        storage=storage,
        limit=limit,
        learn=bool(policy.effect_rules),
        session_id=payload.session_id,
    )
    inspection = HookInspection(inspector, policy)
    gate.inspectors.extend((inspection, inspector.uncommitted))  # its kept work unusable
    gate.chain.builder.scrub = RecordScrub(gate.inspectors)  # every string of every record
    return gate, inspection


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


def handle_pre(
    text: str, *, storage: Path, policy: Policy, answers: PreAnswers | None = None
) -> dict[str, Any]:
    """Answer a ``PreToolUse`` payload: deny (and record it), ask, or leave it to the host."""
    answers = answers or PreAnswers()
    payload = parse_payload(text, PRE)
    # the host's settings or protected files changed since the last event (a process left running)
    host = between_events(storage, payload.session_id, policy=policy, cwd=payload.cwd, event=PRE)
    gate, inspection = open_gate(storage, payload, policy, answers.snapshot_limit)
    if inspection is not None:  # the call's pending state reuses what was just digested
        inspection.inspector.host_taken = host.now
    try:
        pending, sid = _pending_path(storage, payload), payload.session_id
        # the agent's earlier asks the host settled without an event: refused at its prompt
        reconcile(gate, storage, event=PRE, agent=payload.agent_id, skip=pending, session_id=sid)
        if gate.rate_windows:
            _count_calls_in_flight(gate, pending)
        # an approver's terminate, in any process sharing the store, ends the session
        decision = ended(gate, gate.decide(payload.tool_name, payload.tool_input))
        if decision.blocked:  # the refusal holds the host's id: a chain that lost it is seen
            gate.refuse(decision, extra=use_id_fields(payload.tool_use_id))
            return {
                "hookSpecificOutput": {
                    "hookEventName": PRE,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": decision.message,
                },
                **stop_if_ended(decision),
            }
        state: dict[str, Any] = {
            "call": call_key(payload.tool_name, payload.tool_input),
            "started": time.time(),
        }
        if decision.rate_hits is not None:
            state["rateHits"] = decision.rate_hits.to_json()
        note_lifts(gate, state)
        if decision.evaluation.decision == ASK:
            answer = host_ask(decision.reason)
        else:
            answer = _pre_answer(decision.evaluation.decision, decision.reason, answers, payload)
        if answer.get("hookSpecificOutput", {}).get("permissionDecision") == "ask":
            # the host asks: the call's outcome must be recorded, whatever it is (kept before
            # the snapshot, so a reconciliation finds it by reading the file's head)
            ask = (payload.tool_name, payload.tool_input, payload.agent_id, payload.tool_use_id)
            mode = payload.permission_mode
            state[ASKED_KEY] = asked_entry(decision.evaluation.decision, *ask, mode)
        if inspection is not None:
            token = inspection.before(payload.tool_name, decision.category, payload.tool_input)
            kept = inspection.inspector.pending_state(token)
            if kept is not None:
                state[PENDING_KEY] = kept
        # sealed outside the store: the call cannot rewrite what its post reads unseen
        seal(storage, sid, pending, write_state(pending, state), sealed_facts(state), fresh=True)
        if ASKED_KEY in state and payload.permission_mode == NEVER_ASKS:  # refused, not asked
            reconcile(gate, storage, event=PRE, agent=EVERY_AGENT, only=pending, session_id=sid)
        return answer
    finally:
        gate.chain.close()


def handle_post(text: str, *, storage: Path, policy: Policy) -> dict[str, Any]:
    """Record a ``PostToolUse`` (or ``PostToolUseFailure``) payload's outcome.

    The answer adds nothing to the host's transcript (:func:`~.hook_outcome.post_answer`).
    """
    payload = parse_payload(text, POST, POST_FAILURE)
    gate, inspection = open_gate(storage, payload, policy)
    try:
        pending = _pending_path(storage, payload)
        # taken for this post alone (a reconciliation cannot record the call too), else the
        # state of a call recorded as not run, yet it ran; checked against its seal
        taken = take(storage, payload.session_id, pending)
        duration_ms: float | None = None
        state: dict[str, Any] | None = None
        problem = "no pending file from a pre step"
        try:
            state = taken.state()
            duration_ms = max(0.0, (time.time() - float(state["started"])) * 1000.0)
            rate_hits = RateHits.from_json(state["rateHits"]) if "rateHits" in state else None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # no pre step seen: decide (and count) here
            if not isinstance(exc, OSError):
                problem = f"the pre step's pending file is unreadable ({type(exc).__name__})"
            state = None
            decision = gate.decide(payload.tool_name, payload.tool_input)
        else:
            # pre decided and counted the call already: record it as pre decided it
            decision = gate.redecide(payload.tool_name, payload.tool_input, rate_hits)
        background = runs_on(payload.tool_name, payload.tool_input, payload.tool_response)
        if inspection is not None and taken.broken is not None:
            problem = f"the pre step's pending file was {taken.broken} after pre sealed it"
            inspection.inspector.load(None, problem)  # what pre saw cannot be trusted
        elif inspection is not None and background is not None:
            inspection.inspector.load(None, background)  # what it does comes after this post
        elif inspection is not None:  # what changed since the last call too (``between``)
            resume(inspection.inspector, state, problem, (storage, payload.session_id, pending))
        carry_lifts(gate, state)  # a quarantine lifted since pre was lifted by the call
        status, error = response_status(payload.tool_response)
        ran: Status = "error" if status == "error" else "success"
        reported = Outcome(ran, payload.tool_response, error, duration_ms)
        # the host ran it: recorded as it ran, output and effects inspected, never as blocked
        # (no pre step, or other input than pre judged, keeps the refusal, marked)
        changed = input_changed(state, payload.tool_name, payload.tool_input)
        decision = ran_decision(decision, judged=state is not None, changed=changed)
        asked = state is not None and isinstance(state.get(ASKED_KEY), dict)
        if (asked or decision.evaluation.decision == ASK) and RAN_UNGUARDED not in decision.alerts:
            # the call ran, so the user approved it at the host's own prompt
            decision = host_approved(decision, state)
        host = HostWatch.look(storage, payload.session_id)  # the call's record holds a change
        extra = host.record_fields(payload.tool_use_id)
        with recording_only():  # the host ran it: recorded as it happened
            gated = gate.run(
                payload.tool_name,
                payload.tool_input,
                lambda _decision: reported,
                decision=decision,
                extra=extra or None,
            )
        # a change the call's own comparison did not see (before its pre, or no snapshot kept)
        after_call(host, storage, payload.session_id, state, inspection, policy=policy,
                   cwd=payload.cwd, event=payload.event, own=pending)  # fmt: skip
        if taken.broken is not None:
            record_broken(
                storage, payload.session_id, policy, payload.cwd, event=payload.event,
                key=pending_key(pending), how=taken.broken, tool=payload.tool_name,
            )  # fmt: skip
        # only now: a pre step in between counts this call from the pending file or the record
        taken.release(storage, payload.session_id, pending)
        return post_answer(payload.event, payload.tool_name, gated)
    finally:
        gate.chain.close()


def handle_permission_denied(text: str, *, storage: Path, policy: Policy) -> dict[str, Any]:
    """Record a call the host's auto mode denied (``PermissionDenied``): not run, ``reject`` by
    :data:`~.hook_asks.AUTO_MODE_APPROVER` with the host's reason. The answer never asks the
    host to retry: the denial stands."""
    payload = parse_payload(text, PERMISSION_DENIED)
    data, _ = read_payload(text, PERMISSION_DENIED)
    # the call never ran: a change since the last event is no call's
    check_between(storage, payload.session_id, policy=policy, cwd=payload.cwd, event=payload.event)
    reason = data.get("reason")
    why = f"the host's auto mode denied the call: {reason or 'no reason given'}"
    gate, _inspection = open_gate(storage, payload, policy)
    try:
        pending = _pending_path(storage, payload)
        taken = take(storage, payload.session_id, pending, settled=False)
        claimed = taken.source if taken.owned else None
        state: dict[str, Any] = {}
        if claimed is not None or taken.broken is not None:
            with contextlib.suppress(OSError, ValueError, TypeError):
                state = taken.state()
        state[ASKED_KEY] = asked_entry(
            "deny", payload.tool_name, payload.tool_input, payload.agent_id, payload.tool_use_id
        )
        if claimed is None and taken.broken is None:  # no pre step seen: decided here
            hits = gate.decide(payload.tool_name, payload.tool_input).rate_hits
            if hits is not None:
                state["rateHits"] = hits.to_json()
        refuse_asked(gate, state, Approval("reject", AUTO_MODE_APPROVER, why))
        if taken.broken is not None:
            record_broken(
                storage, payload.session_id, policy, payload.cwd, event=payload.event,
                key=pending_key(pending), how=taken.broken, tool=payload.tool_name,
            )  # fmt: skip
        taken.release(storage, payload.session_id, pending)
        return {"hookSpecificOutput": {"hookEventName": PERMISSION_DENIED, "retry": False}}
    finally:
        gate.chain.close()


def _pre_answer(
    decision: str, reason: str, answers: PreAnswers, payload: HookPayload
) -> dict[str, Any]:
    """The ``PreToolUse`` answer for a call the gate let through.

    ``warn`` asks the user (the host shows the reason in its prompt) or, in ``pass`` mode,
    leaves the decision to the host; either way the model reads the warning. A dry-run
    ``deny`` leaves the decision to the host and tells the user; ``allow`` says nothing, so
    the host's own permission rules and prompts still apply (unless ``approve_allowed``, and
    never for a tool that asks the user something: the host takes an ``allow`` for it only
    with the user's answer in ``updatedInput``; nor in a permission mode outside
    :data:`APPROVING_MODES`; a payload naming no mode is taken as ``default``).
    """
    if decision == "warn":
        warning = f"{_TAG} {reason}"
        if answers.warn == "pass":
            return {
                "hookSpecificOutput": {"hookEventName": PRE, "additionalContext": warning},
                "systemMessage": warning,
            }
        return {
            "hookSpecificOutput": {
                "hookEventName": PRE,
                "permissionDecision": "ask",
                "permissionDecisionReason": warning,
                "additionalContext": warning,
            }
        }
    if decision == "deny":
        return {"systemMessage": f"{_TAG} dry run, would deny: {reason}"}
    mode = "default" if payload.permission_mode is None else payload.permission_mode
    if (
        answers.approve_allowed
        and payload.tool_name not in USER_INPUT_TOOLS
        and mode in APPROVING_MODES
    ):
        return {"hookSpecificOutput": {"hookEventName": PRE, "permissionDecision": "allow"}}
    return {}


def host_ask(reason: str) -> dict[str, Any]:
    """The ``PreToolUse`` answer for a call a rule decided ``ask``: the host's own prompt."""
    text = f"[web4-approval] {reason}"
    return {
        "hookSpecificOutput": {
            "hookEventName": PRE,
            "permissionDecision": "ask",
            "permissionDecisionReason": text,
        }
    }
