"""The local social endpoint: addressed sends, collectives, the firewall gate and the post store.

One :class:`SocialEndpoint` is the local agent's side of the Social Harness surface. Its peers
are scripted by the test (:meth:`SocialEndpoint.peer`); its posts are committed to SQLite before
a send returns; every send attempt, refusal and collective result is reported to ``on_event``
before the call returns, so a harness can record it in its audit chain.

Order of one send: decode the exact input → (idempotency ledger) → canonical address →
well-formed text → registry (unknown members) → form grammar → content limit → firewall check
→ posts. Everything up to the firewall refuses before any post exists.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal, cast

from pytest_harness_audit.social.addresses import (
    CanonicalAddress,
    agent_address,
    canonical_address,
    is_agent_name,
    unknown_members,
)
from pytest_harness_audit.social.canonical import canonical_json, lone_surrogate_index
from pytest_harness_audit.social.clock import Clock, SystemClock
from pytest_harness_audit.social.collectives import Operation, Timeline, outcome_of, select_request
from pytest_harness_audit.social.content import (
    check_content_size,
    close_content,
    collective_id,
    multicast_content,
    new_check_id,
    new_nonce,
    new_post_id,
    record_hash,
    request_content,
    response_content,
)
from pytest_harness_audit.social.errors import (
    POST_MAY_EXIST_REASONS,
    SEND_FAILURE_TEXT,
    CollectiveError,
    CollectiveFailure,
    FirewallSendError,
    MessageTextError,
    SendError,
    SendFailureReason,
    SendInputError,
    SocialConfigError,
    SocialSendFailure,
    UnreachableMember,
    error_from_json,
    error_to_json,
)
from pytest_harness_audit.social.events import (
    CollectiveResult,
    FailureDelivery,
    MemberOutcome,
    SendResult,
    SocialEvent,
)
from pytest_harness_audit.social.firewall import (
    FirewallCheck,
    Guidance,
    MessageFirewall,
    SendCandidate,
)
from pytest_harness_audit.social.forms import FormSchemaError, parse_form_schema, validate_answer
from pytest_harness_audit.social.inputs import (
    Accept,
    Collecting,
    Decline,
    ResponseSend,
    SendInput,
    TextSend,
    decode_send_input,
)
from pytest_harness_audit.social.store import Post, PostKind, PostStore
from pytest_harness_audit.social.text import parse_message_text

if TYPE_CHECKING:
    from pytest_harness_audit.social.peers import Peer

#: Failures a test may inject with :meth:`SocialEndpoint.inject_fault` (the network's).
INJECTABLE_FAULTS: tuple[SendFailureReason, ...] = (
    "not-registered",
    "version-mismatch",
    "certification-unavailable",
    "persistence-failed",
    "network-unavailable",
    "delivery-pending",
    "outcome-unknown",
)
FAILURE_DELIVERIES: tuple[FailureDelivery, ...] = ("result", "inbound")
MAXIMUM_IDEMPOTENCY_KEY_BYTES = 128

EventCallback = Callable[[SocialEvent], None]
DeliveredAction = Callable[[int, Post], None]


@dataclass
class _Attempt:
    """What one send invocation has done so far (for its event)."""

    to: str
    operation: str
    text: str | None
    failure_delivery: FailureDelivery
    address: str | None = None
    operation_id: str | None = None
    post_ids: tuple[str, ...] = ()
    pending: bool = False
    check: FirewallCheck | None = None
    unreachable: tuple[str, ...] = ()
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class _Delivery:
    """One post attempt: the stored post (if any) and the failure it met (if any)."""

    post: Post | None
    reason: SendFailureReason | None = None
    detail: str | None = None


@dataclass
class _Pending:
    post_id: str
    recipients: tuple[str, ...]
    on_delivered: DeliveredAction


def check_idempotency_key(key: object) -> str:
    """Return ``key`` if it is a valid idempotency key (1–128 UTF-8 bytes, no NUL)."""
    if (
        not isinstance(key, str)
        or lone_surrogate_index(key) is not None
        or not 1 <= len(key.encode()) <= MAXIMUM_IDEMPOTENCY_KEY_BYTES
        or "\0" in key
    ):
        raise SocialConfigError(
            f"idempotency key {key!r} is invalid: use 1 to {MAXIMUM_IDEMPOTENCY_KEY_BYTES} "
            "UTF-8 bytes without NUL"
        )
    return key


class SocialEndpoint:
    """The local agent's social endpoint.

    ``storage_dir`` holds the SQLite store; ``local_agent`` is the local agent's name and
    ``peers`` the registry of other agents' names; ``firewall`` (optional) gates every send;
    ``clock`` drives deadlines (default: the system clock, polled on every call); ``on_event``
    receives a :class:`SocialEvent` for every send attempt, refusal and collective result.
    """

    def __init__(
        self,
        storage_dir: str | Path,
        local_agent: str,
        peers: Iterable[str],
        firewall: MessageFirewall | None = None,
        clock: Clock | None = None,
        on_event: EventCallback | None = None,
    ) -> None:
        if not is_agent_name(local_agent):
            raise SocialConfigError(
                f"local agent name {local_agent!r} is invalid: a name is 3 to 32 lowercase "
                "letters, digits and single inner hyphens"
            )
        names = tuple(peers)
        for name in names:
            if not is_agent_name(name):
                raise SocialConfigError(
                    f"peer name {name!r} is invalid: a name is 3 to 32 lowercase letters, digits "
                    "and single inner hyphens"
                )
            if name == local_agent:
                raise SocialConfigError(f"peer name {name!r} is the local agent's own name")
            if names.count(name) > 1:
                raise SocialConfigError(f"peer name {name!r} is listed twice")
        self.local_agent = local_agent
        self.local_address = agent_address(local_agent)
        self.registry: frozenset[str] = frozenset(names)
        self.firewall = firewall
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.on_event = on_event
        self.store = PostStore(storage_dir)
        #: Keyed sends an earlier endpoint on this store left running (now ``indeterminate``).
        self.interrupted_sends = self.store.mark_interrupted()
        self._lock = threading.RLock()
        self._operations: dict[str, Operation] = {}
        self._results: dict[str, CollectiveResult] = {}
        self._timeline = Timeline()
        self._faults: list[SendFailureReason] = []
        self._unreachable: dict[str, SendFailureReason] = {}
        self._pending: list[_Pending] = []
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

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
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
        :class:`SendError`, :class:`CollectiveError` or :class:`FirewallSendError`. With
        ``failure_delivery="inbound"`` a refused gather, all_gather or response completes with
        its operation id and the error arrives as an ``operationFailed`` inbound item instead.
        """
        self._check_options(failure_delivery, idempotency_key)
        with self._lock:
            self.poll()
            try:
                decoded = decode_send_input(input)
            except SendInputError as error:
                raw_to = input.get("to") if isinstance(input, Mapping) else None
                attempt = _Attempt(
                    to=raw_to if isinstance(raw_to, str) else repr(raw_to),
                    operation=_stated_operation(input),
                    text=None,
                    failure_delivery=failure_delivery,
                )
                self._emit(self._failure_event(attempt, error))
                raise
            return self._send_decoded(decoded, failure_delivery, idempotency_key)

    def send_message_text(
        self,
        to: str,
        text: str,
        *,
        failure_delivery: FailureDelivery = "result",
        idempotency_key: str | None = None,
    ) -> SendResult:
        """Send a model's message text as the operation it states (see ``parse_message_text``)."""
        self._check_options(failure_delivery, idempotency_key)
        with self._lock:
            self.poll()
            try:
                decoded = parse_message_text(to, text)
            except MessageTextError as error:
                stated = {"message": "multicast", "answer": "response"}.get(
                    error.operation, error.operation
                )
                attempt = _Attempt(to, stated, text, failure_delivery)
                self._emit(self._failure_event(attempt, error))
                raise
            return self._send_decoded(decoded, failure_delivery, idempotency_key)

    def inject_fault(self, reason: SendFailureReason, *, times: int = 1) -> None:
        """Make the next ``times`` send invocations meet a network failure.

        Pre-post reasons (``network-unavailable``, ``persistence-failed``, …) refuse the send
        before any post; ``delivery-pending`` stores the posts as pending (delivered by
        :meth:`deliver_pending`); ``outcome-unknown`` stores them and reports the outcome unknown.
        """
        if reason not in INJECTABLE_FAULTS:
            raise SocialConfigError(
                f"fault {reason!r} cannot be injected; use one of {', '.join(INJECTABLE_FAULTS)}"
            )
        with self._lock:
            self._faults.extend([reason] * times)

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
            return self._results.get(operation_id)

    def check(self, check_id: str) -> dict[str, object] | None:
        """The retained firewall check ``check_id`` (private evidence included), or None."""
        return self.store.check(check_id)

    def read_send(self, idempotency_key: str) -> dict[str, object]:
        """The ledger state of a keyed send: ``{state: "absent"}``, ``{state: "pending" |
        "indeterminate", input}`` or ``{state: "returned", input, outcome: {success: result} |
        {failure: error}}``."""
        record = self.store.invocation(check_idempotency_key(idempotency_key))
        if record is None:
            return {"state": "absent"}
        data: dict[str, object] = {"state": record.state, "input": json.loads(record.input)}
        if record.state == "returned" and record.outcome is not None:
            outcome = record.outcome
            data["outcome"] = (
                {"success": outcome["result"]}
                if "result" in outcome
                else {"failure": outcome.get("error")}
            )
        return data

    def peer(self, name: str) -> Peer:
        """The scripted peer ``name`` (``bob`` or ``agent:bob``), which must be registered."""
        from pytest_harness_audit.social.peers import Peer

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

    def poll(self) -> None:
        """Run everything due by now: scripted answers, deadlines, closes and results."""
        with self._lock:
            self._run_due()

    def _run_due(self) -> None:
        # Not re-entered, not from inside an event callback, and never once closed.
        if self._polling or self._emitting or self._closed:
            return
        self._polling = True
        try:
            self._timeline.run_due(self.clock.now_ms())
        finally:
            self._polling = False

    def deliver_pending(self) -> int:
        """Deliver every pending post whose recipients are all reachable now; returns how many."""
        with self._lock:
            delivered = 0
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
            self.poll()
            return delivered

    # -- the MCP tool ---------------------------------------------------------------------------

    def mcp_send_message(
        self, arguments: Mapping[str, object] | None, meta: Mapping[str, object] | None = None
    ) -> dict[str, object]:
        """The ``send_message`` MCP tool as a pure call: ``{input}`` and the request ``_meta``
        in, the structured result out, or :class:`~.errors.SocialToolError` (see ``mcp_tool``)."""
        from pytest_harness_audit.social.mcp_tool import call_send_message

        return call_send_message(self, arguments, meta)

    # -- internals: one invocation --------------------------------------------------------------

    def _check_options(self, failure_delivery: object, idempotency_key: object) -> None:
        if failure_delivery not in FAILURE_DELIVERIES:
            raise SocialConfigError(
                f"failure_delivery must be 'result' or 'inbound', got {failure_delivery!r}"
            )
        if idempotency_key is not None:
            check_idempotency_key(idempotency_key)

    def _send_decoded(
        self, decoded: SendInput, failure_delivery: FailureDelivery, key: str | None
    ) -> SendResult:
        attempt = _Attempt(
            to=decoded.to,
            operation=decoded.operation,
            text=_event_text(decoded),
            failure_delivery=failure_delivery,
        )
        if key is not None:
            canonical_input = json.dumps(decoded.to_json(), sort_keys=True, separators=(",", ":"))
            record = self.store.invocation(key)
            if record is not None:
                return self._replay(
                    record.input, record.state, record.outcome, canonical_input, attempt
                )
            self.store.begin_invocation(key, canonical_input, self.clock.now_ms())
        try:
            result = self._execute(decoded, attempt)
            if key is not None:
                self.store.finish_invocation(key, {"result": result.to_json()}, self.clock.now_ms())
        except FirewallSendError as error:
            if key is not None:
                self.store.forget_invocation(key)
            self._emit(self._failure_event(attempt, error))
            raise
        except (SendError, CollectiveError) as error:
            return self._fail(decoded, attempt, error, key)
        except Exception as error:
            unknown = SendError("outcome-unknown")
            self._retain_failure(key, unknown)
            self._emit(self._failure_event(attempt, unknown))
            raise unknown from error
        self._emit(self._success_event(attempt, result))
        self._run_due()
        return result

    def _retain_failure(self, key: str | None, error: SendError | CollectiveError) -> None:
        if key is None:
            return
        # An unretained outcome replays as outcome-unknown (the row stays pending).
        with contextlib.suppress(sqlite3.Error):
            self.store.finish_invocation(key, {"error": error_to_json(error)}, self.clock.now_ms())

    def _fail(
        self,
        decoded: SendInput,
        attempt: _Attempt,
        error: SendError | CollectiveError,
        key: str | None,
    ) -> SendResult:
        inbound = (
            attempt.failure_delivery == "inbound"
            and decoded.operation != "multicast"
            and not (isinstance(error, SendError) and error.reason == "outcome-unknown")
        )
        if not inbound:
            self._retain_failure(key, error)
            self._emit(self._failure_event(attempt, error))
            raise error
        operation_id = (
            error.operation_id
            if isinstance(error, CollectiveError)
            else attempt.operation_id or self._mint_id()
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
        if key is not None:
            self.store.finish_invocation(key, {"result": result.to_json()}, self.clock.now_ms())
        self._emit(self._failure_event(attempt, error))
        self._run_due()
        return result

    def _replay(
        self,
        retained_input: str,
        state: str,
        outcome: Mapping[str, object] | None,
        canonical_input: str,
        attempt: _Attempt,
    ) -> SendResult:
        attempt.extra["replayed"] = True
        failure: SendError | CollectiveError
        if retained_input != canonical_input:
            failure = SendError("idempotency-conflict")
        elif state == "returned" and outcome is not None:
            try:
                if "result" in outcome:
                    result = SendResult.from_json(cast(Mapping[str, object], outcome["result"]))
                    attempt.operation_id = result.operation_id
                    attempt.post_ids = result.post_ids
                    self._emit(self._success_event(attempt, result, replayed=True))
                    return result
                failure = error_from_json(cast(Mapping[str, object], outcome["error"]))
            except (KeyError, TypeError, ValueError):
                failure = SendError("outcome-unknown")
        else:
            failure = SendError("outcome-unknown")
        self._emit(self._failure_event(attempt, failure))
        raise failure

    def _execute(self, decoded: SendInput, attempt: _Attempt) -> SendResult:
        if isinstance(decoded, ResponseSend):
            return self._respond(decoded, attempt)
        if decoded.collective is None:
            return self._multicast(decoded, attempt)
        return self._collect(decoded, decoded.collective, attempt)

    def _resolve(self, to: str, attempt: _Attempt) -> CanonicalAddress:
        address = canonical_address(to, self.local_agent)
        attempt.address = address.address
        return address

    @staticmethod
    def _check_text(text: str) -> None:
        index = lone_surrogate_index(text)
        if index is not None:
            raise SendError(
                "content-invalid",
                f"the message text is not well-formed Unicode (a lone surrogate at index {index})",
            )

    def _require_known(self, address: CanonicalAddress) -> None:
        unknown = unknown_members(address, self.registry)
        if unknown:
            raise SendError("unknown-agent", f"{agent_address(unknown[0])} is not a known agent")

    def _multicast(self, decoded: TextSend, attempt: _Attempt) -> SendResult:
        address = self._resolve(decoded.to, attempt)
        self._check_text(decoded.text)
        self._require_known(address)
        content = multicast_content(decoded.text)
        check_content_size(content)
        check = self._check_firewall(attempt, address, "multicast", decoded.text)
        fault = self._take_fault()
        delivery = self._post(
            attempt,
            conversation=address.address,
            address=address.address,
            kind="message",
            operation="multicast",
            operation_id=None,
            text=decoded.text,
            content=content,
            recipients=address.remote,
            fault=fault,
            on_delivered=lambda at, post: None,
        )
        self._raise_delivery_failure(delivery)
        return SendResult(guidance=_guidance(check), post_ids=attempt.post_ids)

    def _collect(self, decoded: TextSend, collecting: Collecting, attempt: _Attempt) -> SendResult:
        nonce = new_nonce()
        operation_id = collective_id(self.local_address, nonce)
        attempt.operation_id = operation_id
        address = self._resolve(decoded.to, attempt)
        self._check_text(decoded.text)
        if collecting.op == "all_gather" and address.kind == "direct":
            raise SendError(
                "membership-invalid",
                f"an all_gather needs a group: address; {address.address} names one agent",
            )
        unknown = unknown_members(address, self.registry)
        if unknown:
            members = tuple(
                UnreachableMember(agent_address(name), "unknown-agent") for name in unknown
            )
            raise CollectiveError(operation_id, CollectiveFailure("members-unreachable", members))
        try:
            form = parse_form_schema(collecting.requested_schema)
        except FormSchemaError as error:
            raise CollectiveError(
                operation_id, CollectiveFailure("schema-invalid", detail=error.detail)
            ) from None
        now = self.clock.now_ms()
        deadline_at = now + collecting.deadline * 1000
        content = request_content(
            decoded.text,
            op=collecting.op,
            operation_id=operation_id,
            nonce=nonce,
            deadline_at_ms=deadline_at,
            requested_schema=collecting.requested_schema,
        )
        check_content_size(content)
        check = self._check_firewall(attempt, address, collecting.op, decoded.text)
        fault = self._take_fault()
        operation = Operation(
            operation_id=operation_id,
            op=collecting.op,
            requester=self.local_agent,
            address=address.address,
            question=decoded.text,
            form=form,
            deadline_at_ms=deadline_at,
            members=address.remote,
        )
        self._operations[operation_id] = operation
        refused: list[UnreachableMember] = []
        targets = (
            [(name, agent_address(name), (name,)) for name in address.remote]
            if collecting.op == "gather"
            else [("", address.address, address.remote)]
        )
        for _member, conversation, recipients in targets:
            delivery = self._post(
                attempt,
                conversation=conversation,
                address=address.address,
                kind="request",
                operation=collecting.op,
                operation_id=operation_id,
                text=decoded.text,
                content=content,
                recipients=recipients,
                fault=fault,
                on_delivered=self._asker(operation, recipients),
            )
            if delivery.post is not None:
                for name in recipients:
                    operation.request_post_ids[name] = delivery.post.post_id
            if delivery.reason is None:
                continue
            for name in recipients:
                refused.append(UnreachableMember(agent_address(name), delivery.reason))
                if delivery.reason not in POST_MAY_EXIST_REASONS:
                    operation.outcomes[name] = MemberOutcome(agent_address(name), "no-answer")
        if len(refused) == len(operation.members):
            del self._operations[operation_id]
            raise CollectiveError(
                operation_id, CollectiveFailure("members-unreachable", tuple(refused))
            )
        attempt.unreachable = tuple(f"{item.member}: {item.reason}" for item in refused)
        self._timeline.schedule(
            deadline_at, lambda at: self._close(operation, at), rank=Timeline.DEADLINE
        )
        self._schedule_completion(operation, now)
        return SendResult(
            operation_id=operation_id, guidance=_guidance(check), post_ids=attempt.post_ids
        )

    def _respond(self, decoded: ResponseSend, attempt: _Attempt) -> SendResult:
        address = self._resolve(decoded.to, attempt)
        self._require_known(address)
        now = self.clock.now_ms()
        selected = select_request(self._operations.values(), address.address, self.local_agent, now)
        if isinstance(selected, str):
            raise CollectiveError(self._mint_id(), CollectiveFailure(selected))
        operation = selected
        attempt.operation_id = operation.operation_id
        response = decoded.response
        if isinstance(response, Accept):
            failures = validate_answer(operation.form, response.content)
            if failures:
                raise CollectiveError(
                    operation.operation_id, CollectiveFailure("answer-invalid", fields=failures)
                )
        response_json = response.to_json()
        content = response_content(operation.operation_id, response_json)
        check_content_size(content)
        check = self._check_firewall(
            attempt, address, "response", canonical_json(response_json.get("content", {}))
        )
        outcome = outcome_of(operation.form, self.local_agent, response)
        recipients = tuple(
            name for name in (operation.requester, *operation.members) if name != self.local_agent
        )
        delivery = self._post(
            attempt,
            conversation=address.address,
            address=address.address,
            kind="response",
            operation="response",
            operation_id=operation.operation_id,
            text=None,
            content=content,
            recipients=tuple(sorted(set(recipients))),
            fault=self._take_fault(),
            on_delivered=lambda at, post: self._record_answer(
                operation, self.local_agent, outcome, post, at
            ),
        )
        if delivery.reason == "delivery-pending":
            operation.pending_answers.add(self.local_agent)
        self._raise_delivery_failure(delivery)
        return SendResult(
            operation_id=operation.operation_id,
            guidance=_guidance(check),
            post_ids=attempt.post_ids,
        )

    # -- internals: gate, posts, delivery -------------------------------------------------------

    def _check_firewall(
        self, attempt: _Attempt, address: CanonicalAddress, operation: str, text: str
    ) -> FirewallCheck | None:
        if self.firewall is None:
            return None
        check_id = new_check_id()
        check = self.firewall.check(
            SendCandidate(
                address,
                cast("Literal['multicast', 'gather', 'all_gather', 'response']", operation),
                text,
            ),
            check_id,
        )
        now = self.clock.now_ms()
        self.store.add_check(
            check_id,
            now,
            {
                **check.to_json(),
                "atMs": now,
                "to": attempt.to,
                "address": address.address,
                "operation": operation,
            },
        )
        attempt.check = check
        if check.blocks:
            raise FirewallSendError(check_id, check.refusal or "", check.feedback or "")
        return check

    def _take_fault(self) -> SendFailureReason | None:
        return self._faults.pop(0) if self._faults else None

    def _delivery_fault(
        self, recipients: tuple[str, ...], fault: SendFailureReason | None
    ) -> tuple[SendFailureReason | None, str | None]:
        if fault is not None:
            return fault, None
        for name in recipients:
            if name in self._unreachable:
                reason = self._unreachable[name]
                return (
                    reason,
                    f"{agent_address(name)} could not be reached: {SEND_FAILURE_TEXT[reason]}",
                )
        return None, None

    def _post(
        self,
        attempt: _Attempt,
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
    ) -> _Delivery:
        reason, detail = self._delivery_fault(recipients, fault)
        if reason is not None and reason not in POST_MAY_EXIST_REASONS:
            return _Delivery(None, reason, detail)
        post = self._store_post(
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
            invocation_id=attempt.operation_id,
        )
        attempt.post_ids += (post.post_id,)
        if reason == "delivery-pending":
            attempt.pending = True
            self._pending.append(_Pending(post.post_id, recipients, on_delivered))
            return _Delivery(post, reason)
        if reason == "outcome-unknown":
            return _Delivery(post, reason)
        on_delivered(self.clock.now_ms(), post)
        return _Delivery(post)

    @staticmethod
    def _raise_delivery_failure(delivery: _Delivery) -> None:
        if delivery.reason is not None:
            raise SendError(delivery.reason, delivery.detail)

    def _store_post(
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
    ) -> Post:
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
            )
        except sqlite3.Error as error:
            raise SendError("persistence-failed") from error

    def _mint_id(self) -> str:
        return collective_id(self.local_address, new_nonce())

    # -- internals: collectives -----------------------------------------------------------------

    def _register(self, operation: Operation) -> None:
        self._operations[operation.operation_id] = operation
        self._timeline.schedule(
            operation.deadline_at_ms, lambda at: self._close(operation, at), rank=Timeline.DEADLINE
        )

    def _ask(self, operation: Operation, members: tuple[str, ...], at_ms: int) -> None:
        """A request reached ``members``: each scripted peer answers per its script."""
        if operation.operation_id not in self._operations or not operation.is_live(at_ms):
            return
        for name in members:
            if name == self.local_agent:
                continue
            operation.asked.add(name)
            scripted = self.peer(name).take_scripted(operation.operation_id)
            if scripted is not None:
                response, after_ms = scripted
                self._timeline.schedule(at_ms + after_ms, self._answerer(operation, name, response))

    def _asker(self, operation: Operation, members: tuple[str, ...]) -> DeliveredAction:
        def ask(at_ms: int, post: Post) -> None:
            self._ask(operation, members, at_ms)

        return ask

    def _answerer(
        self,
        operation: Operation,
        member: str,
        response: Accept | Decline | Mapping[str, object] | None,
    ) -> Callable[[int], None]:
        def answer(at_ms: int) -> None:
            self._peer_answered(operation, member, response, at_ms)

        return answer

    def _peer_answered(
        self,
        operation: Operation,
        member: str,
        response: Accept | Decline | Mapping[str, object] | None,
        at_ms: int,
    ) -> Literal["counted", "late", "duplicate"]:
        """A peer's answer: the first counts; one at or after the deadline or close is late."""
        if member in operation.outcomes:
            return "duplicate"
        if not operation.is_live(at_ms):
            return "late"
        outcome = outcome_of(operation.form, member, response)
        if operation.op == "gather":
            conversation = agent_address(member)
            address = agent_address(operation.requester)
        else:
            conversation = address = operation.address
        if isinstance(response, (Accept, Decline)):
            response_json = response.to_json()
        elif response is None:
            response_json = {"action": "decline"}
        else:
            response_json = {
                "action": "accept",
                "content": json.loads(json.dumps(response, default=str)),
            }
        content = response_content(operation.operation_id, response_json)
        post = self._store_post(
            sender=member,
            conversation=conversation,
            address=address,
            kind="response",
            operation="response",
            operation_id=operation.operation_id,
            text=None,
            content=content,
            status="stored",
            held=operation.op == "all_gather",
        )
        self._record_answer(operation, member, outcome, post, at_ms)
        return "counted"

    def _record_answer(
        self, operation: Operation, member: str, outcome: MemberOutcome, post: Post, at_ms: int
    ) -> None:
        operation.pending_answers.discard(member)
        if member in operation.outcomes or not operation.is_live(at_ms):
            return
        operation.outcomes[member] = outcome
        operation.answer_post_ids[member] = post.post_id
        operation.answer_hashes[member] = post.record_hash
        self._schedule_completion(operation, at_ms)

    def _schedule_completion(self, operation: Operation, at_ms: int) -> None:
        # Closing runs from the timeline, so a send's own event always precedes its result.
        if operation.is_complete():
            self._timeline.schedule(
                at_ms, lambda due: self._close(operation, due), rank=Timeline.DEADLINE
            )

    def _close(self, operation: Operation, at_ms: int) -> None:
        """Every member has an outcome, or the deadline came: the requester closes."""
        if operation.closed:
            return
        operation.closed = True
        outcomes = operation.final_outcomes()
        if operation.op == "gather":
            if operation.requester == self.local_agent:
                self._deliver_result(
                    CollectiveResult(
                        operation.operation_id,
                        "gather",
                        operation.address,
                        operation.question,
                        outcomes,
                    ),
                    at_ms,
                )
            return
        included = [
            operation.answer_hashes[member]
            for member in operation.members
            if member in operation.answer_hashes
        ]
        content = close_content(operation.operation_id, included)
        status: Literal["stored", "pending"] = "stored"
        if operation.requester == self.local_agent:
            reason, detail = self._delivery_fault(operation.members, None)
            if reason is not None:
                if reason == "delivery-pending":
                    self._store_post(
                        sender=self.local_agent,
                        conversation=operation.address,
                        address=operation.address,
                        kind="close",
                        operation="close",
                        operation_id=operation.operation_id,
                        text=None,
                        content=content,
                        status="pending",
                        held=False,
                    )
                self._close_failed(operation, SendError(reason, detail), at_ms)
                return
        try:
            close = self._store_post(
                sender=operation.requester,
                conversation=operation.address,
                address=operation.address,
                kind="close",
                operation="close",
                operation_id=operation.operation_id,
                text=None,
                content=content,
                status=status,
                held=False,
            )
        except SendError as error:
            self._close_failed(operation, error, at_ms)
            return
        self.store.publish_held(operation.operation_id, tuple(operation.answer_post_ids.values()))
        self._deliver_result(
            CollectiveResult(
                operation.operation_id,
                "all_gather",
                operation.address,
                operation.question,
                outcomes,
                close.post_id,
            ),
            at_ms,
        )

    def _close_failed(self, operation: Operation, error: SendError, at_ms: int) -> None:
        text = (
            "all_gather failed: the result could not be shared with the group: "
            f"{error.detail if error.detail is not None else SEND_FAILURE_TEXT[error.reason]}"
        )
        self.store.add_item(
            at_ms,
            {
                "kind": "operationFailed",
                "id": operation.operation_id,
                "to": operation.address,
                "error": text,
            },
        )
        self._emit(
            SocialEvent(
                kind="collective-result",
                at_ms=at_ms,
                to=operation.address,
                address=operation.address,
                operation=operation.op,
                outcome="failed",
                text=operation.question,
                reason=error.reason,
                message=text,
                operation_id=operation.operation_id,
                outcomes=operation.final_outcomes(),
            )
        )

    def _deliver_result(self, result: CollectiveResult, at_ms: int) -> None:
        self._results[result.operation_id] = result
        self.store.add_item(at_ms, result.to_json())
        self._emit(
            SocialEvent(
                kind="collective-result",
                at_ms=at_ms,
                to=result.to,
                address=result.to,
                operation=result.op,
                outcome="result",
                text=result.question,
                operation_id=result.operation_id,
                post_ids=() if result.close_post_id is None else (result.close_post_id,),
                outcomes=result.outcomes,
            )
        )

    # -- internals: events ----------------------------------------------------------------------

    def _emit(self, event: SocialEvent) -> None:
        if self.on_event is None:
            return
        emitting, self._emitting = self._emitting, True
        try:
            self.on_event(event)
        finally:
            self._emitting = emitting

    def _firewall_fields(self, attempt: _Attempt) -> dict[str, object]:
        check = attempt.check
        if check is None:
            return {}
        return {
            "check_id": check.check_id,
            "decision": check.decision,
            "mode": check.mode,
            "rule_ids": check.rule_ids,
            "guidance": check.advice,
        }

    def _success_event(
        self, attempt: _Attempt, result: SendResult, *, replayed: bool = False
    ) -> SocialEvent:
        return SocialEvent(
            kind="send",
            at_ms=self.clock.now_ms(),
            to=attempt.to,
            address=attempt.address,
            operation=attempt.operation,
            outcome="replayed" if replayed else "sent",
            text=attempt.text,
            operation_id=result.operation_id,
            post_ids=result.post_ids,
            unreachable=attempt.unreachable,
            failure_delivery=attempt.failure_delivery,
            extra=dict(attempt.extra),
            **self._firewall_fields(attempt),  # type: ignore[arg-type]
        )

    def _failure_event(self, attempt: _Attempt, error: SocialSendFailure) -> SocialEvent:
        reason = _failure_reason(error)
        unreachable = attempt.unreachable
        if isinstance(error, CollectiveError) and error.failure.members:
            unreachable = tuple(f"{item.member}: {item.reason}" for item in error.failure.members)
        may_exist = isinstance(error, SendError) and error.reason == "outcome-unknown"
        if attempt.post_ids or may_exist:
            kind: Literal["send", "refused"] = "send"
            outcome: Literal["pending", "unknown", "refused"] = (
                "pending" if attempt.pending and not may_exist else "unknown"
            )
        else:
            kind, outcome = "refused", "refused"
        fields = self._firewall_fields(attempt)
        if isinstance(error, FirewallSendError):
            fields["check_id"] = error.check_id
        return SocialEvent(
            kind=kind,
            at_ms=self.clock.now_ms(),
            to=attempt.to,
            address=attempt.address,
            operation=attempt.operation,
            outcome=outcome,
            text=attempt.text,
            reason=reason,
            message=error.message,
            operation_id=attempt.operation_id,
            post_ids=attempt.post_ids,
            unreachable=unreachable,
            failure_delivery=attempt.failure_delivery,
            extra=dict(attempt.extra),
            **fields,  # type: ignore[arg-type]
        )


def _failure_reason(error: SocialSendFailure) -> str:
    if isinstance(error, SendError):
        return error.reason
    if isinstance(error, CollectiveError):
        return error.kind
    if isinstance(error, FirewallSendError):
        return "firewall-refused"
    if isinstance(error, MessageTextError):
        return "text-invalid"
    return "input-invalid"


def _guidance(check: FirewallCheck | None) -> Guidance | None:
    return None if check is None else check.guidance


def _event_text(decoded: SendInput) -> str:
    if isinstance(decoded, TextSend):
        return decoded.text
    return json.dumps(decoded.response.to_json(), sort_keys=True, separators=(",", ":"))


def _stated_operation(data: object) -> str:
    if not isinstance(data, Mapping):
        return "multicast"
    if "collectiveResponse" in data:
        return "response"
    collective = data.get("collective")
    if isinstance(collective, Mapping) and collective.get("op") in ("gather", "all_gather"):
        return str(collective["op"])
    return "multicast"
