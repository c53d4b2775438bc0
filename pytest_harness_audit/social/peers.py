"""Scripted peers: the other agents of a test, driven by the test itself.

A peer answers the local agent's gathers and all_gathers as scripted — ``answer(content)``,
``decline()``, or nothing (``no-answer`` at the deadline) — now, after a delay on the endpoint's
clock, or queued for the next request it receives. A peer can also ask the local agent
(``gather``/``all_gather``), send it messages, and become unreachable.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Protocol, TypeAlias

from pytest_harness_audit.social.addresses import agent_address, canonical_address
from pytest_harness_audit.social.collective_engine import CollectiveEngine
from pytest_harness_audit.social.collectives import AnswerStatus, Operation
from pytest_harness_audit.social.content import (
    collective_id,
    multicast_content,
    new_nonce,
    request_content,
)
from pytest_harness_audit.social.deadline_clock import DeadlineClock
from pytest_harness_audit.social.delivery import Network
from pytest_harness_audit.social.errors import SendFailureReason, SocialConfigError
from pytest_harness_audit.social.forms import parse_form_schema
from pytest_harness_audit.social.inputs import (
    Decline,
    IssueList,
    decode_deadline,
    decode_requested_schema,
)
from pytest_harness_audit.social.store import Post, PostStore

ScriptedResponse: TypeAlias = "Decline | Mapping[str, object]"


class PeerHost(Protocol):
    """The public side of an endpoint that its scripted peers drive (a
    :class:`~.endpoint.SocialEndpoint` is one)."""

    @property
    def local_agent(self) -> str:
        """The local agent's name."""

    @property
    def local_address(self) -> str:
        """``agent:<local agent>``."""

    @property
    def registry(self) -> frozenset[str]:
        """The registered peers' names."""

    @property
    def clock(self) -> DeadlineClock:
        """The clock deadlines and delays are measured on."""

    @property
    def store(self) -> PostStore:
        """The post store (posts and the local agent's inbound items)."""

    @property
    def network(self) -> Network:
        """Where posts are stored and delivered, and peers made unreachable."""

    @property
    def collectives(self) -> CollectiveEngine:
        """The open collectives, their answers and closes."""

    def locked(self) -> AbstractContextManager[object]:
        """Hold the endpoint's lock: nothing else sends or polls meanwhile."""

    def poll(self) -> None:
        """Run everything due by now."""

    def deliver_pending(self) -> int:
        """Deliver the pending posts whose recipients are reachable now."""


def _after_ms(after: float) -> int:
    if after < 0:
        raise SocialConfigError(f"after must be zero or more seconds, got {after!r}")
    return round(after * 1000)


class Peer:
    """One registered peer of a :class:`~.endpoint.SocialEndpoint`, scripted by the test."""

    def __init__(self, host: PeerHost, name: str) -> None:
        self._host = host
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
        host = self._host
        with host.locked():
            host.poll()
            target = self._target(operation_id)
            if target is None:
                self._script.append((response, delay))
                return "queued"
            now = host.clock.now_ms()
            if delay > 0:
                self._scheduled.add(target.operation_id)
                host.collectives.schedule_answer(target, self.name, response, now + delay)
                return "scheduled"
            status = host.collectives.answer(target, self.name, response, now)
            host.poll()
            return status

    def _target(self, operation_id: str | None) -> Operation | None:
        collectives = self._host.collectives
        if operation_id is not None:
            operation = collectives.operation(operation_id)
            if operation is None or self.name not in operation.members:
                raise SocialConfigError(
                    f"{self.address} was not asked in operation {operation_id!r}"
                )
            if self.name not in operation.asked:
                raise SocialConfigError(
                    f"the request of operation {operation_id!r} has not reached {self.address}"
                )
            return operation
        now = self._host.clock.now_ms()
        for operation in collectives.operations():
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
        with self._host.locked():
            self._host.network.set_unreachable(self.name, reason)

    def reachable(self) -> None:
        """Posts to this peer succeed again; pending posts it was waiting for are delivered."""
        with self._host.locked():
            self._host.network.set_reachable(self.name)
            self._host.deliver_pending()

    def received(self) -> list[Post]:
        """Posts the local agent delivered to this peer, oldest first."""
        host = self._host
        return [
            post
            for post in host.store.posts(sender=host.local_agent, include_held=True)
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
        host = self._host
        with host.locked():
            host.poll()
            operation = self._open(
                "gather",
                question,
                requested_schema,
                deadline,
                address=host.local_address,
                conversation=self.address,
                members=(host.local_agent,),
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
        host = self._host
        with host.locked():
            host.poll()
            address = canonical_address(to, self.name)
            if address.kind != "group" or host.local_agent not in address.members:
                raise SocialConfigError(
                    f"an all_gather by {self.address} needs a group: address that includes "
                    f"{host.local_address}, got {to!r}"
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
            others = tuple(name for name in operation.members if name != host.local_agent)
            host.collectives.ask(operation, others, host.clock.now_ms())
            host.poll()
            return operation.operation_id

    def send(self, text: str, *, to: str | None = None) -> Post:
        """Post ``text`` to the local agent (default) or to a group that includes it."""
        host = self._host
        with host.locked():
            address = canonical_address(to or host.local_address, self.name)
            if host.local_agent not in address.members:
                raise SocialConfigError(
                    f"{self.address} can only post where {host.local_address} is a member"
                )
            self._require_registered(address.members)
            conversation = self.address if address.kind == "direct" else address.address
            post = host.network.store_post(
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
            host.store.add_item(
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
        host = self._host
        for name in members:
            if name != host.local_agent and name not in host.registry:
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
        host = self._host
        now = host.clock.now_ms()
        nonce = new_nonce()
        operation_id = collective_id(self.address, nonce)
        deadline_at = now + seconds * 1000
        post = host.network.store_post(
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
        operation.request_post_ids[host.local_agent] = post.post_id
        operation.asked.add(host.local_agent)
        host.collectives.open(operation)
        host.store.add_item(
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
