"""The approval step between decide and act: a call a rule decided ``ask`` waits for an approver.

An approver is a callable that receives an :class:`ApprovalRequest` and answers one of
``"approve"``, ``"reject"``, ``("modify", new_params)``, ``"escalate"`` or ``"terminate"``
(a coroutine may answer at a door that awaits, the MCP proxy). Its answer becomes an
:class:`Approval`, written into the call's record as ``approval`` with the approver's id:

* ``approve`` — the call runs;
* ``reject`` — the call is blocked with the approver's reason;
* ``modify`` — the call runs with the new params (judged again by the policy first); the record
  holds both params hashes;
* ``escalate`` — the call is blocked and the gate appends an immune escalation (``notice``);
* ``terminate`` — the call is blocked and the session refuses every further call, in every
  process: the gate reads a ``terminate`` outcome back from the chain (the single source of
  truth), so another hook process or a proxy worker sharing the session's store refuses too.

Fail closed: with no approver, an approver that raises, or an answer that is not one of the
words above, the call is rejected (the record's ``approval.error`` names the answer).
"""

from __future__ import annotations

import fnmatch
import inspect
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_harness_audit.audit.canonical import canonical_hash
from pytest_harness_audit.gate.decision import BLOCK_PREFIX
from pytest_harness_audit.immune.records import Escalation

if TYPE_CHECKING:
    from pytest_harness_audit.gate.decision import GateDecision

