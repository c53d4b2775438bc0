"""A proxied request the gate fails on is refused, recorded and failed, like any door's.

The gate decides before anything runs and fails closed on its own errors (``decide`` turns
one into a ``gate-error`` refusal), but the steps around it can still raise: the approval step
reading the chain for a ``terminate``, an approver's machinery. Such an exception escaping
the door seam reached the client as a bare JSON-RPC error and left no record: the call did not
run, yet the session was judged as if it had never been made (PASS). :func:`run_or_refuse`
records the refusal instead (``deny``, rule ``gate-error``, as the function-tool door does; when
the chain cannot take it the session's chain faults fail the session) and hands the door the
block text to answer with. An exception the request's own act raised, or planned to raise
after its record (an upstream's protocol error), is the request's, and goes on as before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.doors.tool_calls import gate_failure
from pytest_harness_audit.gate.seam import GatedCall, Outcome


async def run_or_refuse(
    gate: GateLike[Any],
    tool: str,
    params: Mapping[str, Any],
    act: Callable[[Any], Awaitable[Outcome]],
) -> GatedCall | str:
    """``gate.run_async(tool, params, act)``, or the recorded refusal's block text when the
    gate itself failed (nothing ran, or what ran is withheld)."""
    own: list[BaseException] = []

    async def watched(decision: Any) -> Outcome:
        try:
            outcome = await act(decision)
        except BaseException as exc:
            own.append(exc)
            raise
        if outcome.reraise is not None:
            own.append(outcome.reraise)
        return outcome

    try:
        return await gate.run_async(tool, params, watched)
    except Exception as exc:
        if any(exc is planned for planned in own):
            raise
        return gate_failure(gate, tool, params, exc, None)  # type: ignore[arg-type]


__all__ = ["run_or_refuse"]
