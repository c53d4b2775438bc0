"""The host's own permission prompt: Claude Code's ``PermissionRequest`` event.

The host fires ``PermissionRequest`` when it is about to show its permission dialog, for a call
``hook pre`` asked about or for one its own permission rules ask about (pre answered nothing).
``hook permission-request`` never answers for the user: it marks the call's pending file as
asked (:mod:`.hook_asks`), so whatever the user answers gets its one outcome record, and
answers ``{}`` (the dialog is shown). One exception: when an approver's ``terminate`` ended the
session since pre (in any process sharing the store), it answers ``deny`` with the reason and
records the refusal, so the user is never asked to approve a call of an ended session. When the
hook itself fails it denies too (:func:`fail_closed_answer`): the host does not honour exit code
2 at this event, only the ``decision`` object.

A call no pre step judged (the host went on after ``hook pre`` timed out, or another hook's
``updatedInput`` rewrote it, so no pending file holds this input) is judged here: one the policy
refuses is denied and its refusal recorded, as pre would have, instead of being left to the
dialog; any other is left to the dialog (its post, if it runs, records it).

Like every event, it compares the host's settings with the last state the chain holds
(:mod:`.hook_host_settings`); a change found here came before the call ran, so it is taken out
of the call's own comparison (the state the pending file keeps moves on to now).

The payload has no ``tool_use_id``: the pending file is found by the call's tool and input.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from pytest_harness_audit.doors.hook import open_gate, parse_payload
from pytest_harness_audit.doors.hook_asks import (
    ASKED_KEY,
    asked_entry,
    call_key,
    claim,
    find_pending,
    sealed_facts,
    state_text,
    write_state,
)
from pytest_harness_audit.doors.hook_effects import HOST_SETTINGS_KEY, PENDING_KEY
from pytest_harness_audit.doors.hook_host_project import PERMISSIONS_KEY, is_permissions
from pytest_harness_audit.doors.hook_host_settings import HostWatch, check_between
from pytest_harness_audit.doors.hook_outcome import stop_if_ended
from pytest_harness_audit.doors.hook_pending_seal import (
    pending_key,
    read_bytes,
    read_seal,
    seal,
    unseal,
)
from pytest_harness_audit.doors.hook_unfinished import NO_USE_ID
from pytest_harness_audit.gate.approvals import ended
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.ratelimit import RateHits

PERMISSION_REQUEST = "PermissionRequest"
#: What an asked call's pending file says when the host's own rules asked (pre said nothing).
HOST_ASKED = "host"


def handle_permission_request(text: str, *, storage: Path, policy: Policy) -> dict[str, Any]:
    """Answer a ``PermissionRequest`` payload: ``{}`` (the host asks the user), or ``deny`` for a
    call of a session an approver ended."""
    payload = parse_payload(text, PERMISSION_REQUEST)
    host = check_between(
        storage, payload.session_id, policy=policy, cwd=payload.cwd, event=payload.event
    )
    pending = find_pending(
        storage, payload.session_id, call_key(payload.tool_name, payload.tool_input)
    )
    claimed = claim(pending) if pending is not None else None
    gate, _inspection = open_gate(storage, payload, policy)
    try:
        state: dict[str, Any] = {}
        data = read_bytes(claimed)
        if data is not None:
            with contextlib.suppress(ValueError):
                loaded = json.loads(data)
                state = loaded if isinstance(loaded, dict) else {}
        if gate.approvals.read_terminated(gate.chain.path) is not None:
            hits = RateHits.from_json(state["rateHits"]) if "rateHits" in state else None
            decision = ended(gate, gate.redecide(payload.tool_name, payload.tool_input, hits))
            gate.refuse(decision, extra=NO_USE_ID)
            if claimed is not None and pending is not None:
                unseal(storage, payload.session_id, [pending_key(pending)])
                with contextlib.suppress(OSError):
                    claimed.unlink()
                claimed = None
            return _deny(decision.message, stop_if_ended(decision))
        if pending is None:
            # no pre step judged this input: the host went on after pre timed out, or runs
            # another hook's ``updatedInput``. Left to the dialog, the user could run what the
            # policy refuses (exit 2 is ignored here: only the decision object denies)
            decision = gate.decide(payload.tool_name, payload.tool_input)
            if decision.blocked:
                gate.refuse(decision, extra=NO_USE_ID)
                return _deny(decision.message, stop_if_ended(decision))
        if claimed is not None and state:
            rebased = _rebase(state.get(PENDING_KEY), host)
            if not isinstance(state.get(ASKED_KEY), dict):
                entry = asked_entry(
                    HOST_ASKED, payload.tool_name, payload.tool_input, payload.agent_id, None
                )
                # the asked entry before the snapshot: a reconciliation reads only the file's head
                marked = {key: value for key, value in state.items() if key != PENDING_KEY}
                marked[ASKED_KEY] = entry
                if PENDING_KEY in state:
                    marked[PENDING_KEY] = state[PENDING_KEY] if rebased is None else rebased
                _rewrite(storage, payload.session_id, claimed, data, marked)
            elif rebased is not None:
                rewritten = {**state, PENDING_KEY: rebased}
                _rewrite(storage, payload.session_id, claimed, data, rewritten)
        return {}
    finally:
        if claimed is not None and pending is not None:
            os.replace(claimed, pending)  # back for the call's post step or a reconciliation
        gate.chain.close()


def _rewrite(
    storage: Path, session_id: str, claimed: Path, before: bytes | None, state: dict[str, Any]
) -> None:
    """Write the claimed pending file anew, its new bytes sealed first when the seal covers
    what it held (one changed behind its seal keeps that seal: its post notes the change)."""
    pending = claimed.with_name(claimed.name.replace(".claimed.json", ".json"))
    text = state_text(state)
    sealed = read_seal(storage, session_id, pending)
    if sealed is not None and sealed.holds(before):
        seal(storage, session_id, pending, text, sealed_facts(state))
    write_state(claimed, text)


def _rebase(kept: Any, host: HostWatch) -> dict[str, Any] | None:
    """What pre kept of the workspace, its host settings (and the project settings'
    ``permissions``) moved on to now for the names changed since the chain's last state
    (recorded here already, not the call's); ``None``: nothing moved."""
    settings = kept.get(HOST_SETTINGS_KEY) if isinstance(kept, dict) else None
    if not isinstance(kept, dict) or not isinstance(settings, dict) or host.now is None:
        return None
    moved = {name: host.now[name] for name in host.changed if name in settings}
    rebased = {**kept, HOST_SETTINGS_KEY: {**settings, **moved}}
    for name in host.changed:  # the project settings' ``permissions``, kept apart
        if is_permissions(name) and PERMISSIONS_KEY in kept:
            rebased[PERMISSIONS_KEY] = host.now[name]
    return rebased if rebased != kept else None


def _deny(message: str, more: dict[str, Any]) -> dict[str, Any]:
    """The ``PermissionRequest`` answer that denies the call, telling the model ``message``."""
    return {
        "hookSpecificOutput": {
            "hookEventName": PERMISSION_REQUEST,
            "decision": {"behavior": "deny", "message": message},
        },
        **more,
    }


def fail_closed_answer(problem: str) -> dict[str, Any]:
    """The ``PermissionRequest`` answer when the hook itself failed: deny, naming the problem
    (the host ignores exit code 2 here, and reads the ``decision`` object on exit 0)."""
    return {
        "hookSpecificOutput": {
            "hookEventName": PERMISSION_REQUEST,
            "decision": {
                "behavior": "deny",
                "message": f"[web4-policy] hook failed, permission denied: {problem}",
            },
        }
    }


__all__ = ["HOST_ASKED", "PERMISSION_REQUEST", "fail_closed_answer", "handle_permission_request"]