#: The decision of a rule that wants a human's approval first.
ASK = "ask"
#: What an approver may answer.
ANSWERS = ("approve", "reject", "modify", "escalate", "terminate")
#: The approver id of the fail-closed answer when no approver is set.
NO_APPROVER = "none"
#: The bytes of a chain line holding an approver's ``terminate`` (records are compact JSON; a
#: line holding them is parsed to make sure).
_TERMINATE_MARK = b'"outcome":"terminate"'
#: How much of the chain is read at a time when looking for a ``terminate``.
_READ_BLOCK = 1 << 20


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approver sees: the call, the rule that asked and why."""

    tool: str
    params: Mapping[str, Any]
    category: str
    rule_id: str | None
    reason: str
    door: str


@dataclass(frozen=True)
class Approval:
    """An approver's answer: its ``outcome`` (one of :data:`ANSWERS`) and who gave it.

    ``params`` are the new params of a ``modify``; ``error`` says why a bad answer was read as
    ``reject``.
    """

    outcome: str
    approver: str
    reason: str = ""
    params: Mapping[str, Any] | None = None
    error: str | None = None

    @property
    def runs(self) -> bool:
        """Whether the call runs (``approve`` or ``modify``)."""
        return self.outcome in ("approve", "modify")


#: An approver: a call's request in, an answer out (or an awaitable answer).
Approver = Callable[[ApprovalRequest], Any]


def read_answer(answer: Any, approver: str) -> Approval:
    """``answer`` as an :class:`Approval`; anything else is a ``reject`` naming the answer.

    A word, ``(word, reason)``, ``("modify", new_params)`` or ``("modify", new_params, reason)``.
    """
    word, rest = (
        (answer[0], tuple(answer[1:])) if isinstance(answer, (tuple, list)) else (answer, ())
    )
    if not isinstance(word, str) or word not in ANSWERS:
        return _bad(approver, f"unknown answer {answer!r} (expected one of {', '.join(ANSWERS)})")
    if word == "modify":
        if not rest or not isinstance(rest[0], Mapping):
            return _bad(approver, f"answer 'modify' needs new params as a mapping, got {answer!r}")
        reason = rest[1] if len(rest) > 1 and isinstance(rest[1], str) else ""
        return Approval("modify", approver, reason, dict(rest[0]))
    reason = rest[0] if rest and isinstance(rest[0], str) else ""
    return Approval(word, approver, reason)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _bad(approver: str, error: str) -> Approval:
    return Approval("reject", approver, f"approver {approver!r}: {error}", error=error)


#: The approver a door supplies for the calls it is making (the proxy's client), with its id.
_DOOR_APPROVER: ContextVar[tuple[Approver, str] | None] = ContextVar("door_approver", default=None)


@contextmanager
def door_approver(approver: Approver | None, name: str) -> Iterator[None]:
    """Within the block, calls that ask go to ``approver`` (recorded as ``name``) unless the gate
    has an approver of its own (a scripted one wins: tests stay deterministic)."""
    token = _DOOR_APPROVER.set(None if approver is None else (approver, name))
    try:
        yield
    finally:
        _DOOR_APPROVER.reset(token)


class Approvals:
    """A gate's approval step: its approver, and whether an approver ended the session."""

    def __init__(self) -> None:
        self.approver: Approver | None = None
        self.name = "scripted"
        #: The approvals whose approver answers while this one has none (:meth:`follow`).
        self._follows: Approvals | None = None
        #: The reason an approver answered ``terminate`` (``None``: the session goes on).
        self.terminated: str | None = None
        #: Bytes of the chain already searched for a ``terminate`` (whole lines only).
        self._read_offset = 0

    def read_terminated(self, chain: Path | None) -> str | None:
        """The reason the session was ended, by this gate or by any process that records into
        the chain at ``chain``: the lines appended since the last look are searched for an
        approver's ``terminate`` (``None``: the session goes on). A chain that cannot be read
        raises (the gate fails closed)."""
        if self.terminated is not None or chain is None:
            return self.terminated
        try:
            descriptor = os.open(chain, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            size = os.fstat(descriptor).st_size
            carry = b""
            while self.terminated is None and self._read_offset + len(carry) < size:
                start = self._read_offset + len(carry)
                block = os.pread(descriptor, min(_READ_BLOCK, size - start), start)
                if not block:
                    break
                data = carry + block
                end = data.rfind(b"\n") + 1  # a line still being written waits for next time
                carry = data[end:]
                self._read_offset += end
                if _TERMINATE_MARK in data[:end]:
                    self.terminated = _terminate_reason(data[:end])
        finally:
            os.close(descriptor)
        return self.terminated

    def set(self, approver: Approver | None, name: str = "scripted") -> None:
        """Use ``approver`` (named ``name`` in the records) for calls decided ``ask``."""
        if approver is not None and not callable(approver):
            raise TypeError(f"approver must be callable, got {type(approver).__name__}")
        self.approver, self.name = approver, name

    def follow(self, other: Approvals) -> None:
        """Answer with ``other``'s approver, read at each call, while none is :meth:`set` here:
        a second gate on a session (the recording proxy's) asks the session's scripted
        approver, set before or after that gate opened, before any door's own approver."""
        self._follows = other

    def current(self) -> tuple[Approver | None, str]:
        """The approver that answers now and its name (``None``: no scripted approver)."""
        if self.approver is None and self._follows is not None:
            return self._follows.current()
        return self.approver, self.name

    def request(self, decision: GateDecision, door: str) -> ApprovalRequest:
        """The request an approver sees for ``decision``."""
        evaluation = decision.evaluation
        return ApprovalRequest(
            decision.tool,
            decision.params,
            evaluation.category,
            evaluation.rule_id,
            evaluation.reason,
            door,
        )

    def ask(self, decision: GateDecision, door: str) -> Approval:
        """The approver's answer for ``decision`` (fail closed; an awaitable answer is refused)."""
        approver, name = self.current()
        if approver is None:
            return Approval("reject", NO_APPROVER, "no approver: a call that asks is rejected")
        try:
            answer = approver(self.request(decision, door))
        except Exception as exc:
            return _bad(name, f"raised {_describe(exc)}")
        if inspect.isawaitable(answer):
            close = getattr(answer, "close", None)
            if close is not None:
                close()
            return _bad(name, "answered with a coroutine at a door that does not await")
        return read_answer(answer, name)

    async def ask_async(self, decision: GateDecision, door: str) -> Approval:
        """:meth:`ask` for a door that awaits (the approver may be a coroutine function); the
        door's approver (:func:`door_approver`) answers when the gate has none."""
        approver, name = self.current()
        if approver is None and (supplied := _DOOR_APPROVER.get()) is not None:
            approver, name = supplied
        if approver is None:
            return Approval("reject", NO_APPROVER, "no approver: a call that asks is rejected")
        try:
            answer = approver(self.request(decision, door))
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:
            return _bad(name, f"raised {_describe(exc)}")
        return read_answer(answer, name)


def settle(
    decision: GateDecision,
    approval: Approval,
    recheck: Callable[[str, Mapping[str, Any]], Any] | None = None,
) -> GateDecision:
    """``decision`` with ``approval`` applied: blocked unless it runs, the record's ``approval``.

    A ``modify`` is decided again by ``recheck`` (the gate's ``decide``: policy, audit store,
    quarantine, outgoing secrets) with the new params: a refusal blocks the call; an ``ask``
    again is taken as answered. Without ``recheck`` a ``modify`` is refused (fail closed).
    """
    part: dict[str, Any] = {"approver": approval.approver, "outcome": approval.outcome}
    if approval.reason:
        part["reason"] = approval.reason
    if approval.error is not None:
        part["error"] = approval.error
    blocked = not approval.runs
    message = ""
    if approval.outcome == "modify" and approval.params is not None:
        part["originalInputHash"] = canonical_hash(decision.params, "params")
        part["modifiedInputHash"] = canonical_hash(approval.params, "params")
        decision.params = approval.params
        if recheck is None:
            blocked, why = True, "no gate to judge them"
        else:
            again = recheck(decision.tool, approval.params)
            decision.shown_target = again.evaluation.target
            blocked, why = bool(again.blocked), str(again.message).removeprefix(BLOCK_PREFIX)
        if blocked:
            message = f"{BLOCK_PREFIX}[web4-approval] modified params refused: {why}"
    if blocked and not message:
        why = approval.reason or f"answered by approver {approval.approver!r}"
        message = f"{BLOCK_PREFIX}[web4-approval] {approval.outcome}: {why}"
    decision.blocked = blocked
    decision.message = message
    decision.constraints = (*decision.constraints, f"approval:{approval.outcome}")
    decision.record_extra = {**(decision.record_extra or {}), "approval": part}
    return decision


def terminated_decision(decision: GateDecision, why: str) -> GateDecision:
    """``decision`` refused because an approver ended the session."""
    part = approval_of(decision.record_extra or {})
    if part is not None and part.get("outcome") == "terminated":
        return decision  # refused so already
    decision.blocked = True
    decision.message = f"{BLOCK_PREFIX}[web4-approval] session terminated: {why}"
    decision.constraints = (*decision.constraints, "approval:terminated")
    decision.record_extra = {
        **(decision.record_extra or {}),
        "approval": {"outcome": "terminated", "reason": why},
    }
    return decision


def was_terminated(decision: GateDecision) -> bool:
    """Whether ``decision`` was refused because an approver ended the session."""
    part = approval_of(decision.record_extra or {})
    return decision.blocked and part is not None and part.get("outcome") == "terminated"


def _terminate_reason(lines: bytes) -> str | None:
    """The reason of the first call record in ``lines`` whose approver answered ``terminate``."""
    for line in lines.splitlines():
        if _TERMINATE_MARK not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        part = approval_of(record) if isinstance(record, dict) else None
        if part is None or part.get("outcome") != "terminate":
            continue
        if record.get("kind", "call") != "call":
            continue
        reason = part.get("reason")
        approver = part.get("approver", NO_APPROVER)
        return str(reason) if reason else f"terminated by approver {approver!r}"
    return None


def approval_of(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``approval`` part of a record (``None`` when it has none)."""
    part = record.get("approval")
    return part if isinstance(part, Mapping) else None


def immune_decision(decision: str, status: str) -> str:
    """The decision the immune ladder reads: an ``ask`` counts as a deny when it was refused."""
    if decision != ASK:
        return decision
    return "deny" if status == "blocked" else "allow"


def escalation_for(record: Mapping[str, Any], clock: float) -> Escalation | None:
    """The immune step of a call an approver escalated (``None`` for every other record)."""
    part = approval_of(record)
    if part is None or part.get("outcome") != "escalate":
        return None
    return Escalation(
        level="notice",
        trigger="approval:escalate",
        score=0.0,
        evidence=(str(record["recordId"]),),
        scope="tool",
        scope_value=str(record["tool"]),
        triggered_by=str(record["recordId"]),
        timestamp=clock,
    )


#: Set while a door records calls that have already happened (the hook's post step).
_RECORDING_ONLY: ContextVar[bool] = ContextVar("recording_only", default=False)


@contextmanager
def recording_only() -> Iterator[None]:
    """Within the block the door records what already happened (a call the host ran, or one it
    refused): the approval step leaves the decisions as the door settled them, a session
    ended meanwhile included (the record says what happened, not what would be decided now)."""
    token = _RECORDING_ONLY.set(True)
    try:
        yield
    finally:
        _RECORDING_ONLY.reset(token)


def _approvals(gate: object, decision: Any) -> Approvals | None:
    """The gate's approval step when ``decision`` goes through it (``None``: it does not)."""
    approvals = getattr(gate, "approvals", None)
    if not isinstance(approvals, Approvals) or getattr(decision, "kind", "call") != "call":
        return None
    if _RECORDING_ONLY.get():
        return None
    return approvals


def _chain_path(gate: Any) -> Path | None:
    path = getattr(getattr(gate, "chain", None), "path", None)
    return path if isinstance(path, Path) else None


def ended(gate: Any, decision: GateDecision) -> GateDecision:
    """``decision`` refused when an approver ended the session, in this process or another (read
    from the gate's chain); else ``decision`` unchanged. Doors that answer before anything is
    recorded (the hook's pre step) call it; :func:`approve` does for the others."""
    approvals = _approvals(gate, decision)
    if approvals is None:
        return decision
    why = approvals.read_terminated(_chain_path(gate))
    return decision if why is None else terminated_decision(decision, why)


def _pending(approvals: Approvals, decision: GateDecision) -> bool:
    answered = decision.record_extra is not None and "approval" in decision.record_extra
    return not decision.blocked and decision.evaluation.decision == ASK and not answered


def _applied(gate: Any, approvals: Approvals, decision: GateDecision, approval: Approval) -> Any:
    settled = settle(decision, approval, gate.decide)
    if approval.outcome == "terminate":
        approvals.terminated = approval.reason or f"terminated by approver {approval.approver!r}"
    return settled


def approve(gate: Any, decision: Any) -> Any:
    """The approval step of a door that does not await: ``decision`` as the approver left it.

    After a ``terminate`` every call is refused; a call decided ``ask`` waits for the approver.
    """
    approvals = _approvals(gate, decision)
    if approvals is None:
        return decision
    if (why := approvals.read_terminated(_chain_path(gate))) is not None:
        return terminated_decision(decision, why)
    if not _pending(approvals, decision):
        return decision
    door = str(getattr(gate, "door", ""))
    return _applied(gate, approvals, decision, approvals.ask(decision, door))


async def approve_async(gate: Any, decision: Any) -> Any:
    """:func:`approve` for a door that awaits (the MCP proxy)."""
    approvals = _approvals(gate, decision)
    if approvals is None:
        return decision
    if (why := approvals.read_terminated(_chain_path(gate))) is not None:
        return terminated_decision(decision, why)
    if not _pending(approvals, decision):
        return decision
    door = str(getattr(gate, "door", ""))
    return _applied(gate, approvals, decision, await approvals.ask_async(decision, door))


def table_approver(table: Mapping[str, Any], where: str = "approvals") -> Approver:
    """An approver from ``{tool glob: answer}``: the first glob (in order) matching the tool's
    name answers; a tool no glob matches is rejected. A bad answer raises ``ValueError`` naming
    the glob and the answer, before any call."""
    rows: list[tuple[str, Any]] = []
    for glob, given in table.items():
        if not isinstance(glob, str):
            raise ValueError(f"{where}: key {glob!r} must be a tool name or glob")
        read = read_answer(given, "check")
        if read.error is not None:
            raise ValueError(f"{where}[{glob!r}]: {read.error}")
        rows.append((glob, given))

    def answer(request: ApprovalRequest) -> Any:
        for glob, given in rows:
            if fnmatch.fnmatchcase(request.tool, glob):
                return given
        return ("reject", f"no approval entry matches tool {request.tool!r}")

    return answer
