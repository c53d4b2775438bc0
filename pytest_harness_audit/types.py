"""The closed vocabularies of the package, as ``Literal`` types for users and for mypy.

``typing.get_args(Door)`` lists a vocabulary's values at run time. Importing this module loads
nothing but :mod:`typing`.
"""

from __future__ import annotations

from typing import Literal

#: A policy decision.
Decision = Literal["allow", "deny", "warn"]
#: A call's result status (the R6 ``result.status``).
Status = Literal["success", "error", "blocked"]
#: The door a call came through (the record's ``door`` field): scripted calls and scenarios, the
#: recording MCP proxy, host hooks, native function tools, agent runs, social sends, and the
#: ``harness-audit`` command line (an immune lift).
Door = Literal["scripted", "proxy", "hook", "tool", "agent", "social", "cli"]
#: A verdict's name.
VerdictName = Literal["PASS", "WARN", "FAIL"]

__all__ = ["Decision", "Door", "Status", "VerdictName"]
