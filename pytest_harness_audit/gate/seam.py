"""The one door seam: decide → act → inspect → record (DESIGN §2).

Every door hands a call to :meth:`Gate.run <pytest_harness_audit.gate.Gate.run>` (or
``run_async``) with an *act*: the function that performs the call once the gate allows it. The
gate decides before anything runs, calls the act only when the call is allowed, lets its
inspectors look at what the call did, and appends exactly one record. No door decides, inspects
or records on its own.

The act returns an :class:`Outcome`. Exceptions an act raises are recorded as an ``error``
outcome and then re-raised, so a failing act can never leave a call unrecorded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from pytest_harness_audit.gate.approvals import approve, approve_async
from pytest_harness_audit.types import Status

if TYPE_CHECKING:
    from pytest_harness_audit.gate.decision import GateDecision


@dataclass(frozen=True)
class Outcome:
    """What an act reports: its status, the output the agent receives, and record extras.

    ``extra`` adds top-level fields to the call's record (e.g. ``social`` for message sends).
    ``reraise`` is an exception the door wants raised after the record is written (a protocol
    error the client must see as such, or a cancellation).
    """

    status: Status
    output: Any = None
    error_message: str | None = None
    duration_ms: float | None = None
    extra: Mapping[str, Any] | None = None
    reraise: BaseException | None = None

    @classmethod
    def success(cls, output: Any = None, **fields: Any) -> Outcome:
        """A call that ran and succeeded."""
        return cls("success", output, **fields)

    @classmethod
    def error(cls, message: str, output: Any = None, **fields: Any) -> Outcome:
        """A call that ran (or tried to) and failed with ``message``."""
        return cls("error", output, message, **fields)


@dataclass(frozen=True)
class CallFindings:
    """What an inspector saw a call do: alerts, effects, a verdict part, a redacted output.

    ``verdict`` is ``"FAIL"`` or ``"WARN"`` when the findings count towards the session's
    verdict, with ``reason`` and the ``caught_by`` kind (``effect`` or ``output``).
    ``output`` replaces the output the agent receives when ``redacted`` is set.
    """

    alerts: tuple[str, ...] = ()
    effects: Mapping[str, Any] | None = None
    verdict: str | None = None
    reason: str = ""
    caught_by: str = ""
    redacted: bool = False
    output: Any = None
    #: The error message the agent reads instead of the act's, when ``redacted`` is set.
    error_message: str | None = None

    def merged(self, other: CallFindings) -> CallFindings:
        """These findings and ``other``'s (the worse verdict, the later redaction)."""
        rank = {None: 0, "WARN": 1, "FAIL": 2}
        worse = other if rank.get(other.verdict, 0) > rank.get(self.verdict, 0) else self
        effects = {**(self.effects or {}), **(other.effects or {})} or None
        alerts = tuple(dict.fromkeys((*self.alerts, *other.alerts)))
        redacting = other if other.redacted else self
        return CallFindings(
            alerts,
            effects,
            worse.verdict,
            worse.reason,
            worse.caught_by,
            redacting.redacted,
            redacting.output,
            redacting.error_message,
        )


NO_FINDINGS = CallFindings()


class CallInspector(Protocol):
    """Looks at what a call did. ``before`` runs just before the act, ``after`` just after."""

    def before(self, tool: str, category: str, params: Mapping[str, Any]) -> object:
        """Take whatever the inspector needs to compare against later (a workspace snapshot)."""

    def after(
        self, token: object, tool: str, category: str, params: Mapping[str, Any], outcome: Outcome
    ) -> CallFindings:
        """What the call did, given ``before``'s token and the act's outcome."""


@runtime_checkable
class ReadHolder(Protocol):
    """An inspector that tells the auditor's own reads of files from a call's."""

    def hold_reads(self) -> None:
        """The auditor is about to read files itself."""

    def release_reads(self) -> None:
        """The auditor's own reading is over."""


@contextmanager
def own_reading(inspectors: Iterable[object]) -> Iterator[None]:
    """The auditor itself reads files meanwhile (judging a search reads the files it would
    match): an inspector that tells whose reads are whose (``hold_reads``/``release_reads``,
    :meth:`.inspection.SessionInspection.hold_reads`) leaves them out of any call's."""
    # the attributes ``isinstance(item, ReadHolder)`` checks, without the runtime protocol
    # check's cost on every call
    holders: list[ReadHolder] = [
        cast(ReadHolder, item)
        for item in inspectors
        if callable(getattr(item, "hold_reads", None))
        and callable(getattr(item, "release_reads", None))
    ]
    for holder in holders:
        holder.hold_reads()
    try:
        yield
    finally:
        for holder in holders:
            holder.release_reads()


