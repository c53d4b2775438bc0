"""The collectives engine: open gathers and all_gathers, their answers, closes and results.

:class:`CollectiveEngine` holds every open :class:`~.collectives.Operation` (the local agent's
and its peers'), schedules deadlines and scripted answers on a :class:`~.collectives.Timeline`,
counts the first answer of each member, and closes an operation when every member has an
outcome or its deadline comes: a gather's result goes to its requester, an all_gather's close
is posted to the group (publishing the held answers) and its result delivered. Each result,
and each close that could not be posted, is reported as a ``collective-result`` event.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Literal, TypeAlias

from pytest_harness_audit.social.addresses import agent_address
from pytest_harness_audit.social.collectives import Operation, Timeline, outcome_of, select_request
from pytest_harness_audit.social.content import close_content, response_content
from pytest_harness_audit.social.delivery import DeliveredAction, Network
from pytest_harness_audit.social.errors import SEND_FAILURE_TEXT, CollectiveFailureKind, SendError
from pytest_harness_audit.social.events import CollectiveResult, MemberOutcome, SocialEvent
from pytest_harness_audit.social.inputs import Accept, Decline
from pytest_harness_audit.social.store import Post, PostStore

#: An answer as a member gives it: accept, decline, raw content (a scripted peer's), or None.
Response: TypeAlias = "Accept | Decline | Mapping[str, object] | None"
#: The scripted answer a peer has ready for an operation: ``(response, after_ms)``, or None.
ScriptedAnswers = Callable[[str, str], "tuple[Response, int] | None"]


class CollectiveEngine:
    """Every open collective of one endpoint, driven by its timeline (see the module docstring).

    ``scripted(member, operation_id)`` gives a peer's scripted answer when a request reaches
    it; ``emit`` reports results.
    """

    def __init__(
        self,
        local_agent: str,
        store: PostStore,
        network: Network,
        scripted: ScriptedAnswers,
        emit: Callable[[SocialEvent], None],
    ) -> None:
        self.local_agent = local_agent
        self.store = store
        self.network = network
        self._scripted = scripted
        self._emit = emit
        self._operations: dict[str, Operation] = {}
        self._results: dict[str, CollectiveResult] = {}
        self._timeline = Timeline()

    # -- reading --------------------------------------------------------------------------------

    def operation(self, operation_id: str) -> Operation | None:
        """The operation ``operation_id`` (the local agent's or a peer's), if known."""
        return self._operations.get(operation_id)

    def operations(self) -> list[Operation]:
        """Every known operation, oldest first."""
        return list(self._operations.values())

    def result(self, operation_id: str) -> CollectiveResult | None:
        """The result the local agent received for ``operation_id``, if any yet."""
        return self._results.get(operation_id)

    def select_request(self, conversation: str, now_ms: int) -> Operation | CollectiveFailureKind:
        """The one request open to the local agent in ``conversation``, or why there is none."""
        return select_request(self._operations.values(), conversation, self.local_agent, now_ms)

    # -- time -----------------------------------------------------------------------------------

    def run_due(self, now_ms: int) -> int:
        """Run every scheduled answer, deadline and close due by ``now_ms``."""
        return self._timeline.run_due(now_ms)

    # -- opening --------------------------------------------------------------------------------

    def add(self, operation: Operation) -> None:
        """Track ``operation`` while its requests are posted (see :meth:`start`)."""
        self._operations[operation.operation_id] = operation

    def discard(self, operation_id: str) -> None:
        """Forget an operation none of whose requests could be posted."""
        self._operations.pop(operation_id, None)

    def start(self, operation: Operation, now_ms: int) -> None:
        """The local agent's operation is posted: schedule its deadline, and its close now if
        every member already has an outcome."""
        self._schedule_close(operation, operation.deadline_at_ms)
        self._schedule_completion(operation, now_ms)

    def open(self, operation: Operation) -> None:
        """Track a peer's operation and schedule its deadline."""
        self.add(operation)
        self._schedule_close(operation, operation.deadline_at_ms)

    # -- asking and answering -------------------------------------------------------------------

    def ask(self, operation: Operation, members: tuple[str, ...], at_ms: int) -> None:
        """A request reached ``members``: each scripted peer answers per its script."""
        if operation.operation_id not in self._operations or not operation.is_live(at_ms):
            return
        for name in members:
            if name == self.local_agent:
                continue
            operation.asked.add(name)
            scripted = self._scripted(name, operation.operation_id)
            if scripted is not None:
                response, after_ms = scripted
                self.schedule_answer(operation, name, response, at_ms + after_ms)

    def asker(self, operation: Operation, members: tuple[str, ...]) -> DeliveredAction:
        """What runs when the request to ``members`` is delivered: :meth:`ask`."""

        def ask(at_ms: int, post: Post) -> None:
            self.ask(operation, members, at_ms)

        return ask

    def schedule_answer(
        self, operation: Operation, member: str, response: Response, at_ms: int
    ) -> None:
        """``member`` answers ``response`` at ``at_ms`` (see :meth:`answer`)."""

        def answer(due_ms: int) -> None:
            self.answer(operation, member, response, due_ms)

        self._timeline.schedule(at_ms, answer)

    def answer(
        self, operation: Operation, member: str, response: Response, at_ms: int
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
        post = self.network.store_post(
            sender=member,
            conversation=conversation,
            address=address,
            kind="response",
            operation="response",
            operation_id=operation.operation_id,
            text=None,
            content=response_content(operation.operation_id, response_json),
            status="stored",
            held=operation.op == "all_gather",
        )
        self.record_answer(operation, member, outcome, post, at_ms)
        return "counted"

    def record_answer(
        self, operation: Operation, member: str, outcome: MemberOutcome, post: Post, at_ms: int
    ) -> None:
        """Count ``member``'s delivered answer (unless it has one, or the operation ended)."""
        operation.pending_answers.discard(member)
        if member in operation.outcomes or not operation.is_live(at_ms):
            return
        operation.outcomes[member] = outcome
        operation.answer_post_ids[member] = post.post_id
        operation.answer_hashes[member] = post.record_hash
        self._schedule_completion(operation, at_ms)

    # -- closing --------------------------------------------------------------------------------

    def _schedule_close(self, operation: Operation, at_ms: int) -> None:
        self._timeline.schedule(at_ms, lambda due: self._close(operation, due), Timeline.DEADLINE)

    def _schedule_completion(self, operation: Operation, at_ms: int) -> None:
        # Closing runs from the timeline, so a send's own event always precedes its result.
        if operation.is_complete():
            self._schedule_close(operation, at_ms)

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
        close = self._post_close(operation, at_ms)
        if close is None:
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

    def _post_close(self, operation: Operation, at_ms: int) -> Post | None:
        """Post an all_gather's close (None when it could not be shared with the group)."""
        included = [
            operation.answer_hashes[member]
            for member in operation.members
            if member in operation.answer_hashes
        ]
        content = close_content(operation.operation_id, included)

        def store_close(sender: str, status: Literal["stored", "pending"]) -> Post:
            return self.network.store_post(
                sender=sender,
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

        if operation.requester == self.local_agent:
            reason, detail = self.network.fault_for(operation.members, None)
            if reason is not None:
                if reason == "delivery-pending":
                    store_close(self.local_agent, "pending")
                self._close_failed(operation, SendError(reason, detail), at_ms)
                return None
        try:
            return store_close(operation.requester, "stored")
        except SendError as error:
            self._close_failed(operation, error, at_ms)
            return None

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
