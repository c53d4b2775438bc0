"""A hook post step that could not be recorded as a call: its fault note.

The tool has run (or the host refused it), and the payload could not be recorded as the call:
a ``note`` record of the problem (status ``error``) goes into the payload's session, found even
when the payload as a whole cannot be parsed (too deep, broken inside), and the raw text is
scanned for the project's known secrets, since the agent received it uninspected. The verdict
counts such a note (``unrecorded-outcome``: WARN, FAIL with a secret).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pytest_harness_audit.doors.chain_faults import open_gate as open_session_gate
from pytest_harness_audit.doors.hook_effects import workspace_root
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.inspect import Inspector
from pytest_harness_audit.policy import Policy

#: The host events a fault note may stand for (``PostToolUse`` when the payload does not say).
POST_EVENTS = ("PostToolUse", "PostToolUseFailure", "PermissionDenied")


def record_post_fault(text: str, *, storage: Path, policy: Policy, problem: str) -> bool:
    """A post payload that could not be recorded as a call: a ``note`` record of the problem
    (status ``error``) in its session, when the payload names one. True when recorded."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # too deep, or broken inside: the fields it names first
        data = _leading_fields(text)
    session_id = data.get("session_id") if isinstance(data, dict) else None
    if not isinstance(session_id, str) or not session_id:
        return False
    event = data.get("hook_event_name")
    tool = event if isinstance(event, str) and event in POST_EVENTS else POST_EVENTS[0]
    cwd = data.get("cwd")
    root = workspace_root(cwd if isinstance(cwd, str) else None)
    gate = open_session_gate(storage_dir=storage, session_id=session_id, policy=policy, door="hook")
    try:
        params = {"problem": problem}
        decision = gate.unjudged(tool, "hook", params, target=None, kind="note")
        if root is not None and os.path.isdir(root):
            # the call ran, and its response was never inspected: a known secret in the raw
            # text is still a secret the agent received
            with Inspector(root, live=False) as inspector:
                decision.alerts = (*decision.alerts, *inspector.scan_output(text).alerts)
        gate.run(tool, params, lambda _decision: Outcome("error", None, problem), decision=decision)
    finally:
        gate.chain.close()
    return True


_LEADING_FIELD = re.compile(r'"(session_id|hook_event_name|cwd)"\s*:\s*("(?:[^"\\]|\\.){0,4096}")')


def _leading_fields(text: str) -> dict[str, Any]:
    """The payload's ``session_id``, ``hook_event_name`` and ``cwd`` where the payload as a
    whole cannot be parsed: the first occurrence of each (the host writes them before the tool's
    input and response)."""
    found: dict[str, Any] = {}
    for match in _LEADING_FIELD.finditer(text[: 1 << 16]):
        name = match.group(1)
        if name not in found:
            try:
                found[name] = json.loads(match.group(2))
            except ValueError:
                continue
    return found