@dataclass
class GatedCall:
    """A call after the seam: its decision, its record, its outcome and what the agent gets."""

    decision: GateDecision
    record: dict[str, Any]
    outcome: Outcome
    findings: CallFindings = field(default=NO_FINDINGS)

    @property
    def blocked(self) -> bool:
        """Whether the gate refused the call (the act never ran)."""
        return self.decision.blocked

    @property
    def status(self) -> Status:
        """``success``, ``error`` or ``blocked``."""
        return self.outcome.status

    @property
    def output(self) -> Any:
        """The output the agent receives (redacted when inspection found a secret)."""
        return self.findings.output if self.findings.redacted else self.outcome.output

    @property
    def error_message(self) -> str | None:
        """The error message the agent reads (the block message for blocked calls)."""
        if self.findings.redacted and self.findings.error_message is not None:
            return self.findings.error_message
        return self.outcome.error_message


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` (or the type alone) for an exception an act raised."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class SeamGate(Protocol):
    """The part of a gate the seam drives: decide, record, and its inspectors."""

    def decide(self, tool: str, params: Mapping[str, Any], /) -> Any:
        """Classify and evaluate the call; nothing has run yet."""

    def record(
        self,
        decision: Any,
        /,
        *,
        status: str,
        output: Any = None,
        error_message: str | None = None,
        duration_ms: float | None = None,
        extra: Mapping[str, Any] | None = None,
        observed: Any = None,
    ) -> Any:
        """Append the call's record (``observed``: what in-process observers see)."""


def _inspectors(gate: object) -> tuple[CallInspector, ...]:
    return tuple(getattr(gate, "inspectors", ()))


def _category(decision: Any) -> str:
    return str(getattr(decision, "category", "unknown"))


def _look_before(
    gate: object, decision: Any, tool: str, params: Mapping[str, Any]
) -> list[tuple[CallInspector, object]]:
    category = _category(decision)
    return [
        (inspector, inspector.before(tool, category, params)) for inspector in _inspectors(gate)
    ]


def _look_after(
    tokens: list[tuple[CallInspector, object]],
    decision: Any,
    tool: str,
    params: Mapping[str, Any],
    outcome: Outcome,
) -> CallFindings:
    findings = NO_FINDINGS
    category = _category(decision)
    current = outcome
    for inspector, token in tokens:
        found = inspector.after(token, tool, category, params, current)
        findings = findings.merged(found)
        if found.redacted:
            current = Outcome(
                current.status,
                found.output,
                current.error_message,
                current.duration_ms,
                current.extra,
                current.reraise,
            )
    return findings


def _rank(verdict: object) -> int:
    return {"WARN": 1, "FAIL": 2}.get(str(verdict), 0)


def _judged(extra: Mapping[str, Any]) -> object:
    """The verdict an act's outcome judged its call already (a door's own finding)."""
    judged = extra.get("judged")
    return judged.get("verdict") if isinstance(judged, Mapping) else None


def _record(gate: SeamGate, decision: Any, outcome: Outcome, findings: CallFindings) -> Any:
    extra: dict[str, Any] = dict(outcome.extra or {})
    if findings.alerts:
        decided = tuple(getattr(decision, "alerts", ()))
        extra["alerts"] = list(dict.fromkeys((*decided, *findings.alerts)))
    if findings.effects:
        effects = dict(findings.effects)
        secrets = effects.pop("secrets", None)
        if effects:
            extra["effects"] = effects
        if secrets:
            known = extra.get("secrets")
            extra["secrets"] = [*known, *secrets] if isinstance(known, list) else secrets
    if findings.verdict is not None and _rank(findings.verdict) >= _rank(_judged(extra)):
        extra["judged"] = {
            "verdict": findings.verdict,
            "reason": findings.reason,
            "caughtBy": findings.caught_by,
        }
    if findings.redacted:
        # in-process observers (the secret ledger) still see what the tool really returned
        error = outcome.error_message
        return gate.record(
            decision,
            status=outcome.status,
            output=findings.output,
            error_message=error if findings.error_message is None else findings.error_message,
            duration_ms=outcome.duration_ms,
            extra=extra or None,
            observed=outcome.output,
        )
    return gate.record(
        decision,
        status=outcome.status,
        output=outcome.output,
        error_message=outcome.error_message,
        duration_ms=outcome.duration_ms,
        extra=extra or None,
    )


def _blocked(gate: SeamGate, decision: Any, extra: Mapping[str, Any] | None) -> GatedCall:
    # the gate writes the block message into the record itself
    record = _record(gate, decision, Outcome("blocked", extra=extra), NO_FINDINGS)
    message = str(getattr(decision, "message", "") or "[blocked]")
    return GatedCall(decision, record, Outcome("blocked", None, message, extra=extra))


def _not_inspectable(
    gate: SeamGate, decision: Any, extra: Mapping[str, Any] | None, exc: BaseException
) -> GatedCall:
    """Inspection could not look before the call: it does not run, and the session fails."""
    message = f"[blocked] inspection failed before the call: {describe_exception(exc)}"
    findings = CallFindings(("inspection_error",), None, "FAIL", message, "inspection", False, None)
    outcome = Outcome("blocked", None, message, extra=extra)
    record = _record(gate, decision, outcome, findings)
    return GatedCall(decision, record, outcome, findings)


def _with_extra(outcome: Outcome, extra: Mapping[str, Any] | None) -> Outcome:
    if not extra:
        return outcome
    return Outcome(
        outcome.status,
        outcome.output,
        outcome.error_message,
        outcome.duration_ms,
        {**extra, **(outcome.extra or {})},
        outcome.reraise,
    )


def run_call(
    gate: SeamGate,
    tool: str,
    params: Mapping[str, Any],
    act: Callable[[Any], Outcome],
    *,
    extra: Mapping[str, Any] | None = None,
    decision: Any = None,
) -> GatedCall:
    """Decide ``tool(params)``; run ``act`` only if allowed; inspect; record once.

    ``decision`` skips deciding (a decision made earlier, e.g. in the hook's pre step).
    """
    if decision is None:
        decision = gate.decide(tool, params)
    decision = approve(gate, decision)
    params = getattr(decision, "params", params)  # an approver may have modified them
    ready = _prepare(gate, tool, params, extra, decision)
    if isinstance(ready, GatedCall):
        return ready
    decided, tokens = ready
    try:
        outcome = act(decided)
    except BaseException as exc:
        outcome = Outcome.error(describe_exception(exc), reraise=exc)
    return _finish(gate, decided, tool, params, tokens, _with_extra(outcome, extra))


def _prepare(
    gate: SeamGate,
    tool: str,
    params: Mapping[str, Any],
    extra: Mapping[str, Any] | None,
    decision: Any,
) -> GatedCall | tuple[Any, list[tuple[CallInspector, object]]]:
    """Decide and look before the act; a finished (refused) call when it must not run."""
    if decision is None:
        decision = gate.decide(tool, params)
    if decision.blocked:
        return _blocked(gate, decision, extra)
    try:
        return decision, _look_before(gate, decision, tool, params)
    except Exception as exc:
        return _not_inspectable(gate, decision, extra, exc)


async def run_call_async(
    gate: SeamGate,
    tool: str,
    params: Mapping[str, Any],
    act: Callable[[Any], Awaitable[Outcome]],
    *,
    extra: Mapping[str, Any] | None = None,
    decision: Any = None,
) -> GatedCall:
    """:func:`run_call` for an act that is a coroutine (the MCP proxy)."""
    if decision is None:
        decision = gate.decide(tool, params)
    decision = await approve_async(gate, decision)
    params = getattr(decision, "params", params)  # an approver may have modified them
    ready = _prepare(gate, tool, params, extra, decision)
    if isinstance(ready, GatedCall):
        return ready
    decided, tokens = ready
    try:
        outcome = await act(decided)
    except BaseException as exc:
        outcome = Outcome.error(describe_exception(exc), reraise=exc)
    return _finish(gate, decided, tool, params, tokens, _with_extra(outcome, extra))


def _finish(
    gate: SeamGate,
    decision: Any,
    tool: str,
    params: Mapping[str, Any],
    tokens: list[tuple[CallInspector, object]],
    outcome: Outcome,
) -> GatedCall:
    try:
        findings = _look_after(tokens, decision, tool, params, outcome)
    except Exception as exc:
        # an inspector that breaks must not let the call pass unjudged: fail closed
        findings = CallFindings(
            ("inspection_error",),
            None,
            "FAIL",
            f"inspection failed: {describe_exception(exc)}",
            "inspection",
            True,
            "[withheld: inspection failed]",
        )
    record = _record(gate, decision, outcome, findings)
    gated = GatedCall(decision, record, outcome, findings)
    if outcome.reraise is not None:
        raise outcome.reraise
    return gated


def changed_since_last_call(gate: object) -> bool:
    """Whether an inspector of ``gate`` sees the workspace changed since its last call ended
    (an inspector whose comparison fails counts as a change: fail closed). A door asks it before
    it records what a call's leftover work did after its record (a timed-out proxied call, a
    cancelled function-tool call)."""
    for inspector in getattr(gate, "inspectors", ()):
        check = getattr(inspector, "changed_since_last", None)
        if not callable(check):
            continue
        try:
            if check():
                return True
        except Exception:
            return True
    return False
