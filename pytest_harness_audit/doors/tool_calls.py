"""How the function-tool door drives one call through the gate: one at a time, failing closed.

Frameworks run a model's tool calls concurrently (pydantic-ai and the OpenAI Agents SDK run the
calls of one model response together; sync tools in worker threads, async ones as tasks). The
inspectors judge a call by what changed in the workspace between its start and its end, so two
calls running at once would each be charged with what the other did. :class:`CallTurns` lets
the calls of one gate through one at a time — decide, act, inspect, record — so each record
holds what its own call did and the records follow the order the calls entered the gate.

* A call made from inside another gated call (a tool calling a tool, a task the outer call
  started, or a thread running in its context: ``asyncio.to_thread``,
  ``contextvars.copy_context().run``) goes through at once: it is part of the outer call. A plain
  ``threading.Thread`` or ``loop.run_in_executor`` starts without the context, so a call made
  there waits for the outer call's turn (an outer call that waits for it never ends).
* A sync call made on an event loop's thread while a task of that same loop holds the turn
  cannot wait for it (the loop would stop): it goes through at once, inside that task's turn.
* A framework may stop waiting for a call and go on without it (pydantic-ai's ``Tool(timeout=…)``
  and the Agents SDK's ``timeout_seconds`` abandon a sync tool's worker thread, which runs on):
  the call is then judged and recorded when it ends, maybe after the agent's run. Judging the
  session first waits for such calls (:func:`running_calls`, at most :data:`SETTLE_SECONDS`);
  one still running then fails the session, as a call nothing judged.

An exception raised by the gate itself (an approver that fails, a chain that cannot be
written) is not the tool's: :func:`gate_failure` turns it into a refusal the framework gets as
a blocked call, recorded when the chain can still take it, else noted as the session's chain
fault — either way the session cannot be judged PASS.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pytest_harness_audit.gate.decision import failed_closed
from pytest_harness_audit.gate.seam import describe_exception
from pytest_harness_audit.readers.verdict import Verdict, VerdictReason

if TYPE_CHECKING:
    from pytest_harness_audit.gate.gate import Gate

#: How long (seconds) an async call waits between two looks at a busy turn, at most.
_POLL_MAX = 0.01
#: The code of the verdict reason for a call still running when the session is judged.
RUNNING_CODE = "call-still-running"
#: How long (seconds) judging a session waits for the function-tool calls still running.
SETTLE_SECONDS = 10.0


#: The turns held by the running call and what runs in its context (a tool calling a tool, a
#: task it started, a thread given its context).
_HELD: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "harness_audit_held_turns", default=frozenset()
)


def on_loop_thread() -> bool:
    """Whether the caller runs on a running event loop's thread (where waiting stops the loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class CallTurns:
    """Whose turn it is to go through one gate (see the module docstring)."""

    def __init__(self) -> None:
        self._state = threading.Condition()
        self._busy = False
        self._holder_thread: int | None = None
        self._holder_is_task = False
        #: Calls inside a wrapper: waiting for the turn, or holding it.
        self._running = 0
        #: ``time.monotonic()`` when a call was last cancelled (its work may go on), else None.
        self.cancelled_at: float | None = None
        #: How many calls were cancelled.
        self.cancelled = 0

    def note_cancelled(self) -> None:
        """Note that the framework cancelled a call: what it handed to a thread may go on."""
        with self._state:
            self.cancelled += 1
            self.cancelled_at = time.monotonic()

    def held_here(self) -> bool:
        """Whether the caller runs inside a call of this gate (its turn)."""
        return self._held_here()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Count a call as running from its wrapper's entry to its exit (its record written)."""
        with self._state:
            self._running += 1
        try:
            yield
        finally:
            with self._state:
                self._running -= 1
                self._state.notify_all()

    def settle(self, timeout: float) -> int:
        """Wait, at most ``timeout`` seconds, until no call is running; the number still
        running then. Inside a call (its own turn) nothing is waited for and nothing counted:
        the calls behind it wait for it. On an event loop's thread nothing is waited for (the
        loop would stop, and the calls it runs with it)."""
        if self._held_here():
            return 0
        wait = 0.0 if on_loop_thread() else max(timeout, 0.0)
        with self._state:
            self._state.wait_for(lambda: self._running == 0, timeout=wait)
            return self._running

    def _take(self, *, task: bool) -> bool:
        """Take the turn when it is free (the caller holds ``_state``)."""
        if self._busy:
            return False
        self._busy = True
        self._holder_thread = threading.get_ident()
        self._holder_is_task = task
        return True

    def _give_back(self) -> None:
        with self._state:
            self._busy = False
            self._holder_thread = None
            self._state.notify_all()

    def _held_here(self) -> bool:
        return id(self) in _HELD.get()

    @contextlib.contextmanager
    def _holding(self) -> Iterator[None]:
        token = _HELD.set(_HELD.get() | {id(self)})
        try:
            yield
        finally:
            _HELD.reset(token)
            self._give_back()

    @contextlib.contextmanager
    def sync_turn(self) -> Iterator[None]:
        """Wait for the turn in a sync call (a worker thread, or code a task calls)."""
        if self._held_here():
            yield
            return
        on_loop = on_loop_thread()
        taken = False
        with self._state:
            while not (taken := self._take(task=False)):
                mine = self._holder_thread == threading.get_ident()
                if on_loop and mine and self._holder_is_task:
                    break  # a task of this very loop holds it: waiting would stop the loop
                self._state.wait()
        if not taken:
            yield
            return
        with self._holding():
            yield

    @contextlib.asynccontextmanager
    async def async_turn(self) -> AsyncIterator[None]:
        """Wait for the turn in a coroutine, without holding up its event loop."""
        if self._held_here():
            yield
            return
        pause = 0.0005
        while True:
            with self._state:
                if self._take(task=True):
                    break
            await asyncio.sleep(pause)
            pause = min(pause * 2, _POLL_MAX)
        with self._holding():
            yield


