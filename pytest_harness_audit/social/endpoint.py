"""The local social endpoint: its public API, and one send invocation from input to event.

One :class:`SocialEndpoint` is the local agent's side of the Social Harness surface. Its peers
are scripted by the test (:meth:`SocialEndpoint.peer`); its posts are committed to SQLite before
a send returns; every send attempt, refusal and collective result is reported to ``on_event``
before the call returns, so a harness can record it in its audit chain. A ``guard`` (the
harness's gate) may wrap every send invocation and refuse it before anything runs.

Order of one send: decode the exact input → (idempotency ledger) → canonical address →
well-formed text → registry (unknown members) → form grammar → content limit → firewall check
→ posts. Everything up to the firewall refuses before any post exists. The endpoint's lock is
held throughout, except while the firewall assesses the send (see :mod:`.capture`).

The other concerns live beside it: delivery and faults in :mod:`.delivery`, the collectives
engine in :mod:`.collective_engine`, the idempotency ledger in :mod:`.ledger`, events in
:mod:`.events`, scripted peers in :mod:`.peers`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, TypeVar

from pytest_harness_audit.social.addresses import agent_address, canonical_address, check_registry
from pytest_harness_audit.social.collective_engine import CollectiveEngine
from pytest_harness_audit.social.deadline_clock import DeadlineClock, SystemClock
from pytest_harness_audit.social.delivery import Network
from pytest_harness_audit.social.errors import (
    REFUSED_CODE,
    CollectiveError,
    FirewallSendError,
    MessageTextError,
    SendError,
    SendFailureReason,
    SendInputError,
    SocialConfigError,
    SocialSendFailure,
    SocialToolError,
)
from pytest_harness_audit.social.events import (
    CollectiveResult,
    FailureDelivery,
    SendAttempt,
    SendResult,
    SocialEvent,
    attempt_of,
    failure_event,
    success_event,
    undecoded_attempt,
)
from pytest_harness_audit.social.firewall import MessageFirewall
from pytest_harness_audit.social.inputs import SendInput, decode_send_input
from pytest_harness_audit.social.ledger import IdempotencyLedger, check_send_options
from pytest_harness_audit.social.mcp_tool import call_send_message, closed_error_data
from pytest_harness_audit.social.peers import Peer
from pytest_harness_audit.social.sends import SendExecutor
from pytest_harness_audit.social.store import Post, PostStore
from pytest_harness_audit.social.text import parse_message_text

EventCallback = Callable[[SocialEvent], None]
_T = TypeVar("_T")


class SendGuard(Protocol):
    """Wraps every send invocation of an endpoint (a harness's gate is one).

    Called with the send's input as given (``{to, text, collective?}``,
    ``{to, collectiveResponse}``, or whatever an MCP client sent) and ``send``, which runs the
    invocation. A guard that refuses raises a :class:`~.errors.SocialSendFailure` without
    calling ``send``; otherwise it returns what ``send`` returns.
    """

    def __call__(self, send_input: object, send: Callable[[], _T]) -> _T:
        """Run ``send`` if the send may go out; raise its refusal if not."""


class SocialEndpoint:
    """The local agent's social endpoint.

    ``storage_dir`` holds the SQLite store; ``local_agent`` is the local agent's name and
    ``peers`` the registry of other agents' names; ``firewall`` (optional) gates every send;
    ``clock`` drives deadlines (default: the system clock, polled on every call); ``on_event``
    receives a :class:`SocialEvent` for every send attempt, refusal and collective result;
    ``guard`` (optional) wraps every send invocation (see :class:`SendGuard`).
    """

    def __init__(
        self,
        storage_dir: str | Path,
        local_agent: str,
        peers: Iterable[str],
        firewall: MessageFirewall | None = None,
        clock: DeadlineClock | None = None,
        on_event: EventCallback | None = None,
        guard: SendGuard | None = None,
    ) -> None:
        self.local_agent = local_agent
        self.local_address = agent_address(local_agent)
        self.registry = check_registry(local_agent, peers)
        self.firewall = firewall
        self.clock: DeadlineClock = clock if clock is not None else SystemClock()
        self.on_event = on_event
        self.guard = guard
        self.store = PostStore(storage_dir)
        #: Keyed sends an earlier endpoint on this store left running (now ``indeterminate``).
        self.interrupted_sends = self.store.mark_interrupted()
        #: Posts: delivery, injected faults, unreachable peers (see :mod:`.delivery`).
        self.network = Network(self.store, self.clock, local_agent)
        #: Open gathers and all_gathers (see :mod:`.collective_engine`).
        self.collectives = CollectiveEngine(
            local_agent,
            self.store,
            self.network,
            lambda name, operation_id: self.peer(name).take_scripted(operation_id),
            self._emit,
        )
        #: Keyed sends (see :mod:`.ledger`).
        self._lock = threading.RLock()
        self.ledger = IdempotencyLedger(self.store, self.clock, self._lock)
        #: What each send does (see :mod:`.sends`).
        self.sends = SendExecutor(
            local_agent,
            self.registry,
            firewall,
            self.clock,
            self.store,
            self.network,
            self.collectives,
            self._lock,
        )
        self._thread = threading.local()
        self._peers: dict[str, Peer] = {}
        self._polling = False
        self._emitting = False
        self._closed = False
        self.clock.subscribe(self.poll)

    # -- lifecycle ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the store; the endpoint no longer reacts to its clock."""
        with self._lock:
            self._closed = True
            self.store.close()

    def __enter__(self) -> SocialEndpoint:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- sending --------------------------------------------------------------------------------

    def send(
        self,
        to: str,
        text: str,
        collective: Mapping[str, object] | None = None,
        *,
        failure_delivery: FailureDelivery = "result",
        idempotency_key: str | None = None,
    ) -> SendResult:
        """Send ``text`` to ``to``: a multicast, or the question of ``collective``
        (``{op: "gather" | "all_gather", deadline, requestedSchema}``; ``{op: "multicast"}`` is
        the same as omitting it)."""
        data: dict[str, object] = {"to": to, "text": text}
        if collective is not None:
            data["collective"] = collective
        return self.send_input(
            data, failure_delivery=failure_delivery, idempotency_key=idempotency_key
        )

    def respond(
        self,
        to: str,
        response: Mapping[str, object],
        *,
        failure_delivery: FailureDelivery = "result",
        idempotency_key: str | None = None,
    ) -> SendResult:
        """Answer the one request open in ``to``'s conversation with ``{action: "accept",
        content}`` or ``{action: "decline"}``; the result names the request's operation id."""
        return self.send_input(
            {"to": to, "collectiveResponse": response},
            failure_delivery=failure_delivery,
            idempotency_key=idempotency_key,
        )

    def send_input(
        self,
        input: Mapping[str, object],
        *,
        failure_delivery: FailureDelivery = "result",
        idempotency_key: str | None = None,
    ) -> SendResult:
        """Send one exact input, ``{to, text, collective?}`` or ``{to, collectiveResponse}``.

        Raises :class:`SendInputError` for any other shape (extra keys included),
        :class:`SendError`, :class:`CollectiveError` or :class:`FirewallSendError` (and the
        guard's refusal). With ``failure_delivery="inbound"`` a refused gather, all_gather or
        response completes with its operation id and the error arrives as an
        ``operationFailed`` inbound item instead.
        """
        return self._guarded(
            input,
            lambda: self._invoke(
                lambda: decode_send_input(input),
                lambda error: undecoded_attempt(input, failure_delivery),
                failure_delivery,
                idempotency_key,
            ),
        )

    def send_message_text(
        self,
        to: str,
        text: str,
        *,
        failure_delivery: FailureDelivery = "result",
        idempotency_key: str | None = None,
    ) -> SendResult:
        """Send a model's message text as the operation it states (see ``parse_message_text``)."""

        def refused(error: SocialSendFailure) -> SendAttempt:
            stated = error.operation if isinstance(error, MessageTextError) else "message"
            operation = {"message": "multicast", "answer": "response"}.get(stated, stated)
            return SendAttempt(to, operation, text, failure_delivery)

        return self._guarded(
            {"to": to, "text": text},
            lambda: self._invoke(
                lambda: parse_message_text(to, text),
                refused,
                failure_delivery,
                idempotency_key,
            ),
        )

    def mcp_send_message(
        self, arguments: Mapping[str, object] | None, meta: Mapping[str, object] | None = None
    ) -> dict[str, object]:
        """The ``send_message`` MCP tool as a pure call: ``{input}`` and the request ``_meta``
        in, the structured result out, or :class:`~.errors.SocialToolError` (see ``mcp_tool``);
        a guard's refusal is one too, with the refusal's error data."""
        send_input = arguments.get("input") if isinstance(arguments, Mapping) else None
        try:
            return self._guarded(send_input, lambda: call_send_message(self, arguments, meta))
        except SocialToolError:
            raise
        except SocialSendFailure as error:  # the guard refused before the tool ran
            data = closed_error_data(error.error_data())
            raise SocialToolError(REFUSED_CODE, error.message, data) from None

    def inject_fault(self, reason: SendFailureReason, *, times: int = 1) -> None:
        """Make the next ``times`` send invocations meet a network failure.

        Pre-post reasons (``network-unavailable``, ``persistence-failed``, …) refuse the send
        before any post; ``delivery-pending`` stores the posts as pending (delivered by
        :meth:`deliver_pending`); ``outcome-unknown`` stores them and reports the outcome unknown.
        """
        with self._lock:
            self.network.inject(reason, times)

    # -- reading --------------------------------------------------------------------------------

    def posts(
        self, to: str | None = None, *, sender: str | None = None, include_held: bool = False
    ) -> list[Post]:
        """Stored posts, oldest first: all, or those of ``to``'s conversation or sent to ``to``
        (canonicalised, so ``group:carol,bob`` works), optionally only ``sender``'s. All_gather
        answers not yet published by the close are left out unless ``include_held``."""
        with self._lock:
            self.poll()
            posts = self.store.posts(
                sender=None if sender is None else sender.removeprefix("agent:"),
                include_held=include_held,
            )
            if to is None:
                return posts
            wanted = canonical_address(to, self.local_agent).address
            return [post for post in posts if wanted in (post.conversation, post.address)]

    def inbox(self) -> list[dict[str, object]]:
        """The local agent's inbound items, oldest first: ``multicast``, ``collectiveRequest``,
        ``collectiveResult`` and ``operationFailed``."""
        with self._lock:
            self.poll()
            return self.store.items()

    def result(self, operation_id: str) -> CollectiveResult | None:
        """The collective result the local agent received for ``operation_id``, if any yet."""
        with self._lock:
            self.poll()
            return self.collectives.result(operation_id)

    def check(self, check_id: str) -> dict[str, object] | None:
        """The retained firewall check ``check_id`` (private evidence included), or None."""
        return self.store.check(check_id)

    def read_send(self, idempotency_key: str) -> dict[str, object]:
        """The ledger state of a keyed send: ``{state: "absent"}``, ``{state: "pending" |
        "indeterminate", input}`` or ``{state: "returned", input, outcome: {success: result} |
        {failure: error}}``."""
        return self.ledger.read(idempotency_key)

    def peer(self, name: str) -> Peer:
        """The scripted peer ``name`` (``bob`` or ``agent:bob``), which must be registered."""
        bare = name.removeprefix("agent:")
        if bare not in self.registry:
            raise SocialConfigError(
                f"peer {name!r} is not registered; registered peers: "
                f"{', '.join(sorted(self.registry))}"
            )
        with self._lock:
            if bare not in self._peers:
                self._peers[bare] = Peer(self, bare)
            return self._peers[bare]

    # -- time -----------------------------------------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the endpoint's lock: no send, poll or peer runs on another thread meanwhile."""
        with self._lock:
            yield

    def poll(self) -> None:
        """Run everything due by now: scripted answers, deadlines, closes and results."""
        with self._lock:
            self._run_due()

    def deliver_pending(self) -> int:
        """Deliver every pending post whose recipients are all reachable now; returns how many."""
        with self._lock:
            delivered = self.network.deliver_pending()
            self.poll()
            return delivered

    def _run_due(self) -> None:
        # Not re-entered, not from inside an event callback, and never once closed.
        if self._polling or self._emitting or self._closed:
            return
        self._polling = True
        try:
            self.collectives.run_due(self.clock.now_ms())
        finally:
            self._polling = False

    # -- internals: one invocation --------------------------------------------------------------

    def _guarded(self, send_input: object, send: Callable[[], _T]) -> _T:
        """Run ``send`` through the guard, once per invocation (an MCP call's inner send is
        not guarded again)."""
        if self.guard is None or getattr(self._thread, "guarded", False):
            return send()
        self._thread.guarded = True
        try:
            return self.guard(send_input, send)
        finally:
            self._thread.guarded = False

    def _invoke(
        self,
        decode: Callable[[], SendInput],
        refused: Callable[[SocialSendFailure], SendAttempt],
        failure_delivery: FailureDelivery,
        key: str | None,
    ) -> SendResult:
        """One invocation: options, ``decode`` (``refused`` is the attempt reported when it
        fails), then the send (which leaves the lock while the firewall assesses)."""
        check_send_options(failure_delivery, key)
        with self._lock:
            self.poll()
            try:
                decoded = decode()
            except (SendInputError, MessageTextError) as error:
                self._emit(failure_event(refused(error), error, self.clock.now_ms()))
                raise
            attempt = attempt_of(decoded, failure_delivery)
            replay = None if key is None else self.ledger.begin(key, decoded)
            if replay is not None:
                return self._replay(replay.result, replay.failure, attempt)
        try:
            return self._execute(decoded, attempt, key)
        finally:
            with self._lock:
                self.ledger.settle(key)

    def _execute(self, decoded: SendInput, attempt: SendAttempt, key: str | None) -> SendResult:
        try:
            result = self.sends.execute(decoded, attempt)
            with self._lock:
                self.ledger.returned(key, result)
        except Exception as error:
            with self._lock:
                return self._failed(decoded, attempt, error, key)
        with self._lock:
            self._emit(success_event(attempt, result, self.clock.now_ms()))
            self._run_due()
        return result

    def _failed(
        self, decoded: SendInput, attempt: SendAttempt, error: Exception, key: str | None
    ) -> SendResult:
        """Report a send that raised ``error``; raise its typed error (or return, inbound)."""
        if isinstance(error, FirewallSendError):
            self.ledger.forget(key)
            self._emit(failure_event(attempt, error, self.clock.now_ms()))
            raise error
        if isinstance(error, SendError | CollectiveError):
            return self._fail(decoded, attempt, error, key)
        unknown = SendError("outcome-unknown")
        self.ledger.failed(key, unknown)
        self._emit(failure_event(attempt, unknown, self.clock.now_ms()))
        raise unknown from error

    def _fail(
        self,
        decoded: SendInput,
        attempt: SendAttempt,
        error: SendError | CollectiveError,
        key: str | None,
    ) -> SendResult:
        inbound = (
            attempt.failure_delivery == "inbound"
            and decoded.operation != "multicast"
            and not (isinstance(error, SendError) and error.reason == "outcome-unknown")
        )
        if not inbound:
            self.ledger.failed(key, error)
            self._emit(failure_event(attempt, error, self.clock.now_ms()))
            raise error
        operation_id = (
            error.operation_id
            if isinstance(error, CollectiveError)
            else attempt.operation_id or self.sends.mint_id()
        )
        attempt.operation_id = operation_id
        item = {
            "kind": "operationFailed",
            "id": operation_id,
            "to": attempt.address or decoded.to,
            "error": error.message,
        }
        self.store.add_item(self.clock.now_ms(), item)
        result = SendResult(operation_id=operation_id, post_ids=attempt.post_ids)
        self.ledger.returned(key, result)
        self._emit(failure_event(attempt, error, self.clock.now_ms()))
        self._run_due()
        return result

    def _replay(
        self,
        result: SendResult | None,
        failure: SendError | CollectiveError | None,
        attempt: SendAttempt,
    ) -> SendResult:
        attempt.extra["replayed"] = True
        if result is not None:
            attempt.operation_id = result.operation_id
            attempt.post_ids = result.post_ids
            self._emit(success_event(attempt, result, self.clock.now_ms(), replayed=True))
            return result
        error = failure if failure is not None else SendError("outcome-unknown")
        self._emit(failure_event(attempt, error, self.clock.now_ms()))
        raise error

    def _emit(self, event: SocialEvent) -> None:
        if self.on_event is None:
            return
        emitting, self._emitting = self._emitting, True
        try:
            self.on_event(event)
        finally:
            self._emitting = emitting
