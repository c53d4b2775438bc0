"""The proxy's side of tool pinning: check each upstream listing, record ``tool_changed``.

See :mod:`pytest_harness_audit.doors.proxy.pins` for what is pinned and the pin file format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import mcp_types as types

from pytest_harness_audit.doors.proxy.pins import ALERT, ToolChange, ToolPins, check_pin_servers
from pytest_harness_audit.doors.proxy.upstream import ReportLine


def load_pin_file(path: Path, names: Sequence[str], report: ReportLine) -> ToolPins | None:
    """The pins of ``path`` checked against the upstreams' ``names``; ``None`` (and a line
    saying so) when the file does not exist yet and will be written at the first listing."""
    if not path.exists():
        report(
            f"harness-audit proxy: pin file {path} does not exist; "
            "it will be written at the first tools/list"
        )
        return None
    pins = ToolPins.read(path)
    check_pin_servers(path, pins, names)
    return pins


def _is_strict(gate: Any) -> bool:
    policy = getattr(gate, "policy", None)
    if policy is None:
        return False
    spec = getattr(policy, "spec", None)
    return getattr(policy, "name", None) == "strict" or getattr(spec, "preset", None) == "strict"


class PinGuard:
    """Compares every upstream listing with the pins and records each change in the chain.

    ``pin_path``: a pin file that does not exist yet is written after the first listing.
    """

    def __init__(
        self,
        gate: Any,
        pins: ToolPins | None = None,
        *,
        pin_path: Path | None = None,
        report: ReportLine | None = None,
    ) -> None:
        self._gate = gate
        self._pins = pins if pins is not None else ToolPins()
        self._pin_path = pin_path
        self._report = report
        self._verdict = "FAIL" if _is_strict(gate) else "WARN"

    @property
    def pins(self) -> ToolPins:
        """The current baseline."""
        return self._pins

    def listed(self, listings: Mapping[str, Sequence[types.Tool]]) -> list[ToolChange]:
        """Check one aggregated listing (server → its tools); record and return the changes."""
        changes: list[ToolChange] = []
        for server, tools in listings.items():
            changes.extend(self._pins.check(server, tools))
        for change in changes:
            self._record(change)
        path = self._pin_path
        if path is not None and listings and not path.exists():
            self._pins.write(path)
            self._pin_path = None
            if self._report is not None:
                servers = ", ".join(sorted(self._pins.servers))
                self._report(f"harness-audit proxy: wrote pin file {path} (servers: {servers})")
        return changes

    def _record(self, change: ToolChange) -> None:
        params = change.to_dict()
        extra = {
            "alerts": [ALERT],
            "toolChanged": params,
            "judged": {"verdict": self._verdict, "caughtBy": ALERT, "reason": change.summary()},
        }
        unjudged = getattr(self._gate, "unjudged", None)
        if unjudged is not None:
            decision = unjudged(ALERT, "mcp", params, target=change.tool, kind="alert")
        else:
            decision = self._gate.decide(ALERT, params)
        self._gate.record(decision, status="success", extra=extra)
        if self._report is not None:
            self._report(f"harness-audit proxy: {ALERT}: {change.summary()}")
