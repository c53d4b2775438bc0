"""The result of running one workspace tool, and the exception tools raise to report a failure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ToolStatus = Literal["success", "error"]


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool did: ``status`` ``"success"`` or ``"error"``, its ``output`` and, on error, why.

    ``output`` is a string for every built-in tool (for ``Bash`` it is the captured output even
    when the command failed); custom tools may return any value. ``error_message`` is ``None`` on
    success and a one-line explanation on error.
    """

    status: ToolStatus
    output: Any = None
    error_message: str | None = None

    @classmethod
    def success(cls, output: Any) -> ToolOutcome:
        """A successful outcome carrying ``output``."""
        return cls(status="success", output=output)

    @classmethod
    def failure(cls, message: str, output: Any = None) -> ToolOutcome:
        """An error outcome explained by ``message`` (``output`` is kept when there is some)."""
        return cls(status="error", output=output, error_message=message)

    @property
    def ok(self) -> bool:
        """True when the tool succeeded."""
        return self.status == "success"


class ToolFailure(Exception):
    """Raised inside a tool to end it with an error outcome; the message is what the caller sees.

    ``output`` is attached to the outcome as well (``Bash`` keeps the command's output).
    """

    def __init__(self, message: str, output: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.output = output
