"""Executing one send: a multicast, a gather or all_gather request, or a response.

:class:`SendExecutor` runs a decoded input after the endpoint's invocation checks: it resolves
the canonical address, checks text, registry, form and content limit, asks the firewall
(retaining the check), and posts through the :class:`~.delivery.Network` — for a collective,
opening it in the :class:`~.collective_engine.CollectiveEngine`. What it did is kept on the
:class:`~.events.SendAttempt` for the send's event; refusals are raised as typed errors.
"""

from __future__ import annotations

from typing import Literal, cast

from pytest_harness_audit.social.addresses import (
    CanonicalAddress,
    agent_address,
    canonical_address,
    unknown_members,
)
from pytest_harness_audit.social.answers import validate_answer
from pytest_harness_audit.social.capture import post_bound
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
    FirewallSendError,
    SendError,
    SendFailureReason,
    UnreachableMember,
)
from pytest_harness_audit.social.events import MemberOutcome, SendAttempt, SendResult
from pytest_harness_audit.social.firewall import (
    FirewallCheck,
    Guidance,
    MessageFirewall,
    SendCandidate,
)
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


class SendExecutor:
    """Runs the sends of ``local_agent`` (see the module docstring)."""

    def __init__(
        self,
        local_agent: str,
        registry: frozenset[str],
        firewall: MessageFirewall | None,
        clock: DeadlineClock,
        store: PostStore,
        network: Network,
        collectives: CollectiveEngine,
    ) -> None:
        self.local_agent = local_agent
        self.local_address = agent_address(local_agent)
        self.registry = registry
        self.firewall = firewall
        self.clock = clock
        self.store = store
        self.network = network
        self.collectives = collectives

    def execute(self, decoded: SendInput, attempt: SendAttempt) -> SendResult:
        """Run one decoded send; ``attempt`` keeps what it did (address, posts, check)."""
        if isinstance(decoded, ResponseSend):
            return self._respond(decoded, attempt)
        if decoded.collective is None:
            return self._multicast(decoded, attempt)
        return self._collect(decoded, decoded.collective, attempt)

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

    def _multicast(self, decoded: TextSend, attempt: SendAttempt) -> SendResult:
        address = self._resolve(decoded.to, attempt)
        self._check_text(decoded.text)
        self._require_known(address)
        content = multicast_content(decoded.text)
        check_content_size(content)
        check = self._check_firewall(attempt, address, "multicast", decoded.text, retain=False)
        fault = self.network.take_fault()

        def post(bind: IntentBinder | None) -> PostAttempt:
            return self._post(
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
                bind=bind,
            )

        if check is None or self.firewall is None:
            delivery = post(None)
        else:
            bound = post_bound(
                self.firewall,
                check,
                post,
                recheck=lambda: self._recheck(attempt, address, "multicast", decoded.text),
                retain=lambda kept: self._retain(attempt, address, "multicast", kept),
                body_of=lambda kept: self._check_body(attempt, address, "multicast", kept),
                now_ms=self.clock.now_ms,
            )
            delivery, attempt.check = bound.delivery, bound.check
        delivery.raise_failure()
        return SendResult(guidance=_guidance(attempt.check), post_ids=attempt.post_ids)

    def _collect(
        self, decoded: TextSend, collecting: Collecting, attempt: SendAttempt
    ) -> SendResult:
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
        fault = self.network.take_fault()
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
                on_delivered=self.collectives.asker(operation, recipients),
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
            self.collectives.discard(operation_id)
            raise CollectiveError(
                operation_id, CollectiveFailure("members-unreachable", tuple(refused))
            )
        attempt.unreachable = tuple(f"{item.member}: {item.reason}" for item in refused)
        self.collectives.start(operation, now)
        return SendResult(
            operation_id=operation_id, guidance=_guidance(check), post_ids=attempt.post_ids
        )

    def _respond(self, decoded: ResponseSend, attempt: SendAttempt) -> SendResult:
        address = self._resolve(decoded.to, attempt)
        self._require_known(address)
        now = self.clock.now_ms()
        selected = self.collectives.select_request(address.address, now)
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
        check = self._check_firewall(
            attempt, address, "response", canonical_message_json(response_json.get("content", {}))
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
            fault=self.network.take_fault(),
            on_delivered=lambda at, post: self.collectives.record_answer(
                operation, self.local_agent, outcome, post, at
            ),
        )
        if delivery.reason == "delivery-pending":
            operation.pending_answers.add(self.local_agent)
        delivery.raise_failure()
        return SendResult(
            operation_id=operation.operation_id,
            guidance=_guidance(check),
            post_ids=attempt.post_ids,
        )

    # -- internals: firewall and posts ----------------------------------------------------------

    def _check_firewall(
        self,
        attempt: SendAttempt,
        address: CanonicalAddress,
        operation: str,
        text: str,
        *,
        retain: bool = True,
    ) -> FirewallCheck | None:
        """Check the send; a blocking check is retained and raised. Any other check is retained
        now, or (``retain=False``) when its intent is bound (:mod:`.capture`)."""
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
        attempt.check = check
        if retain or check.blocks:
            self._retain(attempt, address, operation, check)
        if check.blocks:
            raise FirewallSendError(check_id, check.refusal or "", check.feedback or "")
        return check

    def _recheck(
        self, attempt: SendAttempt, address: CanonicalAddress, operation: str, text: str
    ) -> FirewallCheck:
        check = self._check_firewall(attempt, address, operation, text, retain=False)
        assert check is not None  # a recheck runs only with a firewall
        return check

    def _check_body(
        self, attempt: SendAttempt, address: CanonicalAddress, operation: str, check: FirewallCheck
    ) -> dict[str, object]:
        return {
            **check.to_json(),
            "atMs": self.clock.now_ms(),
            "to": attempt.to,
            "address": address.address,
            "operation": operation,
        }

    def _retain(
        self, attempt: SendAttempt, address: CanonicalAddress, operation: str, check: FirewallCheck
    ) -> None:
        attempt.check = check
        body = self._check_body(attempt, address, operation, check)
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


def _guidance(check: FirewallCheck | None) -> Guidance | None:
    return None if check is None else check.guidance
