"""The host's own permission prompt: Claude Code's ``PermissionRequest`` event.

The host fires ``PermissionRequest`` when it is about to show its permission dialog, for a call
``hook pre`` asked about or for one its own permission rules ask about (pre answered nothing).
``hook permission-request`` never answers for the user: it marks the call's pending file as
asked (:mod:`.hook_asks`), so whatever the user answers gets its one outcome record, and
answers ``{}`` (the dialog is shown). One exception: when an approver's ``terminate`` ended the
session since pre (in any process sharing the store), it answers ``deny`` with the reason and
records the refusal, so the user is never asked to approve a call of an ended session.

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
    write_state,
)
from pytest_harness_audit.doors.hook_effects import PENDING_KEY
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
    pending = find_pending(
        storage, payload.session_id, call_key(payload.tool_name, payload.tool_input)
    )
    claimed = claim(pending) if pending is not None else None
    gate, _inspection = open_gate(storage, payload, policy)
    try:
        state: dict[str, Any] = {}
        if claimed is not None:
            with contextlib.suppress(OSError, ValueError):
                loaded = json.loads(claimed.read_text(encoding="utf-8"))
                state = loaded if isinstance(loaded, dict) else {}
        if gate.approvals.read_terminated(gate.chain.path) is not None:
            hits = RateHits.from_json(state["rateHits"]) if "rateHits" in state else None
            decision = ended(gate, gate.redecide(payload.tool_name, payload.tool_input, hits))
            gate.refuse(decision)
            if claimed is not None:
                with contextlib.suppress(OSError):
                    claimed.unlink()
                claimed = None
            return {
                "hookSpecificOutput": {
                    "hookEventName": PERMISSION_REQUEST,
                    "decision": {"behavior": "deny", "message": decision.message},
                }
            }
        if claimed is not None and state and not isinstance(state.get(ASKED_KEY), dict):
            entry = asked_entry(
                HOST_ASKED, payload.tool_name, payload.tool_input, payload.agent_id, None
            )
            # the asked entry before the snapshot: a reconciliation reads only the file's head
            marked = {key: value for key, value in state.items() if key != PENDING_KEY}
            marked[ASKED_KEY] = entry
            if PENDING_KEY in state:
                marked[PENDING_KEY] = state[PENDING_KEY]
            write_state(claimed, marked)
        return {}
    finally:
        if claimed is not None and pending is not None:
            os.replace(claimed, pending)  # back for the call's post step or a reconciliation
        gate.chain.close()


__all__ = ["HOST_ASKED", "PERMISSION_REQUEST", "handle_permission_request"]
