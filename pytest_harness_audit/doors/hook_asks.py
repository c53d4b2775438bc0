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

Every pending file is sealed (:mod:`.hook_pending_seal`): a reconciliation records an asked
call from a file whose bytes its seal covers, and notes one changed or removed behind it; the
settled state it keeps is sealed in turn, for the late post step.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.atomic_file import replace_file
from pytest_harness_audit.audit.canonical import sha256_hex
from pytest_harness_audit.audit.storage import sanitize_session_id
from pytest_harness_audit.doors.hook_pending_seal import (
    Seal,
    pending_key,
    read_bytes,
    read_seal,
    read_seals,
    record_broken,
    seal,
    unseal,
)
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.approvals import Approval, recording_only, settle
from pytest_harness_audit.policy.ratelimit import RateHits

#: The pending file's key for an asked call: ``{"answer": "ask"|"warn", "tool", "input",
#: "agentId", "toolUseId"}``.
ASKED_KEY = "asked"
#: The pending file's count of the lifts others had recorded when pre decided the call.
LIFTS_KEY = "liftsSeen"
#: The approver id of the host's own prompt (the user at it) and of a reconciled ask.
HOST_APPROVER = "host"
#: The approver id of a call the host's auto mode classifier denied (``PermissionDenied``).
AUTO_MODE_APPROVER = "host:auto-mode"
#: Why a reconciled ask is recorded as not run (the event that reconciled it follows).
UNANSWERED = (
    "no post event arrived: the host did not run the call (its prompt was refused or cancelled)"
)
#: The host's permission mode that never prompts: it refuses every call it would ask about.
NEVER_ASKS = "dontAsk"
#: The approver id of a call the host refused unasked in :data:`NEVER_ASKS` mode, and why.
NEVER_ASKS_APPROVER = "host:dontAsk"
REFUSED_UNASKED = "the host's dontAsk permission mode refuses every call it would ask about"
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


def state_text(state: Mapping[str, Any]) -> str:
    """A pending state as its file holds it."""
    return json.dumps(state, separators=(",", ":"))  # one C-encoded string


def write_state(path: Path, state: Mapping[str, Any] | str) -> str:
    """Write a pending file whole or not at all: a pre counting calls in flight, or the post,
    never reads half of it. ``state`` may be its :func:`state_text` already; returns that."""
    text = state if isinstance(state, str) else state_text(state)
    replace_file(path, text.encode("utf-8"))
    return text


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
    answer: str,
    tool: str,
    tool_input: Mapping[str, Any],
    agent_id: str | None,
    use_id: str | None,
    mode: str | None = None,
) -> dict[str, Any]:
    """The :data:`ASKED_KEY` part of an asked call's pending file (``mode``: the host's
    permission mode, kept when it is :data:`NEVER_ASKS`)."""
    entry = {
        "answer": answer,
        "tool": tool,
        "input": dict(tool_input),
        "agentId": agent_id,
        "toolUseId": use_id,
    }
    if mode == NEVER_ASKS:
        entry["mode"] = mode
    return entry


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
    gate: Gate,
    storage: Path,
    *,
    event: str,
    agent: str | None,
    skip: Path | None = None,
    session_id: str | None = None,
    only: Path | None = None,
) -> int:
    """Record the session's asked calls left without an outcome as not run (``reject`` by
    :data:`HOST_APPROVER`, or by :data:`NEVER_ASKS_APPROVER` for a call asked in the mode that
    never asks); ``agent``: whose asks (:data:`EVERY_AGENT`: all); ``only``: this call's
    pending file alone. Return how many.

    ``session_id``: the payload's (the gate's chain knows it only as a file name), whose
    witness holds the seals; a file changed behind its seal is noted, not recorded from."""
    sid = session_id or gate.chain.session_id
    folder = storage / "pending" / sanitize_session_id(gate.chain.session_id)
    done = 0
    asked = _unanswered(folder, agent, skip)
    for pending in asked if only is None else (p for p in asked if p == only):
        claimed = claim(pending)
        if claimed is None:
            continue  # its post step, or another reconciliation, has it
        data, key = read_bytes(claimed), pending_key(pending)
        sealed = read_seal(storage, sid, pending)
        broken = None if sealed is None else sealed.broken(data)
        if broken is not None:
            unseal(storage, sid, [key])
            record_broken(storage, sid, gate.policy, gate.root, event=event, key=key, how=broken)
            with contextlib.suppress(OSError):
                claimed.unlink()
            continue
        try:
            if data is None:
                raise FileNotFoundError(claimed)
            state = json.loads(data.decode("utf-8"))
            record = refuse_asked(gate, state, _refusal(state, event))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # unreadable: left for the session events to clean
        settled = {**state, "settledRecord": record["recordId"]}
        text = state_text(settled)
        if sealed is not None:  # sealed before it is written: a late post finds it covered
            seal(storage, sid, pending, text, sealed_facts(settled))
        write_state(settled_path(pending), text)
        with contextlib.suppress(OSError):
            claimed.unlink()
        done += 1
    return done


