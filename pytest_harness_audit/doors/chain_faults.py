"""A chain its writer can no longer append to: the call goes unrecorded and the session fails.

An append fails (:class:`~pytest_harness_audit.audit.errors.ChainError`) when the chain changed
behind its writer — cut short, edited, its anchor gone: a store changed by a name only built at
run time, which the store rule cannot read — when another process holds its lock for too long,
or when the disk refuses the record (full, a quota, a file-size limit a command lowered on the
harness, an I/O error). That failure used to escape the door as an exception (a traceback in a
test, a protocol error at the proxy). A :class:`GuardedGate` notes it in the session's
:class:`ChainFaults` instead:

* the call whose record could not be written returns to its door as it ran (inspected and
  redacted as usual), with no record;
* every later call of the session is refused before it runs: nothing could record it;
* the session's verdict is FAIL, with the reason ``tamper`` naming the failure.

The hook door runs each event in a process of its own; there the failure is the event's error
line (a ``pre`` refuses the call) and ``session-end`` still judges and reports the session.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.decision import BLOCK_PREFIX, GateDecision
from pytest_harness_audit.gate.store_guard import STORE_RULE_ID, TAMPER_ALERT
from pytest_harness_audit.policy import Evaluation
from pytest_harness_audit.readers.verdict import Verdict, VerdictReason

#: The verdict reason's code.
TAMPER_CODE = "tamper"
#: The key of the stand-in a door gets for a record that could not be written.
UNRECORDED_KEY = "unrecorded"


_MEANING = (
    "tamper: the audit chain can no longer be written (changed outside the harness, its lock "
    "held by another process, or its disk refused the write): "
)


def describe(problem: str) -> str:
    """The one line naming a failed append: what it means, then what the chain said."""
    return problem if problem.startswith(_MEANING) else _MEANING + problem


def is_chain_fault(problem: str) -> bool:
    """Whether ``problem`` is a failed append's line (:func:`describe`)."""
    return problem.startswith(_MEANING)


def open_gate(**options: Any) -> Gate:
    """:meth:`Gate.open` for a door that opens the session per event (the hook door): a chain
    that can no longer be written is one :class:`ChainError` saying what that means."""
    try:
        return Gate.open(**options)
    except ChainError as exc:
        raise ChainError(describe(str(exc))) from None


class ChainFaults:
    """The appends a session's writers could not make (thread-safe: a test thread and a proxy
    thread may both write)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._problems: list[str] = []

    def note(self, problem: str) -> None:
        """Note one failed append (``problem``: the chain's error)."""
        with self._lock:
            self._problems.append(problem)

    @property
    def problems(self) -> tuple[str, ...]:
        """Every failed append's problem, oldest first."""
        with self._lock:
            return tuple(self._problems)

    @property
    def first(self) -> str | None:
        """The first failed append's problem (``None``: every append was made)."""
        with self._lock:
            return self._problems[0] if self._problems else None

    def reasons(self) -> list[VerdictReason]:
        """The verdict's part: FAIL (``tamper``) when any append failed."""
        problems = self.problems
        if not problems:
            return []
        more = f" ({len(problems)} calls not recorded)" if len(problems) > 1 else ""
        return [VerdictReason(Verdict.FAIL, TAMPER_CODE, describe(problems[0]) + more)]


def refusal(tool: str, params: Mapping[str, Any], root: str | None, problem: str) -> GateDecision:
    """The decision for a call after an append failed: refused, as touching the store."""
    reason = f"{describe(problem)}; no further call runs"
    safe = params if isinstance(params, Mapping) else {}
    constraints = ("policy:deny", f"rule:{STORE_RULE_ID}")
    evaluation = Evaluation(
        "deny",
        True,
        STORE_RULE_ID,
        "Audit chain no longer writable",
        None,
        reason,
        constraints,
        "unknown",
        [],
        safe,
        root,
    )
    message = f"{BLOCK_PREFIX}[web4-policy] {reason}"
    return GateDecision(str(tool), safe, evaluation, True, message, constraints, (TAMPER_ALERT,))


class GuardedGate(Gate):
    """A gate whose failed appends end the session (see the module doc) instead of escaping.

    ``faults`` is shared by every gate of the session (the test's and each proxy's).
    """

    def __init__(self, *args: Any, faults: ChainFaults | None = None, **options: Any) -> None:
        super().__init__(*args, **options)
        self.faults = faults if faults is not None else ChainFaults()
        self._closed = False

    @classmethod
    def open_guarded(cls, *, faults: ChainFaults, **options: Any) -> GuardedGate:
        """:meth:`Gate.open`, noting failed appends in ``faults``."""
        gate = cls.open(**options)
        if not isinstance(gate, GuardedGate):  # pragma: no cover - ``open`` builds a ``cls``
            raise TypeError("Gate.open did not build a GuardedGate")
        gate.faults = faults
        return gate

    def decide(self, tool: str, params: Mapping[str, Any]) -> GateDecision:
        """:meth:`Gate.decide`; once an append failed, every call is refused."""
        problem = self.faults.first
        if problem is not None:
            return refusal(tool, params, self.root, problem)
        return super().decide(tool, params)

    def record(self, decision: GateDecision, **fields: Any) -> dict[str, Any]:
        """:meth:`Gate.record`; a failed append is noted, and the door gets a stand-in record
        (``{"unrecorded": problem}``) in place of the one that could not be written."""
        try:
            return super().record(decision, **fields)
        except ChainError as exc:
            if self._closed:
                raise  # a call after the session was closed: the caller's mistake
            self.faults.note(str(exc))
            return {UNRECORDED_KEY: describe(str(exc)), "tool": decision.tool}

    def close(self) -> None:
        """Close the gate's chain (later calls raise ``ChainError``, as on a closed chain)."""
        self._closed = True
        self.chain.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed


__all__ = [
    "TAMPER_CODE",
    "UNRECORDED_KEY",
    "ChainFaults",
    "GuardedGate",
    "describe",
    "is_chain_fault",
    "open_gate",
    "refusal",
]
