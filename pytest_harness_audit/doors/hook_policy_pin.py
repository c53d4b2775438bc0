"""The policy a hook session runs under, pinned by its start.

Every hook event is a process of its own that loads the policy again from ``--policy FILE``.
The gate refuses a call that names that file, but a program can build its name at run time and
rewrite it to allow everything; the next events would then judge, and the session end report,
under the new policy, and a secret read afterwards would pass. So the ``SessionStart`` record
of each run of the session (the first one, or the first after a ``SessionEnd``: a resumed
session may run under a policy the user changed since) pins the policy by its ``policyHash``,
and every later event compares the policy it loaded with the pin:

* the same: nothing to do;
* another: the change is a ``note`` (:data:`~pytest_harness_audit.readers.verdict.
  POLICY_CHANGED`, once per new policy) that fails the verdict (``policy-changed``); the event
  goes on under the pinned policy, read from the session's own copy beside its chain when that
  copy still hashes to the pin. Without such a copy a ``pre`` (or ``permission-request``)
  refuses its call; the other events go on under the policy loaded.

A session with no ``SessionStart`` in its chain has no pin: nothing is compared.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.doors.chain_faults import open_gate as open_session_gate
from pytest_harness_audit.doors.hook_continuity import HookEvent
from pytest_harness_audit.doors.hook_host_digest import marked_records
from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.gate.session_policy import load_session_policy
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import POLICY_CHANGED

_START, _END = "SessionStart", "SessionEnd"
_MARKS = (b'"policyHash"', f'"{_END}"'.encode(), f'"{POLICY_CHANGED}"'.encode())


class PolicyChangedError(HarnessAuditError):
    """The policy changed since the session started and its pinned copy is gone."""


@dataclass(frozen=True)
class PolicyPin:
    """What a session's chain says of its policy."""

    #: The ``policyHash`` of the start of the current run (``None``: no start recorded).
    policy_hash: str | None = None
    #: The last session event is a ``SessionEnd``: the next start pins afresh.
    ended: bool = False
    #: The policies already noted as changed in the current run.
    noted: frozenset[str] = frozenset()

    @classmethod
    def of(cls, records: Iterable[Mapping[str, Any]]) -> PolicyPin:
        """Read from the session's records, oldest first."""
        pin = cls()
        for record in records:
            tool = record.get("tool")
            if record.get("kind") == "session" and tool == _START:
                part = record.get("session")
                value = part.get("policyHash") if isinstance(part, Mapping) else None
                if pin.policy_hash is None or pin.ended:
                    pin = PolicyPin(value if isinstance(value, str) else None)
                else:
                    pin = PolicyPin(pin.policy_hash, False, pin.noted)
            elif record.get("kind") == "session" and tool == _END:
                pin = PolicyPin(pin.policy_hash, True, pin.noted)
            elif record.get("kind") == "note" and tool == POLICY_CHANGED:
                details = record.get(POLICY_FIELD)
                new = details.get("now") if isinstance(details, Mapping) else None
                if isinstance(new, str):
                    pin = PolicyPin(pin.policy_hash, pin.ended, pin.noted | {new})
        return pin

    @classmethod
    def read(cls, storage: str | os.PathLike[str], session_id: str) -> PolicyPin:
        """Read from the stored chain (only the lines that may matter are parsed)."""
        path = StorageLayout.at(storage).paths(session_id).chain
        return cls.of(marked_records(path, _MARKS))


#: The field of a ``PolicyChanged`` note: the pinned and the loaded policy hashes.
POLICY_FIELD = "policyChange"


def pinned_policy(storage: Path, policy: Policy, text: str, *, refuse: bool) -> Policy:
    """The policy the event of ``text`` runs under (see the module doc).

    ``refuse``: the event gates a call, which is refused (:class:`PolicyChangedError`) when
    the policy changed and the session's pinned copy is gone.
    """
    event = HookEvent.parse(text)
    if event is None:
        return policy
    pin = PolicyPin.read(storage, event.session_id)
    if pin.policy_hash is None or pin.policy_hash == policy.content_hash:
        return policy
    if event.event == _START and pin.ended:
        return policy  # a resumed session: the user's changes after its end do not count
    kept = _pinned_copy(storage, event.session_id, pin.policy_hash)
    if policy.content_hash not in pin.noted:
        _note(storage, event, kept or policy, pin.policy_hash, policy.content_hash)
    if kept is not None:
        return kept
    if refuse:
        raise PolicyChangedError(
            f"the policy changed since session {event.session_id} started (now "
            f"{policy.content_hash[:12]}, started under {pin.policy_hash[:12]}) and the "
            "session's copy of it is gone: call refused"
        )
    return policy


def _pinned_copy(storage: Path, session_id: str, policy_hash: str) -> Policy | None:
    try:
        kept = load_session_policy(storage, session_id)
    except (HarnessAuditError, OSError, ValueError, KeyError, TypeError):
        return None
    return kept if kept is not None and kept.content_hash == policy_hash else None


def _note(storage: Path, event: HookEvent, policy: Policy, pinned: str, now: str) -> None:
    reason = (
        f"the policy changed during the session (seen at {event.event}): it started under "
        f"{pinned[:12]}, the hooks now load {now[:12]}"
    )
    gate = open_session_gate(
        storage_dir=storage, session_id=event.session_id, policy=policy, root=event.cwd,
        door="hook",
    )  # fmt: skip
    try:
        details = {"event": event.event}
        decision = gate.unjudged(POLICY_CHANGED, "hook", details, target=None, kind="note")
        gate.run(
            POLICY_CHANGED,
            details,
            lambda _decision: Outcome("error", None, reason),
            extra={POLICY_FIELD: {"pinned": pinned, "now": now}},
            decision=decision,
        )
    finally:
        gate.chain.close()