def _refusal(state: Mapping[str, Any], event: str) -> Approval:
    """Who refused an asked call that did not run: the mode that never asks, else the user."""
    if state[ASKED_KEY].get("mode") == NEVER_ASKS:
        return Approval("reject", NEVER_ASKS_APPROVER, f"{REFUSED_UNASKED}; recorded at {event}")
    return Approval("reject", HOST_APPROVER, f"{UNANSWERED}; reconciled at {event}")


#: The facts of a pending state a seal keeps beside its hash (the asked entry without its input).
_FACTS = ("call", "started", "rateHits", "settledRecord")


def sealed_facts(state: Mapping[str, Any]) -> dict[str, Any]:
    """What a seal keeps of a pending ``state``: enough to record its call as pre decided it
    (rate hits, start, whether the host asked) when the file cannot be trusted."""
    facts = {key: state[key] for key in _FACTS if key in state}
    asked = state.get(ASKED_KEY)
    if isinstance(asked, Mapping):
        facts[ASKED_KEY] = {k: asked.get(k) for k in ("answer", "tool", "agentId", "toolUseId")}
    return facts


@dataclass(frozen=True)
class Taken:
    """A call's pending file as the step recording its outcome took it (:func:`take`)."""

    #: The file read (``None``: none found).
    source: Path | None
    data: bytes | None
    #: Its seal (``None``: no pre step sealed one).
    seal: Seal | None
    #: The step took the file for itself (its claim, or the settled state): it removes it.
    owned: bool

    @property
    def broken(self) -> str | None:
        """``changed`` or ``removed`` behind its seal (``None``: as sealed, or no seal)."""
        return None if self.seal is None else self.seal.broken(self.data)

    def state(self) -> dict[str, Any]:
        """The pending state the call is recorded by: behind a broken seal, the sealed facts;
        else the file's (``OSError``: there is none; ``ValueError``, ``TypeError``: not a
        pending state)."""
        if self.seal is not None and self.broken is not None:
            return dict(self.seal.facts)
        if self.data is None:
            raise FileNotFoundError("no pending file")
        state = json.loads(self.data.decode("utf-8"))
        if not isinstance(state, dict):
            raise TypeError("not an object")
        return state

    def release(self, storage: Path, session_id: str, pending: Path) -> None:
        """The call is recorded: drop its seal, then its file (never a seal without its file:
        the session's end would take that for a removal)."""
        if self.owned or self.broken is not None:
            unseal(storage, session_id, [pending_key(pending)])
        if self.owned and self.source is not None:
            with contextlib.suppress(OSError):
                self.source.unlink()


def take(storage: Path, session_id: str, pending: Path, *, settled: bool = True) -> Taken:
    """Claim a call's pending file (else, with ``settled``, read its settled state) and its
    seal, read after the bytes (a rewrite seals its new hash before it writes). A sealed call
    whose file another step holds (a reconciliation under way) is read where it is."""
    claimed = claim(pending)
    source = claimed or (settled_path(pending) if settled else None)
    data = read_bytes(source)
    sealed = read_seal(storage, session_id, pending)
    if claimed is not None:
        return Taken(claimed, data, sealed, True)
    if data is None and sealed is not None:
        held = pending.with_name(pending_key(pending) + _CLAIMED)
        other = read_bytes(held)
        if other is not None and sealed.holds(other):
            return Taken(held, other, sealed, False)
    return Taken(source if data is not None else None, data, sealed, data is not None)


def check_seals(storage: Path, session_id: str) -> list[tuple[str, str]]:
    """Compare the session's seals left (calls whose post never came) with their files, drop
    them, and return ``(key, changed|removed)`` for those that do not hold (the session's
    start and end, before its pending files are cleaned)."""
    seals = read_seals(storage, session_id)
    folder = storage / "pending" / sanitize_session_id(session_id)
    broken: list[tuple[str, str]] = []
    for key, sealed in sorted(seals.items()):
        names = (f"{key}.json", key + _CLAIMED, key + _SETTLED)
        found = [data for data in map(read_bytes, (folder / n for n in names)) if data is not None]
        if not any(sealed.holds(data) for data in found):
            broken.append((key, "changed" if found else "removed"))
    unseal(storage, session_id, seals)
    return broken


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
    "Taken",
    "any_asked",
    "asked_entry",
    "call_key",
    "check_seals",
    "claim",
    "find_pending",
    "pending_path",
    "reconcile",
    "refuse_asked",
    "sealed_facts",
    "settled_path",
    "state_text",
    "take",
    "write_state",
]


def note_lifts(gate: Gate, state: dict[str, Any]) -> None:
    """Keep in a call's pending ``state`` the lifts others had recorded when pre decided it
    (:mod:`~pytest_harness_audit.gate.lift_watch`)."""
    if gate.lift_watch is not None:
        state[LIFTS_KEY] = gate.lift_watch.seen()


def carry_lifts(gate: Gate, state: Mapping[str, Any] | None) -> None:
    """Compare a call's post step with the lifts its pre step saw: one since is the call's."""
    seen = (state or {}).get(LIFTS_KEY)
    if gate.lift_watch is not None and type(seen) is int:
        gate.lift_watch.carry(seen)
