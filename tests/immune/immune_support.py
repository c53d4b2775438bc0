"""Helpers for the immune tests: a settable clock and a tiny gate that drives a ladder."""

from __future__ import annotations

from typing import Any

from pytest_harness_audit.immune import CallEvent, Entry, Escalation, ImmuneConfig, ImmuneLadder


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


class Gate:
    """Check before a call, record it (blocked when quarantined), observe, record escalations.

    ``entries`` is what an audit chain would hold, in order.
    """

    def __init__(self, config: ImmuneConfig, clock: FakeClock | None = None) -> None:
        self.clock = clock or FakeClock()
        self.ladder = ImmuneLadder(config, clock=self.clock)
        self.entries: list[Entry] = []
        self._count = 0

    def call(
        self,
        tool: str = "Bash",
        category: str = "command",
        *,
        input_hash: str | None = None,
        decision: str = "allow",
        enforced: bool = True,
        status: str = "success",
        alerts: tuple[str, ...] = (),
        advance: float = 1.0,
    ) -> list[Escalation]:
        self.clock.now += advance
        self._count += 1
        if self.ladder.check(tool, category) is not None:
            status = "blocked"
        event = CallEvent(
            record_id=f"audit:{self._count:04d}",
            tool=tool,
            category=category,
            input_hash=input_hash if input_hash is not None else f"h{self._count}",
            decision=decision,  # type: ignore[arg-type]
            enforced=enforced,
            status=status,  # type: ignore[arg-type]
            alerts=alerts,
            timestamp=self.clock.now,
        )
        self.entries.append(event)
        steps = self.ladder.observe(event)
        self.entries.extend(steps)
        return steps

    def deny(self, tool: str = "Bash", category: str = "command", **kw: Any) -> list[Escalation]:
        return self.call(tool, category, decision="deny", status="blocked", **kw)

    def lift(self, reason: str = "reviewed") -> None:
        self.entries.append(self.ladder.lift(reason))

    @property
    def last_id(self) -> str:
        return f"audit:{self._count:04d}"


def make_config(**sections: Any) -> ImmuneConfig:
    """A config with every trigger off except those given; notice at 2, quarantine at 4."""
    data: dict[str, Any] = {
        "window": {"calls": 100},
        "triggers": {},
        "thresholds": {"notice": 2, "quarantine": 4},
        "quarantine_scope": "session",
    }
    data.update(sections)
    return ImmuneConfig.from_dict(data)


def gate(**sections: Any) -> Gate:
    """A :class:`Gate` on :func:`make_config` ``(**sections)``."""
    return Gate(make_config(**sections))
