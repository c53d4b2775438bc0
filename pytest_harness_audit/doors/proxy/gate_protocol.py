"""The slice of the gate the proxy relies on, as structural types.

The proxy is one of the gate's doors: it asks the gate before anything runs and hands it the
outcome afterwards. Typing against these protocols (rather than importing the gate) keeps the
proxy usable with any object that offers ``decide`` and ``record`` — the real
``pytest_harness_audit.gate.Gate`` among them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar


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
        duration_ms: float = 0.0,
    ) -> object:
        """Append the audit record of a call (status: success, error or blocked)."""


class CallStatus:
    """The result statuses the proxy records (the R6 ``result.status`` values)."""

    SUCCESS = "success"
    ERROR = "error"
    BLOCKED = "blocked"
