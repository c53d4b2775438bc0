"""Property: for any call sequence with lifts, levels only drop at a lift, and a quarantined
scope never lets a call through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from immune_support import FakeClock, Gate

from pytest_harness_audit.immune import (
    CREDENTIAL_ACCESS,
    MEMORY_WRITE,
    CallEvent,
    Escalation,
    ImmuneConfig,
    ImmuneLadder,
    Lift,
    level_rank,
)

TOOLS = {
    "Bash": "command",
    "Read": "file_read",
    "Grep": "file_read",
    "WebFetch": "network",
    "send_message": "message",
}


@dataclass(frozen=True)
class Call:
    tool: str
    input_hash: str
    decision: str
    enforced: bool
    status: str
    alerts: tuple[str, ...]
    advance: float


@dataclass(frozen=True)
class LiftOp:
    reason: str


weights = st.sampled_from([0, 0.5, 1, 2, 3])


@st.composite
def configs(draw: Any) -> ImmuneConfig:
    notice = draw(st.sampled_from([1, 2, 3, 5]))
    calls = draw(st.sampled_from([None, 1, 3, 8, 20]))
    seconds = draw(st.sampled_from([None, 2.0, 10.0]) if calls else st.sampled_from([2.0, 10.0]))
    window = {k: v for k, v in (("calls", calls), ("seconds", seconds)) if v is not None}
    return ImmuneConfig.from_dict(
        {
            "window": window,
            "triggers": {
                "enforced_deny": draw(weights),
                "dry_run_deny": draw(weights),
                "warn": draw(weights),
                "credential_access": draw(weights),
                "memory_write": draw(weights),
                "repeated_failure": {
                    "weight": draw(weights),
                    "count": draw(st.integers(1, 4)),
                },
                "flows": [
                    {
                        "id": "exfiltration",
                        "first": {"alerts": [CREDENTIAL_ACCESS]},
                        "then": {"categories": ["network", "message"]},
                        "weight": draw(weights),
                    }
                ],
            },
            "thresholds": {
                "notice": notice,
                "quarantine": notice + draw(st.sampled_from([0, 2, 6])),
            },
            "quarantine_scope": draw(st.sampled_from(["session", "category", "tool"])),
        }
    )


calls = st.builds(
    Call,
    tool=st.sampled_from(sorted(TOOLS)),
    input_hash=st.sampled_from(["a", "b"]),
    decision=st.sampled_from(["allow", "warn", "deny"]),
    enforced=st.booleans(),
    status=st.sampled_from(["success", "error", "blocked"]),
    alerts=st.sampled_from([(), (CREDENTIAL_ACCESS,), (MEMORY_WRITE,)]),
    advance=st.sampled_from([0.0, 0.5, 3.0, 12.0]),
)
operations = st.lists(
    st.one_of(calls, calls, calls, st.builds(LiftOp, st.sampled_from(["ok", "reviewed"]))),
    max_size=60,
)


def quarantined_scopes(history: list[Escalation | Lift]) -> set[tuple[str, str | None]]:
    """Independent model: quarantines recorded since the last lift."""
    active: set[tuple[str, str | None]] = set()
    for step in history:
        if isinstance(step, Lift):
            active.clear()
        elif step.level == "quarantine":
            active.add((step.scope, step.scope_value))
    return active


def covered(scopes: set[tuple[str, str | None]], tool: str) -> bool:
    category = TOOLS[tool]
    return any(
        kind == "session" or (kind == "category" and value == category) or value == tool
        for kind, value in scopes
    )


@settings(max_examples=300, deadline=None)
@given(config=configs(), ops=operations)
def test_levels_drop_only_at_a_lift_and_quarantine_always_blocks(
    config: ImmuneConfig, ops: list[Call | LiftOp]
) -> None:
    clock = FakeClock()
    g = Gate(config, clock)
    for op in ops:
        rank_before = level_rank(g.ladder.level)
        scopes_before = quarantined_scopes(g.ladder.history)
        if isinstance(op, LiftOp):
            g.lift(op.reason)
            assert g.ladder.level == "observe"
            assert isinstance(g.ladder.history[-1], Lift)
            continue
        in_scope = covered(scopes_before, op.tool)
        assert (g.ladder.check(op.tool, TOOLS[op.tool]) is not None) == in_scope
        g.call(
            op.tool,
            TOOLS[op.tool],
            input_hash=op.input_hash,
            decision=op.decision,
            enforced=op.enforced,
            status=op.status,
            alerts=op.alerts,
            advance=op.advance,
        )
        if in_scope:
            assert last_call(g).status == "blocked", "a quarantined scope never runs a call"
        assert level_rank(g.ladder.level) >= rank_before, "no drop without a lift"
        scopes_after = quarantined_scopes(g.ladder.history)
        assert scopes_before <= scopes_after
        assert {(q.scope, q.scope_value) for q in g.ladder.quarantines} == scopes_after
        for tool in TOOLS:
            if covered(scopes_after, tool):
                assert g.ladder.check(tool, TOOLS[tool]) is not None
    replayed = ImmuneLadder.replay(config, g.entries, clock=clock)
    assert replayed.level == g.ladder.level
    assert replayed.quarantines == g.ladder.quarantines
    assert replayed.history == g.ladder.history
    assert replayed.evidence == g.ladder.evidence
    assert replayed.score == g.ladder.score


def last_call(g: Gate) -> CallEvent:
    """The call just recorded (its escalations, if any, follow it)."""
    return next(e for e in reversed(g.entries) if isinstance(e, CallEvent))
