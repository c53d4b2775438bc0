"""Binding a send's intent to the firewall check it passed, when the check's evidence is current.

A check records the evidence revision it assessed (:attr:`~.firewall.FirewallCheck
.evidence_revision`). The check — the inference — runs holding no lock of the endpoint, its
collectives engine or its delivery, and no SQLite transaction: other sends, deliveries and polls
go on meanwhile. Then, under the endpoint's lock, the revision comparison, the retained
assessment (the check) and the intent binding (the send's first stored post) commit in one SQLite
transaction, with the firewall's evidence lock held from before the transaction to its commit, so
no evidence can change in between.

When the evidence moved on since the check (a stale capture), the send is checked once more,
again with no lock held. When the second check's capture is stale too, the send is held: in
``enforcement`` mode it is refused (:class:`~.errors.FirewallSendError`, the held check
retained); in ``guidance`` mode the hold is retained and the original send goes out, atomically
with it, without the stale advice. This holds for every send the firewall checks: multicasts,
gathers, all_gathers and responses.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TypeVar

from pytest_harness_audit.social.errors import FirewallSendError
from pytest_harness_audit.social.firewall import FirewallCheck, MessageFirewall
from pytest_harness_audit.social.store import insert_check

#: The refusal of a send held in enforcement mode, and what the model may do about it.
HOLD_REFUSAL = "the evidence this send was checked against changed again before it could be sent"
HOLD_FEEDBACK = "send it again to have it checked against the current evidence"
#: How many checks a send gets before a stale capture holds it.
CHECKS_BEFORE_HOLD = 2

_T = TypeVar("_T")


class StaleCapture(Exception):
    """The evidence moved past the check's capture before the intent was bound."""

    def __init__(self, assessed: int, current: int) -> None:
        super().__init__(f"evidence revision {assessed} assessed, {current} current")
        self.assessed = assessed
        self.current = current


@dataclass
class CheckBinding:
    """The :class:`~.store.IntentBinder` of one check: compare its revision, retain it.

    ``used`` tells whether it ran (a post was attempted with it); a send that ends without ever
    using it retains its check alone.
    """

    firewall: MessageFirewall
    check: FirewallCheck
    at_ms: int
    body: Mapping[str, object]
    compare: bool = True
    used: bool = False

    @property
    def lock(self) -> threading.RLock:
        """The firewall's evidence lock."""
        return self.firewall.evidence_lock

    def __call__(self, connection: sqlite3.Connection) -> None:
        """Raise :class:`StaleCapture` when the evidence moved on; else retain the check."""
        current = self.firewall.evidence_revision
        if self.compare and current != self.check.evidence_revision:
            raise StaleCapture(self.check.evidence_revision, current)
        insert_check(connection, self.check.check_id, self.at_ms, self.body)
        self.used = True


@dataclass
class CheckedSend:
    """How one send is checked and bound (see :func:`send_checked`).

    ``assess`` runs a fresh check with no lock held; ``lock`` is the endpoint's lock, held while
    a check is retained or an intent bound; ``retain`` keeps a check alone (for a send that ends
    without a post); ``body_of`` is a check's retained form.
    """

    firewall: MessageFirewall
    lock: AbstractContextManager[object]
    assess: Callable[[], FirewallCheck]
    retain: Callable[[FirewallCheck], None]
    body_of: Callable[[FirewallCheck], Mapping[str, object]]
    now_ms: Callable[[], int]

    def binding(self, check: FirewallCheck, *, compare: bool = True) -> CheckBinding:
        """A fresh binder of ``check``."""
        return CheckBinding(self.firewall, check, self.now_ms(), self.body_of(check), compare)

    def assessed(self) -> FirewallCheck:
        """A fresh check, run with no lock; a blocking one is retained and raised."""
        check = self.assess()
        if check.blocks:
            with self.lock:
                self.retain(check)
            raise FirewallSendError(check.check_id, check.refusal or "", check.feedback or "")
        return check


def send_checked(
    checked: CheckedSend, commit: Callable[[CheckBinding], _T]
) -> tuple[_T, FirewallCheck]:
    """Check the send, then ``commit`` it under the endpoint's lock with the check bound.

    ``commit`` posts the send, handing the binding to the store with its first post (it may
    raise :class:`StaleCapture` only from there, before anything else is done). A stale capture
    is checked once more, then held (module doc). Returns what ``commit`` returned and the check
    that holds for the send.
    """
    check = checked.assessed()
    for round_ in range(1, CHECKS_BEFORE_HOLD + 1):
        with checked.lock:
            try:
                return _committed(checked, checked.binding(check), commit), check
            except StaleCapture:
                pass
        if round_ < CHECKS_BEFORE_HOLD:
            check = checked.assessed()
    held = dataclasses.replace(check, held=True, advice=None)
    with checked.lock:
        if held.blocks:
            held = dataclasses.replace(held, refusal=HOLD_REFUSAL, feedback=HOLD_FEEDBACK)
            checked.retain(held)
            raise FirewallSendError(held.check_id, HOLD_REFUSAL, HOLD_FEEDBACK)
        # guidance: the hold is retained with the original send, in its transaction
        return _committed(checked, checked.binding(held, compare=False), commit), held


def _committed(
    checked: CheckedSend, binding: CheckBinding, commit: Callable[[CheckBinding], _T]
) -> _T:
    """``commit(binding)``; a check no post was attempted with is retained alone. (One whose
    post's transaction rolled back is not retained: it bound no intent.)"""
    try:
        result = commit(binding)
    except StaleCapture:
        raise
    except BaseException:
        if not binding.used:
            checked.retain(binding.check)
        raise
    if not binding.used:
        checked.retain(binding.check)
    return result
