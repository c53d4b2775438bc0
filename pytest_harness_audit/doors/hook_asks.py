"""The host's asks: every call the host asks the user about gets exactly one outcome record.

The host shows its own prompt when ``hook pre`` answers ``permissionDecision: "ask"`` (a rule
decided ``ask``, or a warned call in ``--warn ask`` mode), and when its own permission rules ask
(``PermissionRequest`` marks those calls, :mod:`.hook_prompt`). A call the user approves runs,
and its ``PostToolUse`` (or ``PostToolUseFailure``) records it with the approval. A call the
user refuses gets no event at all: the host sends no post event, and ``PermissionDenied`` fires
only for its auto mode's denials. So the pending file pre leaves for an asked call says so
(:data:`ASKED_KEY`, with the call), and the next event that proves the ask is over records the
call as not run, ``reject`` by :data:`HOST_APPROVER` with the reason :data:`UNANSWERED`:

* the next ``PreToolUse`` of the same agent (the main one, or the same subagent): the host
  handles a refusal before the agent's next call;
* ``Stop`` (the turn is over), ``SessionStart`` (a resumed session) and ``SessionEnd``: every
  ask of the session.

Pending files are claimed by renaming (``<key>.claimed.json``), so a post step and a
reconciliation never both record one call. The reconciled state is kept as ``<key>.settled``
(with the record's id): should the host run the call after all (a post event arriving late,
possible only for calls the host ran in parallel), the post step records what ran with
``approval.supersedes`` naming the record it corrects.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.canonical import sha256_hex
from pytest_harness_audit.audit.storage import sanitize_session_id
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.approvals import Approval, recording_only, settle
from pytest_harness_audit.policy.ratelimit import RateHits

#: The pending file's key for an asked call: ``{"answer": "ask"|"warn", "tool", "input",
#: "agentId", "toolUseId"}``.
ASKED_KEY = "asked"
#: The approver id of the host's own prompt (the user at it) and of a reconciled ask.
HOST_APPROVER = "host"
#: The approver id of a call the host's auto mode classifier denied (``PermissionDenied``).
AUTO_MODE_APPROVER = "host:auto-mode"
#: Why a reconciled ask is recorded as not run (the event that reconciled it follows).
UNANSWERED = (
    "no post event arrived: the host did not run the call (its prompt was refused or cancelled)"
)
#: Reconcile the asks of every agent of the session (``Stop`` and the session events).
EVERY_AGENT = "*"
_CLAIMED = ".claimed.json"
#: An asked call's pending file names it near its head (before any workspace snapshot).
_ASKED_MARK = f'"{ASKED_KEY}":'.encode()
_HEAD = 4096
_SETTLED = ".settled"


def pending_path(
    storage: Path, session_id: str, tool: str, tool_input: Mapping[str, Any], use_id: str | None
) -> Path:
    """``pending/<session>/<key>.json`` of a call: its ``tool_use_id``, else a hash of it."""
    key = use_id or call_key(tool, tool_input)
    return (
        storage / "pending" / sanitize_session_id(session_id) / f"{sanitize_session_id(key)}.json"
    )


def call_key(tool: str, tool_input: Mapping[str, Any]) -> str:
    """A call's tool and input as a short hash (a ``PermissionRequest`` carries no
    ``tool_use_id``: it finds its call's pending file by this, kept as its ``call``)."""
    return sha256_hex(json.dumps([tool, tool_input], sort_keys=True))[:32]


def find_pending(storage: Path, session_id: str, key: str) -> Path | None:
    """The unclaimed pending file of the call whose :func:`call_key` is ``key``, if any."""
    folder = storage / "pending" / sanitize_session_id(session_id)
    mark = f'"call":"{key}"'.encode()
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return None
    for entry in entries:
        name = entry.name
        if not name.endswith(".json") or name.endswith(_CLAIMED) or name.startswith("."):
            continue
        try:
            with open(entry.path, "rb") as handle:
                if mark in handle.read(_HEAD):
                    return Path(entry.path)
        except OSError:
            continue
    return None


