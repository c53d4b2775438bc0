"""Executing one send: a multicast, a gather or all_gather request, or a response.

:class:`SendExecutor` runs a decoded input after the endpoint's invocation checks: it resolves
the canonical address, checks text, registry, form and content limit (under the endpoint's
lock), has the firewall assess the send (holding no lock), and commits it under the lock: the
check bound to its first post (:mod:`.capture`), posted through the :class:`~.delivery.Network` —
for a collective, opening it in the :class:`~.collective_engine.CollectiveEngine`. What it did is
kept on the :class:`~.events.SendAttempt` for the send's event; refusals are raised as typed
errors.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from pytest_harness_audit.social.addresses import (
    CanonicalAddress,
    agent_address,
    canonical_address,
    unknown_members,
)
from pytest_harness_audit.social.answers import validate_answer
from pytest_harness_audit.social.capture import (
    CheckBinding,
    CheckedSend,
    StaleCapture,
    send_checked,
)
from pytest_harness_audit.social.collective_engine import CollectiveEngine
from pytest_harness_audit.social.collectives import Operation, outcome_of
from pytest_harness_audit.social.content import (
    check_content_size,
    collective_id,
    multicast_content,
    new_check_id,
    new_nonce,
    request_content,
    response_content,
)
from pytest_harness_audit.social.deadline_clock import DeadlineClock
from pytest_harness_audit.social.delivery import DeliveredAction, Network, PostAttempt
from pytest_harness_audit.social.errors import (
    POST_MAY_EXIST_REASONS,
    CollectiveError,
    CollectiveFailure,
    CollectiveFailureKind,
    SendError,
    SendFailureReason,
    UnreachableMember,
)
from pytest_harness_audit.social.events import MemberOutcome, SendAttempt, SendResult
from pytest_harness_audit.social.firewall import (
    FirewallCheck,
    Guidance,
    MessageFirewall,
)
from pytest_harness_audit.social.firewall_rules import SendCandidate
from pytest_harness_audit.social.forms import FormSchemaError, parse_form_schema
from pytest_harness_audit.social.inputs import (
    Accept,
    Collecting,
    ResponseSend,
    SendInput,
    TextSend,
)
from pytest_harness_audit.social.message_json import canonical_message_json, lone_surrogate_index
from pytest_harness_audit.social.store import IntentBinder, PostKind, PostStore


@dataclass(frozen=True)
class _Plan:
    """A send that passed its checks: what the firewall assesses, and how it is committed.

    ``commit`` runs under the endpoint's lock with the check's binder (None without a firewall),
    which it hands to the store with the send's first post; it checks again whatever may have
    changed since the plan was made.
    """

    candidate: SendCandidate
    commit: Callable[[CheckBinding | None], SendResult]


class SendExecutor:
    """Runs the sends of ``local_agent`` (see the module docstring); ``lock`` is the endpoint's."""

    def __init__(
        self,
        local_agent: str,
        registry: frozenset[str],
        firewall: MessageFirewall | None,
        clock: DeadlineClock,
        store: PostStore,
        network: Network,
        collectives: CollectiveEngine,
        lock: threading.RLock,
    ) -> None:
        self.local_agent = local_agent
        self.local_address = agent_address(local_agent)
        self.registry = registry
        self.firewall = firewall
        self.clock = clock
        self.store = store
        self.network = network
        self.collectives = collectives
        self.lock = lock

    def execute(self, decoded: SendInput, attempt: SendAttempt) -> SendResult:
        """Run one decoded send; ``attempt`` keeps what it did (address, posts, check).

        The checks and the commit hold the endpoint's lock; the firewall's assessment between
        them holds none (so a caller that does not hold the lock lets other sends run meanwhile).
        """
        with self.lock:
            if isinstance(decoded, ResponseSend):
                plan = self._plan_response(decoded, attempt)
            elif decoded.collective is None:
                plan = self._plan_multicast(decoded, attempt)
            else:
                plan = self._plan_collect(decoded, decoded.collective, attempt)
        if self.firewall is None:
            with self.lock:
                return plan.commit(None)
        candidate = plan.candidate

        def commit(binding: CheckBinding) -> SendResult:
            attempt.check = binding.check
            return plan.commit(binding)

        checked = CheckedSend(
            self.firewall,
            self.lock,
            assess=lambda: self._assess(attempt, candidate),
            retain=lambda check: self._retain(attempt, candidate, check),
            body_of=lambda check: self._check_body(attempt, candidate, check),
            now_ms=self.clock.now_ms,
        )
        result, attempt.check = send_checked(checked, commit)
        return result

    def _resolve(self, to: str, attempt: SendAttempt) -> CanonicalAddress:
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

    def _plan_multicast(self, decoded: TextSend, attempt: SendAttempt) -> _Plan:
        address = self._resolve(decoded.to, attempt)
        self._check_text(decoded.text)
        self._require_known(address)
        content = multicast_content(decoded.text)
        check_content_size(content)
        fault = cache(self.network.take_fault)  # one fault per invocation, taken at its commit

        def commit(bind: CheckBinding | None) -> SendResult:
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
                fault=fault(),
                on_delivered=lambda at, post: None,
                bind=bind,
            )
            delivery.raise_failure()
            return SendResult(guidance=_guidance(bind), post_ids=attempt.post_ids)

        return _Plan(SendCandidate(address, "multicast", decoded.text), commit)

    def _plan_collect(
        self, decoded: TextSend, collecting: Collecting, attempt: SendAttempt
    ) -> _Plan:
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
        deadline_at = self.clock.now_ms() + collecting.deadline * 1000
        content = request_content(
            decoded.text,
            op=collecting.op,
            operation_id=operation_id,
            nonce=nonce,
            deadline_at_ms=deadline_at,
            requested_schema=collecting.requested_schema,
        )
        check_content_size(content)
        fault = cache(self.network.take_fault)

        def commit(bind: CheckBinding | None) -> SendResult:
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
            self.collectives.add(operation)
            try:
                refused = self._post_requests(attempt, operation, content, fault(), bind)
            except StaleCapture:  # raised before any post exists
                self.collectives.discard(operation_id)
                raise
            if len(refused) == len(operation.members):
                self.collectives.discard(operation_id)
                raise CollectiveError(
                    operation_id, CollectiveFailure("members-unreachable", tuple(refused))
                )
            attempt.unreachable = tuple(f"{item.member}: {item.reason}" for item in refused)
            self.collectives.start(operation, self.clock.now_ms())
            return SendResult(
                operation_id=operation_id, guidance=_guidance(bind), post_ids=attempt.post_ids
            )

        candidate = SendCandidate(
            address, collecting.op, decoded.text, content=collecting.requested_schema
        )
        return _Plan(candidate, commit)

    def _post_requests(
        self,
        attempt: SendAttempt,
        operation: Operation,
        content: list[dict[str, object]],
        fault: SendFailureReason | None,
        bind: CheckBinding | None,
    ) -> list[UnreachableMember]:
        """Post the requests of ``operation`` (``bind`` goes with the first stored one); returns
        the members they could not reach."""
        refused: list[UnreachableMember] = []
        targets = (
            [(agent_address(name), (name,)) for name in operation.members]
            if operation.op == "gather"
            else [(operation.address, operation.members)]
        )
        for conversation, recipients in targets:
            delivery = self._post(
                attempt,
                conversation=conversation,
                address=operation.address,
                kind="request",
                operation=operation.op,
                operation_id=operation.operation_id,
                text=operation.question,
                content=content,
                recipients=recipients,
                fault=fault,
                on_delivered=self.collectives.asker(operation, recipients),
                bind=bind,
            )
            if delivery.post is not None:
                bind = None  # the intent is bound: later posts belong to it
                for name in recipients:
                    operation.request_post_ids[name] = delivery.post.post_id
            if delivery.reason is None:
                continue
            for name in recipients:
                refused.append(UnreachableMember(agent_address(name), delivery.reason))
                if delivery.reason not in POST_MAY_EXIST_REASONS:
                    operation.outcomes[name] = MemberOutcome(agent_address(name), "no-answer")
        return refused

    def _plan_response(self, decoded: ResponseSend, attempt: SendAttempt) -> _Plan:
        address = self._resolve(decoded.to, attempt)
        self._require_known(address)
        selected = self.collectives.select_request(address.address, self.clock.now_ms())
        if isinstance(selected, str):
            raise CollectiveError(self.mint_id(), CollectiveFailure(selected))
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
        outcome = outcome_of(operation.form, self.local_agent, response)
        recipients = tuple(
            name for name in (operation.requester, *operation.members) if name != self.local_agent
        )
        fault = cache(self.network.take_fault)

        def commit(bind: CheckBinding | None) -> SendResult:
            self._still_open(operation, address.address)
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
                fault=fault(),
                on_delivered=lambda at, post: self.collectives.record_answer(
                    operation, self.local_agent, outcome, post, at
                ),
                bind=bind,
            )
            if delivery.reason == "delivery-pending":
                operation.pending_answers.add(self.local_agent)
            delivery.raise_failure()
            return SendResult(
                operation_id=operation.operation_id,
                guidance=_guidance(bind),
                post_ids=attempt.post_ids,
            )

        answered = response_json.get("content", {})
        answer = canonical_message_json(answered)
        return _Plan(SendCandidate(address, "response", answer, content=answered), commit)

    def _still_open(self, operation: Operation, conversation: str) -> None:
        """Refuse the response when ``operation`` is no longer the one request open to the
        local agent in ``conversation`` (it closed, or was answered, while the send was checked)."""
        selected = self.collectives.select_request(conversation, self.clock.now_ms())
        if selected is operation:
            return
        if isinstance(selected, str):
            kind: CollectiveFailureKind = selected
        elif (
            self.local_agent in operation.outcomes or self.local_agent in operation.pending_answers
        ):
            kind = "request-answered"
        else:
            kind = "request-expired"
        raise CollectiveError(operation.operation_id, CollectiveFailure(kind))

    # -- internals: firewall and posts ----------------------------------------------------------

    def _assess(self, attempt: SendAttempt, candidate: SendCandidate) -> FirewallCheck:
        """One firewall check of the send (the inference: the caller holds no lock)."""
        assert self.firewall is not None  # assessed only with a firewall
        attempt.check = self.firewall.check(candidate, new_check_id())
        return attempt.check

    def _check_body(
        self, attempt: SendAttempt, candidate: SendCandidate, check: FirewallCheck
    ) -> dict[str, object]:
        return {
            **check.to_json(),
            "atMs": self.clock.now_ms(),
            "to": attempt.to,
            "address": candidate.address.address,
            "operation": candidate.operation,
        }

    def _retain(self, attempt: SendAttempt, candidate: SendCandidate, check: FirewallCheck) -> None:
        attempt.check = check
        body = self._check_body(attempt, candidate, check)
        self.store.add_check(check.check_id, self.clock.now_ms(), body)

    def _post(
        self,
        attempt: SendAttempt,
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
        bind: IntentBinder | None = None,
    ) -> PostAttempt:
        delivery = self.network.post(
            conversation=conversation,
            address=address,
            kind=kind,
            operation=operation,
            operation_id=operation_id,
            text=text,
            content=content,
            recipients=recipients,
            fault=fault,
            on_delivered=on_delivered,
            invocation_id=attempt.operation_id,
            bind=bind,
        )
        if delivery.post is not None:
            attempt.post_ids += (delivery.post.post_id,)
        if delivery.reason == "delivery-pending":
            attempt.pending = True
        return delivery

    def mint_id(self) -> str:
        """A fresh operation id of the local agent (for a refusal that names none)."""
        return collective_id(self.local_address, new_nonce())


def _guidance(bind: CheckBinding | None) -> Guidance | None:
    return None if bind is None else bind.check.guidance
