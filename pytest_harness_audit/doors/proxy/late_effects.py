"""What an upstream does to the workspace after its last call was recorded.

Every call the gate watches compares the workspace with the state the previous one left and
records the difference as its ``between`` (:meth:`~pytest_harness_audit.inspect.Inspector.before`),
so a change made between two calls is judged with the next. An upstream may act after its last
call, though: a call that timed out at the proxy is abandoned (``notifications/cancelled``),
and an upstream that ignores the cancellation keeps running — it may plant a git hook seconds
later. With no later call, nothing would ever compare the workspace again.

So when the proxy closes, it makes that comparison once more: it first gives an upstream call
that timed out a bounded grace (:func:`grace_after_timeout` from the moment it timed out: the
call timeout, at least :data:`MIN_GRACE` and at most :data:`MAX_GRACE` seconds), stops the
upstreams, then compares; a change is recorded through the gate's seam as a ``note`` named
:data:`PROXY_CLOSED` (category ``mcp``, the upstream calls' own), its ``effects.between``
judged as a later call's would be — a protected file changed FAILs the verdict. A workspace
unchanged since the last call leaves no record.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio

from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.gate.seam import Outcome, changed_since_last_call

#: The tool name of the note a closing proxy records when the workspace changed after the
#: session's last call.
PROXY_CLOSED = "ProxyClosed"
#: The category the closing comparison is judged under (that of an upstream call).
CLOSING_CATEGORY = "mcp"
#: The least and the most a closing proxy waits for a timed-out upstream call, in seconds.
MIN_GRACE = 1.0
MAX_GRACE = 5.0


def grace_after_timeout(call_timeout: float | None) -> float:
    """How long after a call timed out a closing proxy still waits for its upstream."""
    if call_timeout is None:
        return MIN_GRACE
    return min(max(call_timeout, MIN_GRACE), MAX_GRACE)


class LateEffects:
    """The timed-out upstream calls of a proxy, and the comparison it makes when it closes."""

    def __init__(
        self, gate: GateLike[Any], grace: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._gate = gate
        self._grace = grace
        self._clock = clock
        self._until: float | None = None
        self._timed_out = 0

    def timed_out(self) -> None:
        """Note that an upstream call timed out now (its upstream may still act)."""
        self._timed_out += 1
        self._until = self._clock() + self._grace

    async def wait_for_late_calls(self) -> None:
        """Wait out the grace of the last timed-out call (shielded: the proxy is closing)."""
        if self._until is None:
            return
        left = self._until - self._clock()
        if left > 0:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(min(left, MAX_GRACE))

    async def compare(self) -> None:
        """Record, as a :data:`PROXY_CLOSED` note, a change of the workspace since the last
        watched call (nothing when it is unchanged). A comparison that fails counts as a
        change: the note is recorded and its inspection judged (fail closed)."""
        if not changed_since_last_call(self._gate):
            return
        params: dict[str, Any] = {"timedOutCalls": self._timed_out}

        async def act(_decision: object) -> Outcome:
            return Outcome("success", None, None)

        run: Any = self._gate.run_async
        unjudged = getattr(self._gate, "unjudged", None)
        with anyio.CancelScope(shield=True):
            if callable(unjudged):
                decision = unjudged(
                    PROXY_CLOSED, CLOSING_CATEGORY, params, target=None, kind="note"
                )
                await run(PROXY_CLOSED, params, act, decision=decision)
            else:
                await run(PROXY_CLOSED, params, act)


__all__ = [
    "CLOSING_CATEGORY",
    "MAX_GRACE",
    "MIN_GRACE",
    "PROXY_CLOSED",
    "LateEffects",
    "grace_after_timeout",
]
