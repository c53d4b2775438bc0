"""Binding a send's intent to the firewall check it passed, when the check's evidence is current.

A check records the evidence revision it assessed (:attr:`~.firewall.FirewallCheck
.evidence_revision`). The revision comparison, the retained assessment (the check) and the
intent binding (the post) commit in one SQLite transaction, with the firewall's evidence lock
held from before the transaction to its commit, so no evidence can change in between. The check
itself — the inference — runs before, holding neither the transaction nor the lock.

When the evidence moved on since the check (a stale capture), the send is checked once more.
When the second check's capture is stale too, the send is held: in ``enforcement`` mode it is
refused (:class:`~.errors.FirewallSendError`, the held check retained); in ``guidance`` mode the
hold is retained and the original send goes out, atomically with it, without the stale advice.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pytest_harness_audit.social.delivery import PostAttempt
from pytest_harness_audit.social.errors import FirewallSendError
from pytest_harness_audit.social.firewall import FirewallCheck, MessageFirewall
from pytest_harness_audit.social.store import IntentBinder, insert_check

#: The refusal of a send held in enforcement mode, and what the model may do about it.
HOLD_REFUSAL = "the evidence this send was checked against changed again before it could be sent"
HOLD_FEEDBACK = "send it again to have it checked against the current evidence"
#: How many checks a send gets before a stale capture holds it.
CHECKS_BEFORE_HOLD = 2


class StaleCapture(Exception):
    """The evidence moved past the check's capture before the intent was bound."""

    def __init__(self, assessed: int, current: int) -> None:
        super().__init__(f"evidence revision {assessed} assessed, {current} current")
        self.assessed = assessed
        self.current = current


@dataclass
class CheckBinding:
    """The :class:`~.store.IntentBinder` of one check: compare its revision, retain it."""

    firewall: MessageFirewall
    check: FirewallCheck
    at_ms: int
    body: Mapping[str, object]
    compare: bool = True

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


#: Posts with the given binder (None: no binding); returns what the post did.
Poster = Callable[[IntentBinder | None], PostAttempt]


@dataclass
class BoundSend:
    """What a bound post did, and the check that holds for it (the last one)."""

    delivery: PostAttempt
    check: FirewallCheck


def post_bound(
    firewall: MessageFirewall,
    check: FirewallCheck,
    post: Poster,
    *,
    recheck: Callable[[], FirewallCheck],
    retain: Callable[[FirewallCheck], None],
    body_of: Callable[[FirewallCheck], Mapping[str, object]],
    now_ms: Callable[[], int],
) -> BoundSend:
    """Post with ``check`` bound; a stale capture is checked again, then held (module doc).

    ``recheck`` runs a fresh check (raising when it blocks); ``retain`` keeps a check alone, for
    a send that ends without a post; ``body_of`` is a check's retained form.
    """
    for _ in range(CHECKS_BEFORE_HOLD):
        binding = CheckBinding(firewall, check, now_ms(), body_of(check))
        try:
            delivery = post(binding)
        except StaleCapture:
            if _ + 1 < CHECKS_BEFORE_HOLD:
                check = recheck()
            continue
        if delivery.post is None:  # no intent was created: the check is retained alone
            retain(check)
        return BoundSend(delivery, check)
    held = dataclasses.replace(check, held=True, advice=None)
    if held.blocks:
        held = dataclasses.replace(held, refusal=HOLD_REFUSAL, feedback=HOLD_FEEDBACK)
        retain(held)
        raise FirewallSendError(held.check_id, HOLD_REFUSAL, HOLD_FEEDBACK)
    # guidance: the hold is retained with the original send, in its transaction
    delivery = post(CheckBinding(firewall, held, now_ms(), body_of(held), compare=False))
    if delivery.post is None:
        retain(held)
    return BoundSend(delivery, held)
