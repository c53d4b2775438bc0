"""Collective operations (gather, all_gather) as state, and the timeline that drives deadlines.

An :class:`Operation` is one request and its members' outcomes; the first answer per member
counts, and answers at or after the deadline or the close change nothing. A :class:`Timeline`
orders what happens at a time — deadlines before answers due at the same instant, so an answer
at the deadline is late — and runs it when the endpoint polls its clock.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from pytest_harness_audit.social.addresses import agent_address
from pytest_harness_audit.social.answers import validate_answer
from pytest_harness_audit.social.errors import CollectiveFailureKind, answer_fields_text
from pytest_harness_audit.social.events import CollectiveResult, MemberOutcome
from pytest_harness_audit.social.forms import FormSchema
from pytest_harness_audit.social.inputs import Accept, Decline, IssueList, decode_answer_content

AnswerStatus: TypeAlias = Literal["counted", "late", "duplicate", "scheduled", "queued"]


@dataclass
class Operation:
    """One gather or all_gather, requested by the local agent or by a peer.

    ``address`` is the send's canonical address as the requester named it; ``members`` every
    asked agent's name (byte order); ``local_conversation`` is where, seen from the local agent,
    a member's request lives (for an operation a peer requested of the local agent).
    """

    operation_id: str
    op: Literal["gather", "all_gather"]
    requester: str
    address: str
    question: str
    form: FormSchema
    deadline_at_ms: int
    members: tuple[str, ...]
    local_conversation: str | None = None
    request_post_ids: dict[str, str] = field(default_factory=dict)
    asked: set[str] = field(default_factory=set)
    outcomes: dict[str, MemberOutcome] = field(default_factory=dict)
    answer_post_ids: dict[str, str] = field(default_factory=dict)
    answer_hashes: dict[str, str] = field(default_factory=dict)
    pending_answers: set[str] = field(default_factory=set)
    closed: bool = False
    result: CollectiveResult | None = None

    def is_live(self, now_ms: int) -> bool:
        """Whether answers still count: not closed and before the deadline."""
        return not self.closed and now_ms < self.deadline_at_ms

    def is_open_to_members(self, now_ms: int) -> bool:
        """Whether a member may still answer: before the deadline, and for an all_gather before
        the close (a gather's members never see its result, only its deadline)."""
        return now_ms < self.deadline_at_ms and (self.op == "gather" or not self.closed)

    def is_complete(self) -> bool:
        """Whether every member has an outcome."""
        return all(member in self.outcomes for member in self.members)

    def final_outcomes(self) -> tuple[MemberOutcome, ...]:
        """Each member's outcome in member order, ``no-answer`` for members without one."""
        return tuple(
            self.outcomes.get(member, MemberOutcome(agent_address(member), "no-answer"))
            for member in self.members
        )


def outcome_of(
    form: FormSchema, member: str, response: Accept | Decline | Mapping[str, object] | None
) -> MemberOutcome:
    """A member's outcome for a response: ``declined`` for a decline (or None), ``answered``
    for content that passes the form, ``invalid{reason}`` otherwise.

    ``response`` may be raw content (a mapping), as a scripted peer gives it.
    """
    address = agent_address(member)
    if response is None or isinstance(response, Decline):
        return MemberOutcome(address, "declined")
    raw = response.content if isinstance(response, Accept) else response
    issues = IssueList()
    content = decode_answer_content(raw, "", issues)
    if content is None:
        return MemberOutcome(address, "invalid", reason=issues.detail())
    failures = validate_answer(form, content)
    if failures:
        return MemberOutcome(address, "invalid", reason=answer_fields_text(failures))
    plain = {
        key: list(value) if isinstance(value, tuple) else value for key, value in content.items()
    }
    return MemberOutcome(address, "answered", content=plain)


def select_request(
    operations: Iterable[Operation], conversation: str, local_agent: str, now_ms: int
) -> Operation | CollectiveFailureKind:
    """The one request open to the local agent in ``conversation``, or why there is none.

    ``request-ambiguous`` when several are open, ``request-answered`` when the open ones are
    answered, ``request-expired`` when the conversation's requests are past their deadline or
    closed, ``request-none`` when it has none.
    """
    candidates = [
        operation
        for operation in operations
        if operation.requester != local_agent
        and local_agent in operation.members
        and operation.local_conversation == conversation
    ]
    live = [operation for operation in candidates if operation.is_open_to_members(now_ms)]
    unanswered = [
        operation
        for operation in live
        if local_agent not in operation.outcomes and local_agent not in operation.pending_answers
    ]
    if len(unanswered) == 1:
        return unanswered[0]
    if len(unanswered) > 1:
        return "request-ambiguous"
    if live:
        return "request-answered"
    if candidates:
        return "request-expired"
    return "request-none"


@dataclass(order=True)
class _Entry:
    due_ms: int
    rank: int
    seq: int
    action: Callable[[int], None] = field(compare=False)


class Timeline:
    """Actions due at a time, run in time order by :meth:`run_due`."""

    DEADLINE = 0
    ANSWER = 1

    def __init__(self) -> None:
        self._heap: list[_Entry] = []
        self._seq = itertools.count()

    def schedule(self, due_ms: int, action: Callable[[int], None], rank: int = ANSWER) -> None:
        """Run ``action(due_ms)`` once the clock reaches ``due_ms``."""
        heapq.heappush(self._heap, _Entry(due_ms, rank, next(self._seq), action))

    def run_due(self, now_ms: int) -> int:
        """Run every action due at or before ``now_ms``, oldest first; returns how many ran."""
        ran = 0
        while self._heap and self._heap[0].due_ms <= now_ms:
            entry = heapq.heappop(self._heap)
            entry.action(entry.due_ms)
            ran += 1
        return ran

    def __len__(self) -> int:
        return len(self._heap)