def write_state(path: Path, state: Mapping[str, Any]) -> None:
    """Write a pending file whole or not at all: a pre counting calls in flight, or the post,
    never reads half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(json.dumps(state, separators=(",", ":")))  # one C-encoded string
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def claim(pending: Path) -> Path | None:
    """Take the pending file for this process (``None``: it is gone, or another has it)."""
    claimed = pending.with_name(pending.name.removesuffix(".json") + _CLAIMED)
    try:
        os.rename(pending, claimed)
    except OSError:
        return None
    return claimed


def settled_path(pending: Path) -> Path:
    """Where a reconciled call's state is kept (see the module doc)."""
    return pending.with_name(pending.name.removesuffix(".json") + _SETTLED)


def asked_entry(
    answer: str, tool: str, tool_input: Mapping[str, Any], agent_id: str | None, use_id: str | None
) -> dict[str, Any]:
    """The :data:`ASKED_KEY` part of an asked call's pending file."""
    return {
        "answer": answer,
        "tool": tool,
        "input": dict(tool_input),
        "agentId": agent_id,
        "toolUseId": use_id,
    }


def _unanswered(folder: Path, agent: str | None, skip: Path | None) -> Iterator[Path]:
    """The pending files of asked calls in ``folder`` of ``agent`` (or :data:`EVERY_AGENT`)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if not name.endswith(".json") or name.endswith(_CLAIMED) or name.startswith("."):
            continue
        if skip is not None and entry.path == os.fspath(skip):
            continue
        try:
            with open(entry.path, "rb") as handle:
                if _ASKED_MARK not in handle.read(_HEAD):
                    continue  # not asked: its pending file need not be read whole
                handle.seek(0)
                asked = json.loads(handle.read()).get(ASKED_KEY)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(asked, dict) and (agent == EVERY_AGENT or asked.get("agentId") == agent):
            yield Path(entry.path)


def any_asked(storage: Path, session_id: str) -> bool:
    """Whether the session has asked calls left without an outcome (cheap: no gate opened)."""
    folder = storage / "pending" / sanitize_session_id(session_id)
    return next(_unanswered(folder, EVERY_AGENT, None), None) is not None


def reconcile(
    gate: Gate, storage: Path, *, event: str, agent: str | None, skip: Path | None = None
) -> int:
    """Record the session's asked calls left without an outcome as not run (``reject`` by
    :data:`HOST_APPROVER`); ``agent``: whose asks (:data:`EVERY_AGENT`: all). Return how many."""
    folder = storage / "pending" / sanitize_session_id(gate.chain.session_id)
    done = 0
    for pending in _unanswered(folder, agent, skip):
        claimed = claim(pending)
        if claimed is None:
            continue  # its post step, or another reconciliation, has it
        try:
            state = json.loads(claimed.read_text(encoding="utf-8"))
            reason = f"{UNANSWERED}; reconciled at {event}"
            record = refuse_asked(gate, state, Approval("reject", HOST_APPROVER, reason))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # unreadable: left for the session events to clean
        write_state(settled_path(pending), {**state, "settledRecord": record["recordId"]})
        with contextlib.suppress(OSError):
            claimed.unlink()
        done += 1
    return done


def refuse_asked(gate: Gate, state: Mapping[str, Any], approval: Approval) -> dict[str, Any]:
    """Record the asked call of a pending ``state`` as not run, answered by ``approval``."""
    asked = state[ASKED_KEY]
    tool, params = str(asked["tool"]), asked["input"]
    if not isinstance(params, Mapping):
        raise TypeError("the asked call's input is not an object")
    hits = RateHits.from_json(state["rateHits"]) if "rateHits" in state else None
    decision = settle(gate.redecide(tool, params, hits), approval)
    with recording_only():  # the host did not run it: recorded as it happened
        return gate.refuse(decision).record


__all__ = [
    "ASKED_KEY",
    "AUTO_MODE_APPROVER",
    "EVERY_AGENT",
    "HOST_APPROVER",
    "UNANSWERED",
    "any_asked",
    "asked_entry",
    "call_key",
    "claim",
    "find_pending",
    "pending_path",
    "reconcile",
    "refuse_asked",
    "settled_path",
    "write_state",
]
