"""Scripted peers: the other agents of a test, driven by the test itself.

A peer answers the local agent's gathers and all_gathers as scripted — ``answer(content)``,
``decline()``, or nothing (``no-answer`` at the deadline) — now, after a delay on the endpoint's
clock, or queued for the next request it receives. A peer can also ask the local agent
(``gather``/``all_gather``), send it messages, and become unreachable.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeAlias

from pytest_harness_audit.social.addresses import agent_address, canonical_address
from pytest_harness_audit.social.collectives import AnswerStatus, Operation
from pytest_harness_audit.social.content import (
    collective_id,
    multicast_content,
    new_nonce,
    request_content,
)
from pytest_harness_audit.social.errors import SendFailureReason, SocialConfigError
from pytest_harness_audit.social.forms import parse_form_schema
from pytest_harness_audit.social.inputs import (
    Decline,
    IssueList,
    decode_deadline,
    decode_requested_schema,
)
from pytest_harness_audit.social.store import Post

if TYPE_CHECKING:
    from pytest_harness_audit.social.endpoint import SocialEndpoint

ScriptedResponse: TypeAlias = "Decline | Mapping[str, object]"


def _after_ms(after: float) -> int:
    if after < 0:
        raise SocialConfigError(f"after must be zero or more seconds, got {after!r}")
    return round(after * 1000)


class Peer:
    """One registered peer of a :class:`~.endpoint.SocialEndpoint`, scripted by the test."""

    def __init__(self, endpoint: SocialEndpoint, name: str) -> None:
        self._endpoint = endpoint
        self.name = name
        self.address = agent_address(name)
        self._script: deque[tuple[ScriptedResponse, int]] = deque()
        self._scheduled: set[str] = set()

    def __repr__(self) -> str:
        return f"Peer({self.name!r})"

    # -- answering the local agent --------------------------------------------------------------

    def answer(
        self, content: Mapping[str, object], *, operation_id: str | None = None, after: float = 0.0
    ) -> AnswerStatus:
        """Accept with ``content``: the request named, else the oldest one open to this peer,
        else the next one it receives (``queued``). ``after`` delays the answer (seconds on the
        endpoint's clock) from now, or from the request's arrival when queued.

        Returns ``counted`` (the first answer), ``duplicate`` (a later one, ignored), ``late``
        (at or after the deadline or close, ignored), ``scheduled`` or ``queued``.
        """
        return self._respond(dict(content), operation_id, after)

    def decline(self, *, operation_id: str | None = None, after: float = 0.0) -> AnswerStatus:
        """Decline, as :meth:`answer` places its answer."""
        return self._respond(Decline(), operation_id, after)

    def take_scripted(self, operation_id: str) -> tuple[ScriptedResponse, int] | None:
        """The next queued answer, now spent on ``operation_id`` (used by the endpoint)."""
        if not self._script:
            return None
        self._scheduled.add(operation_id)
        return self._script.popleft()

    def _respond(
        self, response: ScriptedResponse, operation_id: str | None, after: float
    ) -> AnswerStatus:
        delay = _after_ms(after)
        endpoint = self._endpoint
        with endpoint._lock:
            endpoint.poll()
            target = self._target(operation_id)
            if target is None:
                self._script.append((response, delay))
                return "queued"
            now = endpoint.clock.now_ms()
            if delay > 0:
                self._scheduled.add(target.operation_id)
                endpoint._timeline.schedule(
                    now + delay, endpoint._answerer(target, self.name, response)
                )
                return "scheduled"
            status = endpoint._peer_answered(target, self.name, response, now)
            endpoint.poll()
            return status

    def _target(self, operation_id: str | None) -> Operation | None:
        operations = self._endpoint._operations
        if operation_id is not None:
            operation = operations.get(operation_id)
            if operation is None or self.name not in operation.members:
                raise SocialConfigError(
                    f"{self.address} was not asked in operation {operation_id!r}"
                )
            if self.name not in operation.asked:
                raise SocialConfigError(
                    f"the request of operation {operation_id!r} has not reached {self.address}"
                )
            return operation
        now = self._endpoint.clock.now_ms()
        for operation in operations.values():
            if (
                self.name in operation.asked
                and self.name not in operation.outcomes
                and operation.operation_id not in self._scheduled
                and operation.is_live(now)
            ):
                return operation
        return None

    # -- reachability ---------------------------------------------------------------------------

    def unreachable(self, reason: SendFailureReason = "network-unavailable") -> None:
        """Posts to this peer now fail with ``reason`` (``delivery-pending`` queues them)."""
        from pytest_harness_audit.social.endpoint import INJECTABLE_FAULTS

        if reason not in INJECTABLE_FAULTS:
            raise SocialConfigError(
                f"a peer cannot be unreachable with {reason!r}; use one of "
                f"{', '.join(INJECTABLE_FAULTS)}"
            )
        with self._endpoint._lock:
            self._endpoint._unreachable[self.name] = reason

    def reachable(self) -> None:
        """Posts to this peer succeed again; pending posts it was waiting for are delivered."""
        with self._endpoint._lock:
            self._endpoint._unreachable.pop(self.name, None)
            self._endpoint.deliver_pending()

    def received(self) -> list[Post]:
        """Posts the local agent delivered to this peer, oldest first."""
        endpoint = self._endpoint
        return [
            post
            for post in endpoint.store.posts(sender=endpoint.local_agent, include_held=True)
            if post.status == "stored"
            and (
                post.conversation == self.address
                or (
                    post.conversation.startswith("group:")
                    and self.name in post.conversation.removeprefix("group:").split(",")
                )
            )
        ]

    # -- asking and telling the local agent -----------------------------------------------------

    def gather(
        self, question: str, requested_schema: Mapping[str, object], *, deadline: int = 60
    ) -> str:
        """Ask the local agent ``question`` in this peer's direct conversation; returns the
        operation id. The local agent answers with ``respond(self.address, ...)``."""
        endpoint = self._endpoint
        with endpoint._lock:
            endpoint.poll()
            operation = self._open(
                "gather",
                question,
                requested_schema,
                deadline,
                address=endpoint.local_address,
                conversation=self.address,
                members=(endpoint.local_agent,),
            )
            return operation.operation_id

    def all_gather(
        self,
        question: str,
        requested_schema: Mapping[str, object],
        *,
        to: str,
        deadline: int = 60,
    ) -> str:
        """Ask every member of group ``to`` (which must include the local agent); this peer
        closes when all have answered or at the deadline, and the local agent receives the
        result. Returns the operation id."""
        endpoint = self._endpoint
        with endpoint._lock:
            endpoint.poll()
            address = canonical_address(to, self.name)
            if address.kind != "group" or endpoint.local_agent not in address.members:
                raise SocialConfigError(
                    f"an all_gather by {self.address} needs a group: address that includes "
                    f"{endpoint.local_address}, got {to!r}"
                )
            self._require_registered(address.members)
            operation = self._open(
                "all_gather",
                question,
                requested_schema,
                deadline,
                address=address.address,
                conversation=address.address,
                members=address.remote,
            )
            others = tuple(name for name in operation.members if name != endpoint.local_agent)
            endpoint._ask(operation, others, endpoint.clock.now_ms())
            endpoint.poll()
            return operation.operation_id

    def send(self, text: str, *, to: str | None = None) -> Post:
        """Post ``text`` to the local agent (default) or to a group that includes it."""
        endpoint = self._endpoint
        with endpoint._lock:
            address = canonical_address(to or endpoint.local_address, self.name)
            if endpoint.local_agent not in address.members:
                raise SocialConfigError(
                    f"{self.address} can only post where {endpoint.local_address} is a member"
                )
            self._require_registered(address.members)
            conversation = self.address if address.kind == "direct" else address.address
            post = endpoint._store_post(
                sender=self.name,
                conversation=conversation,
                address=address.address,
                kind="message",
                operation="multicast",
                operation_id=None,
                text=text,
                content=multicast_content(text),
                status="stored",
                held=False,
            )
            endpoint.store.add_item(
                post.created_ms,
                {
                    "kind": "multicast",
                    "message": {
                        "postId": post.post_id,
                        "from": self.address,
                        "to": conversation,
                        "text": text,
                    },
                },
            )
            return post

    def _require_registered(self, members: tuple[str, ...]) -> None:
        endpoint = self._endpoint
        for name in members:
            if name != endpoint.local_agent and name not in endpoint.registry:
                raise SocialConfigError(f"{agent_address(name)} is not a registered peer")

    def _open(
        self,
        op: str,
        question: str,
        requested_schema: Mapping[str, object],
        deadline: int,
        *,
        address: str,
        conversation: str,
        members: tuple[str, ...],
    ) -> Operation:
        issues = IssueList()
        seconds = decode_deadline(deadline, "deadline", issues)
        outline = decode_requested_schema(requested_schema, "requestedSchema", issues)
        if issues or seconds is None or outline is None:
            raise SocialConfigError(f"{op} by {self.address}: {issues.detail()}")
        form = parse_form_schema(outline)
        endpoint = self._endpoint
        now = endpoint.clock.now_ms()
        nonce = new_nonce()
        operation_id = collective_id(self.address, nonce)
        deadline_at = now + seconds * 1000
        post = endpoint._store_post(
            sender=self.name,
            conversation=conversation,
            address=address,
            kind="request",
            operation=op,
            operation_id=operation_id,
            text=question,
            content=request_content(
                question,
                op=op,
                operation_id=operation_id,
                nonce=nonce,
                deadline_at_ms=deadline_at,
                requested_schema=outline,
            ),
            status="stored",
            held=False,
        )
        operation = Operation(
            operation_id=operation_id,
            op="gather" if op == "gather" else "all_gather",
            requester=self.name,
            address=address,
            question=question,
            form=form,
            deadline_at_ms=deadline_at,
            members=members,
            local_conversation=conversation,
        )
        operation.request_post_ids[endpoint.local_agent] = post.post_id
        operation.asked.add(endpoint.local_agent)
        endpoint._register(operation)
        endpoint.store.add_item(
            now,
            {
                "kind": "collectiveRequest",
                "id": operation_id,
                "postId": post.post_id,
                "from": self.address,
                "to": conversation,
                "question": question,
                "requestedSchema": dict(outline),
                "deadlineAt": deadline_at,
            },
        )
        return operation
