"""Delivery and faults: how a post reaches the store and its recipients, or fails to.

The :class:`Network` stands between the local agent and its peers. A test can inject the
network's failures (:data:`INJECTABLE_FAULTS`) for the next sends, or make a peer unreachable.
A post meets one of three fates: refused before it exists (``network-unavailable``,
``persistence-failed`` …), stored but ``pending`` until its recipients are reachable again
(``delivery-pending``), or stored (with ``outcome-unknown`` the sender is not told).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pytest_harness_audit.social.addresses import agent_address
from pytest_harness_audit.social.content import new_post_id, record_hash
from pytest_harness_audit.social.deadline_clock import DeadlineClock
from pytest_harness_audit.social.errors import (
    POST_MAY_EXIST_REASONS,
    SEND_FAILURE_TEXT,
    SendError,
    SendFailureReason,
    SocialConfigError,
)
from pytest_harness_audit.social.store import IntentBinder, Post, PostKind, PostStore

#: Failures a test may inject for the next sends, or give as a peer's unreachability.
INJECTABLE_FAULTS: tuple[SendFailureReason, ...] = (
    "not-registered",
    "version-mismatch",
    "certification-unavailable",
    "persistence-failed",
    "network-unavailable",
    "delivery-pending",
    "outcome-unknown",
)

#: What runs once a post reached all its recipients: ``(at_ms, post)``.
DeliveredAction = Callable[[int, Post], None]


def check_fault(reason: object, refusal: str) -> SendFailureReason:
    """``reason`` if it is one of :data:`INJECTABLE_FAULTS`, else :class:`SocialConfigError`
    with ``refusal`` (what cannot be done) and the faults that can."""
    for fault in INJECTABLE_FAULTS:
        if reason == fault:
            return fault
    raise SocialConfigError(f"{refusal}; use one of {', '.join(INJECTABLE_FAULTS)}")


@dataclass(frozen=True)
class PostAttempt:
    """One post attempt: the stored post (if any) and the failure it met (if any)."""

    post: Post | None
    reason: SendFailureReason | None = None
    detail: str | None = None

    def raise_failure(self) -> None:
        """Raise the :class:`SendError` of the failure met, if any."""
        if self.reason is not None:
            raise SendError(self.reason, self.detail)


@dataclass
class _Pending:
    post_id: str
    recipients: tuple[str, ...]
    on_delivered: DeliveredAction


class Network:
    """Posts of the local agent and its peers: stored, delivered, held pending, or refused.

    ``local_agent`` sends through :meth:`post`; scripted peers store theirs with
    :meth:`store_post`. Thread-safe on its own; the endpoint also serialises its callers.
    """

    def __init__(self, store: PostStore, clock: DeadlineClock, local_agent: str) -> None:
        self.store = store
        self.clock = clock
        self.local_agent = local_agent
        self._lock = threading.RLock()
        self._faults: list[SendFailureReason] = []
        self._unreachable: dict[str, SendFailureReason] = {}
        self._pending: list[_Pending] = []

    # -- faults ---------------------------------------------------------------------------------

    def inject(self, reason: SendFailureReason, times: int = 1) -> None:
        """The next ``times`` sends meet ``reason`` (one of :data:`INJECTABLE_FAULTS`)."""
        fault = check_fault(reason, f"fault {reason!r} cannot be injected")
        with self._lock:
            self._faults.extend([fault] * times)

    def take_fault(self) -> SendFailureReason | None:
        """The fault the current send meets (spent), or None."""
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    def set_unreachable(self, name: str, reason: SendFailureReason) -> None:
        """Posts to peer ``name`` now fail with ``reason`` (``delivery-pending`` holds them)."""
        fault = check_fault(reason, f"a peer cannot be unreachable with {reason!r}")
        with self._lock:
            self._unreachable[name] = fault

    def set_reachable(self, name: str) -> None:
        """Posts to peer ``name`` succeed again (see :meth:`deliver_pending`)."""
        with self._lock:
            self._unreachable.pop(name, None)

    def fault_for(
        self, recipients: tuple[str, ...], fault: SendFailureReason | None
    ) -> tuple[SendFailureReason | None, str | None]:
        """``(reason, detail)`` a post to ``recipients`` meets: ``fault`` when given, else the
        first unreachable recipient's reason, else ``(None, None)``."""
        if fault is not None:
            return fault, None
        with self._lock:
            for name in recipients:
                reason = self._unreachable.get(name)
                if reason is not None:
                    return (
                        reason,
                        f"{agent_address(name)} could not be reached: {SEND_FAILURE_TEXT[reason]}",
                    )
        return None, None

    # -- posts ----------------------------------------------------------------------------------

    def post(
        self,
        *,
        conversation: str,
        address: str,
        kind: PostKind,
        operation: str,
        operation_id: str | None,
        text: str | None,
        content: list[dict[str, object]],
        recipients: tuple[str, ...],
        fault: SendFailureReason | None,
        on_delivered: DeliveredAction,
        invocation_id: str | None = None,
        bind: IntentBinder | None = None,
    ) -> PostAttempt:
        """Post as the local agent to ``recipients``; ``on_delivered`` runs once it reached
        them (now, or when a pending post is delivered; never for ``outcome-unknown``)."""
        reason, detail = self.fault_for(recipients, fault)
        if reason is not None and reason not in POST_MAY_EXIST_REASONS:
            return PostAttempt(None, reason, detail)
        post = self.store_post(
            sender=self.local_agent,
            conversation=conversation,
            address=address,
            kind=kind,
            operation=operation,
            operation_id=operation_id,
            text=text,
            content=content,
            status="pending" if reason == "delivery-pending" else "stored",
            held=False,
            invocation_id=invocation_id,
            bind=bind,
        )
        if reason == "delivery-pending":
            with self._lock:
                self._pending.append(_Pending(post.post_id, recipients, on_delivered))
            return PostAttempt(post, reason)
        if reason == "outcome-unknown":
            return PostAttempt(post, reason)
        on_delivered(self.clock.now_ms(), post)
        return PostAttempt(post)

    def store_post(
        self,
        *,
        sender: str,
        conversation: str,
        address: str,
        kind: PostKind,
        operation: str,
        operation_id: str | None,
        text: str | None,
        content: list[dict[str, object]],
        status: Literal["stored", "pending"],
        held: bool,
        invocation_id: str | None = None,
        bind: IntentBinder | None = None,
    ) -> Post:
        """Commit one post (any sender's) to the store; ``persistence-failed`` if it cannot."""
        post_id = new_post_id()
        try:
            return self.store.add_post(
                post_id=post_id,
                invocation_id=invocation_id,
                created_ms=self.clock.now_ms(),
                sender=sender,
                conversation=conversation,
                address=address,
                kind=kind,
                operation=operation,
                operation_id=operation_id,
                text=text,
                content=content,
                status=status,
                held=held,
                record_hash=record_hash(post_id, sender, conversation, content),
                bind=bind,
            )
        except sqlite3.Error as error:
            raise SendError("persistence-failed") from error

    def deliver_pending(self) -> int:
        """Deliver every pending post whose recipients are all reachable now; returns how many."""
        delivered = 0
        with self._lock:
            for pending in list(self._pending):
                if any(name in self._unreachable for name in pending.recipients):
                    continue
                self._pending.remove(pending)
                self.store.set_status(pending.post_id, "stored")
                post = next(
                    post
                    for post in self.store.posts(include_held=True)
                    if post.post_id == pending.post_id
                )
                pending.on_delivered(self.clock.now_ms(), post)
                delivered += 1
        return delivered
