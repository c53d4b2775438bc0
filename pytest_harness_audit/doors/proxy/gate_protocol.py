"""The slice of the gate the proxy relies on, as structural types.

The proxy is one of the gate's doors: it hands every call to the gate's door seam
(``run_async``: decide → act → inspect → record). Typing against this protocol keeps the proxy
usable with any object that offers the seam — the real ``pytest_harness_audit.gate.Gate`` among
them (tests use a small stub built on :func:`pytest_harness_audit.gate.seam.run_call_async`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from pytest_harness_audit.gate.seam import GatedCall, Outcome


class DecisionLike(Protocol):
    """What the proxy reads from a gate decision."""

    @property
    def blocked(self) -> bool:
        """True when the call must not run."""

    @property
    def message(self) -> str:
        """The text the agent reads when the call is blocked."""


DecisionT = TypeVar("DecisionT", bound=DecisionLike)


class GateLike(Protocol[DecisionT]):
    """Decide a tool call before it runs and record its outcome afterwards."""

    def decide(self, tool: str, params: Mapping[str, Any], /) -> DecisionT:
        """Classify and evaluate the call; nothing has run yet."""

    def record(
        self,
        decision: DecisionT,
        /,
        *,
        status: str,
        output: Any = None,
        error_message: str | None = None,
        duration_ms: float | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> object:
        """Append the audit record of a call (status: success, error or blocked)."""

    async def run_async(
        self,
        tool: str,
        params: Mapping[str, Any],
        act: Callable[[Any], Awaitable[Outcome]],
        /,
        *,
        extra: Mapping[str, Any] | None = None,
    ) -> GatedCall:
        """The door seam: decide, run ``act`` if allowed, inspect, record once."""


class CallStatus:
    """The result statuses the proxy records (the R6 ``result.status`` values)."""

    SUCCESS = "success"
    ERROR = "error"
    BLOCKED = "blocked"
