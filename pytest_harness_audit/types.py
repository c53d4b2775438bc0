"""The closed vocabularies of the package, as ``Literal`` types for users and for mypy."""

from __future__ import annotations

from typing import Literal

#: A policy decision.
Decision = Literal["allow", "deny", "warn"]
#: A call's result status (the R6 ``result.status``).
Status = Literal["success", "error", "blocked"]
#: The door a call came through.
Door = Literal["scripted", "proxy", "hook", "tool", "agent", "social"]
#: A verdict's name.
VerdictName = Literal["PASS", "WARN", "FAIL"]

__all__ = ["Decision", "Door", "Status", "VerdictName"]