_TURNS: weakref.WeakKeyDictionary[object, CallTurns] = weakref.WeakKeyDictionary()
_TURNS_LOCK = threading.Lock()


def turns_of(gate: object) -> CallTurns:
    """The turns of ``gate`` (one per gate, shared by every tool wrapped over it)."""
    with _TURNS_LOCK:
        turns = _TURNS.get(gate)
        if turns is None:
            turns = _TURNS[gate] = CallTurns()
        return turns


def existing_turns(gate: object) -> CallTurns | None:
    """The turns of ``gate`` when a tool was wrapped over it, else ``None``."""
    with _TURNS_LOCK:
        return _TURNS.get(gate)


def running_calls(gate: object, timeout: float | None = None) -> int:
    """How many function-tool calls of ``gate`` are still running after waiting for them, at
    most ``timeout`` seconds (default :data:`SETTLE_SECONDS`): see :meth:`CallTurns.settle`."""
    turns = existing_turns(gate)
    if turns is None:
        return 0
    return turns.settle(SETTLE_SECONDS if timeout is None else timeout)


def still_running(count: int) -> VerdictReason:
    """The verdict's part for ``count`` calls still running when the session is judged: FAIL,
    what they do is judged by nothing."""
    calls = "a function-tool call was" if count == 1 else f"{count} function-tool calls were"
    return VerdictReason(
        Verdict.FAIL,
        RUNNING_CODE,
        f"{calls} still running when the session was judged (the framework stopped waiting "
        "for it, as at a tool timeout): what it does is not judged",
    )


def gate_failure(
    gate: Gate,
    tool: str,
    params: Mapping[str, Any],
    exc: Exception,
    extra: Mapping[str, Any] | None,
) -> str:
    """Refuse a call the gate failed on; the block text the framework gets.

    The refusal is recorded (``deny``, rule ``gate-error``) when the chain takes it; when it does
    not either, the failure is noted in the session's chain faults (the gate's ``faults``), which
    fail the session and refuse every later call. With neither, ``exc`` is raised again.
    """
    decision = failed_closed(tool, params, describe_exception(exc), gate.root)
    try:
        gate.refuse(decision, extra=extra)
    except Exception as again:
        faults = getattr(gate, "faults", None)
        note = getattr(faults, "note", None)
        if not callable(note):
            raise exc from again
        note(f"{decision.message} (recording the refusal failed: {describe_exception(again)})")
    return str(decision.message)


__all__ = [
    "RUNNING_CODE",
    "SETTLE_SECONDS",
    "CallTurns",
    "existing_turns",
    "gate_failure",
    "on_loop_thread",
    "running_calls",
    "still_running",
    "turns_of",
]
