"""The ladder: every trigger, every scope, window expiry, lift and re-escalation."""

from __future__ import annotations

from typing import Any

import pytest
from immune_support import FakeClock, Gate, gate, make_config

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.immune import (
    CREDENTIAL_ACCESS,
    MEMORY_WRITE,
    QUARANTINE_PREFIX,
    Escalation,
    ImmuneConfig,
    ImmuneLadder,
    Lift,
    format_history,
)

EXFILTRATION = {
    "id": "exfiltration",
    "first": {"alerts": [CREDENTIAL_ACCESS]},
    "then": {"categories": ["network"]},
    "weight": 4,
}


def levels(steps: list[Escalation]) -> list[str]:
    return [step.level for step in steps]


# -- simple triggers ----------------------------------------------------------------------


def test_enforced_denies_climb_notice_then_quarantine() -> None:
    g = gate(triggers={"enforced_deny": 1})
    assert g.deny() == []
    assert g.ladder.level == "observe"
    (notice,) = g.deny()
    assert notice.level == "notice"
    assert notice.trigger == "enforced_deny"
    assert notice.score == 2
    assert notice.threshold == 2
    assert notice.evidence == ("audit:0001", "audit:0002")
    assert notice.triggered_by == "audit:0002"
    assert g.deny() == []
    (quarantine,) = g.deny()
    assert quarantine.level == "quarantine"
    assert quarantine.score == 4
    assert quarantine.evidence == ("audit:0001", "audit:0002", "audit:0003", "audit:0004")
    assert g.ladder.status().level == "quarantine"


@pytest.mark.parametrize(
    ("trigger", "offence"),
    [
        ("enforced_deny", {"decision": "deny", "status": "blocked"}),
        ("dry_run_deny", {"decision": "deny", "enforced": False}),
        ("warn", {"decision": "warn"}),
        ("credential_access", {"alerts": (CREDENTIAL_ACCESS,)}),
        ("memory_write", {"alerts": (MEMORY_WRITE,)}),
    ],
)
def test_each_simple_trigger_counts_only_its_own_offence(
    trigger: str, offence: dict[str, Any]
) -> None:
    g = gate(triggers={trigger: 2})
    others: list[dict[str, Any]] = [
        {"decision": "deny", "status": "blocked"},
        {"decision": "deny", "enforced": False},
        {"decision": "warn"},
        {"alerts": (CREDENTIAL_ACCESS,)},
        {"alerts": (MEMORY_WRITE,)},
        {"status": "error"},
    ]
    for other in others:
        if other != offence:
            assert g.call(**other) == []
    assert g.ladder.score == 0
    assert levels(g.call(**offence)) == ["notice"]
    assert levels(g.call(**offence)) == ["quarantine"]
    assert g.ladder.escalations[-1].trigger == trigger


def test_a_zero_weight_trigger_is_off() -> None:
    g = gate(triggers={"enforced_deny": 0, "warn": 1})
    for _ in range(10):
        assert g.deny() == []
    assert g.ladder.score == 0


def test_jumping_over_both_thresholds_records_both_steps() -> None:
    g = gate(triggers={"credential_access": 5})
    assert levels(g.call(alerts=(CREDENTIAL_ACCESS,))) == ["notice", "quarantine"]
    assert [type(step) for step in g.ladder.history] == [Escalation, Escalation]


# -- repeated failure ---------------------------------------------------------------------


def test_the_same_failing_call_escalates_after_count_failures() -> None:
    g = gate(triggers={"repeated_failure": {"weight": 1, "count": 3}})
    assert g.call(status="error", input_hash="retry") == []
    assert g.call(status="error", input_hash="retry") == []
    assert g.call(status="error", input_hash="retry") == []  # first hit: score 1
    (notice,) = g.call(status="error", input_hash="retry")
    assert notice.trigger == "repeated_failure"
    assert notice.evidence == ("audit:0001", "audit:0002", "audit:0003", "audit:0004")


def test_other_calls_in_between_do_not_break_the_streak() -> None:
    g = gate(triggers={"repeated_failure": {"weight": 2, "count": 3}})
    for _ in range(2):
        g.call(status="error", input_hash="retry")
        g.call("Read", "file_read")
    assert levels(g.call(status="error", input_hash="retry")) == ["notice"]


def test_a_success_of_the_same_call_resets_the_streak() -> None:
    g = gate(triggers={"repeated_failure": {"weight": 2, "count": 3}})
    for _ in range(5):
        g.call(status="error", input_hash="retry")
        g.call(status="error", input_hash="retry")
        g.call(status="success", input_hash="retry")
    assert g.ladder.score == 0


def test_different_inputs_or_tools_are_different_calls() -> None:
    g = gate(triggers={"repeated_failure": {"weight": 2, "count": 2}})
    g.call("Bash", status="error", input_hash="a")
    g.call("Bash", status="error", input_hash="b")
    g.call("Grep", "file_read", status="error", input_hash="a")
    assert g.ladder.score == 0
    assert levels(g.call("Bash", status="error", input_hash="a")) == ["notice"]


def test_blocked_probing_of_a_denied_call_is_a_repeated_failure() -> None:
    g = gate(triggers={"repeated_failure": {"weight": 2, "count": 2}})
    g.deny(input_hash="rm-rf")
    (notice,) = g.deny(input_hash="rm-rf")
    assert notice.trigger == "repeated_failure"


# -- flows --------------------------------------------------------------------------------


def test_secret_read_then_network_is_exfiltration() -> None:
    g = gate(triggers={"flows": [EXFILTRATION]})
    g.call("Read", "file_read", alerts=(CREDENTIAL_ACCESS,))
    g.call("Edit", "file_write")
    steps = g.call("WebFetch", "network")
    assert levels(steps) == ["notice", "quarantine"]
    assert steps[-1].trigger == "flow:exfiltration"
    assert steps[-1].evidence == ("audit:0001", "audit:0003")


def test_flow_order_matters() -> None:
    g = gate(triggers={"flows": [EXFILTRATION]})
    g.call("WebFetch", "network")
    g.call("Read", "file_read", alerts=(CREDENTIAL_ACCESS,))
    assert g.ladder.score == 0


def test_a_call_does_not_pair_with_itself() -> None:
    flow = {"id": "any-two-fetches", "first": {}, "then": {}, "weight": 2}
    g = gate(triggers={"flows": [flow]})
    assert g.call("WebFetch", "network") == []
    assert levels(g.call("WebFetch", "network")) == ["notice"]


def test_secret_then_send_uses_alerts_then_categories() -> None:
    flow = {
        "id": "secret-then-send",
        "first": {"alerts": [CREDENTIAL_ACCESS]},
        "then": {"categories": ["message"]},
        "weight": 4,
    }
    g = gate(triggers={"flows": [flow]})
    g.call("Bash", "command", alerts=(CREDENTIAL_ACCESS,))
    assert g.call("WebFetch", "network") == []
    assert g.call("send_message", "message")[-1].trigger == "flow:secret-then-send"


def test_flow_patterns_can_require_tools_and_statuses() -> None:
    flow = {
        "id": "read-then-fetch",
        "first": {"tools": ["Read"], "statuses": ["success"]},
        "then": {"tools": ["WebFetch"]},
        "weight": 2,
    }
    g = gate(triggers={"flows": [flow]})
    g.call("Read", "file_read", status="error")
    g.call("Grep", "file_read")
    assert g.call("WebFetch", "network") == []
    g.call("Read", "file_read")
    assert levels(g.call("WebFetch", "network")) == ["notice"]


def test_each_later_match_fires_the_flow_again() -> None:
    g = gate(triggers={"flows": [{**EXFILTRATION, "weight": 1}]})
    g.call("Read", "file_read", alerts=(CREDENTIAL_ACCESS,))
    g.call("WebFetch", "network")
    assert levels(g.call("WebFetch", "network")) == ["notice"]


# -- scopes -------------------------------------------------------------------------------


def test_session_scope_blocks_every_call() -> None:
    g = gate(triggers={"enforced_deny": 2})
    g.deny()
    g.deny()
    quarantine = g.ladder.check("Read", "file_read")
    assert quarantine is not None
    assert quarantine.scope == "session" and quarantine.scope_value is None
    assert g.ladder.check("mcp__git__git_status", "mcp") is quarantine
    assert quarantine.message.startswith(QUARANTINE_PREFIX + "the whole session (")
    assert "enforced_deny brought the score to 4" in quarantine.message
    assert "audit:0001, audit:0002" in quarantine.message
    assert "lift with a reason" in quarantine.message


def test_category_scope_blocks_only_the_offending_category() -> None:
    g = gate(triggers={"enforced_deny": 2}, quarantine_scope="category")
    g.deny("Bash", "command")
    (quarantine,) = g.deny("Bash", "command")
    assert (quarantine.scope, quarantine.scope_value) == ("category", "command")
    assert g.ladder.check("Bash", "command") is not None
    assert g.ladder.check("Task", "command") is not None
    assert g.ladder.check("Read", "file_read") is None
    assert "category 'command'" in g.ladder.quarantines[0].message
    assert g.call("Read", "file_read") == [], "a harmless call elsewhere adds no quarantine"
    (second,) = g.deny("WebFetch", "network")
    assert second.scope_value == "network", "a further offence while the score is high"
    assert [q.scope_value for q in g.ladder.quarantines] == ["command", "network"]
    assert g.ladder.check("Read", "file_read") is None


def test_tool_scope_blocks_only_the_offending_tool() -> None:
    g = gate(triggers={"enforced_deny": 2}, quarantine_scope="tool")
    g.deny("Bash", "command")
    g.deny("Bash", "command")
    assert g.ladder.check("Bash", "command") is not None
    assert g.ladder.check("Task", "command") is None
    assert g.ladder.check("Read", "file_read") is None


def test_calls_refused_by_a_quarantine_are_not_evidence() -> None:
    g = gate(triggers={"enforced_deny": 2, "repeated_failure": {"weight": 1, "count": 1}})
    g.deny()
    g.deny()
    before = (g.ladder.score, g.ladder.evidence)
    for _ in range(5):
        assert g.call("Read", "file_read") == []
    assert g.entries[-2].status == "blocked"  # type: ignore[union-attr]
    assert (g.ladder.score, g.ladder.evidence) == before


# -- window expiry ------------------------------------------------------------------------


def test_evidence_older_than_the_window_calls_stops_counting() -> None:
    g = gate(triggers={"enforced_deny": 1}, window={"calls": 3})
    g.deny()
    g.call()
    g.call()
    assert g.deny() == [], "the first deny left the window"
    assert g.ladder.evidence == ("audit:0004",)
    assert levels(g.deny()) == ["notice"]


def test_evidence_older_than_the_window_seconds_stops_counting() -> None:
    g = gate(triggers={"enforced_deny": 1}, window={"seconds": 10})
    g.deny(advance=1)
    assert g.deny(advance=10) == [], "exactly the window length ago is outside"
    assert levels(g.deny(advance=9.5)) == ["notice"]


def test_score_decays_with_the_clock_but_the_level_stays() -> None:
    clock = FakeClock()
    g = Gate(make_config(triggers={"enforced_deny": 1}, window={"seconds": 60}), clock)
    g.deny()
    g.deny()
    assert g.ladder.score == 2
    clock.now += 30
    assert g.ladder.score == 2
    clock.now += 31
    assert g.ladder.score == 0
    assert g.ladder.level == "notice"


def test_both_bounds_apply_together() -> None:
    g = gate(triggers={"enforced_deny": 1}, window={"calls": 5, "seconds": 10})
    g.deny()
    assert g.deny(advance=20) == [], "inside the call bound, outside the time bound"
    for _ in range(5):
        g.call(advance=0.1)
    assert g.deny(advance=0.1) == [], "inside the time bound, outside the call bound"


def test_a_repeated_failure_streak_expires_with_the_window() -> None:
    g = gate(triggers={"repeated_failure": {"weight": 2, "count": 3}}, window={"seconds": 10})
    g.call(status="error", input_hash="retry")
    g.call(status="error", input_hash="retry", advance=6)
    assert g.call(status="error", input_hash="retry", advance=6) == []
    assert levels(g.call(status="error", input_hash="retry", advance=1)) == ["notice"]


def test_a_flow_needs_its_first_call_inside_the_window() -> None:
    g = gate(triggers={"flows": [EXFILTRATION]}, window={"calls": 3})
    g.call("Read", "file_read", alerts=(CREDENTIAL_ACCESS,))
    g.call()
    g.call()
    assert g.call("WebFetch", "network") == []


# -- lift ---------------------------------------------------------------------------------


def test_lift_ends_the_quarantine_and_is_recorded() -> None:
    g = gate(triggers={"enforced_deny": 2}, quarantine_scope="category")
    for _ in range(2):
        g.deny("Bash", "command")
    g.deny("WebFetch", "network")
    g.clock.now += 5
    lift = g.ladder.lift("  reviewed the denials  ")
    assert lift == Lift(
        reason="reviewed the denials",
        timestamp=g.clock.now,
        previous_level="quarantine",
        lifted=(("category", "command"), ("category", "network")),
    )
    assert g.ladder.level == "observe"
    assert g.ladder.quarantines == ()
    assert g.ladder.check("Bash", "command") is None
    assert g.ladder.history[-1] is lift
    assert g.ladder.score == 0 and g.ladder.evidence == ()


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_lift_needs_a_reason(reason: object) -> None:
    g = gate(triggers={"enforced_deny": 2})
    g.deny()
    g.deny()
    with pytest.raises(UsageError, match="reason"):
        g.ladder.lift(reason)  # type: ignore[arg-type]
    assert g.ladder.level == "quarantine"


def test_old_evidence_cannot_requarantine_after_a_lift_but_new_misbehaviour_does() -> None:
    g = gate(triggers={"enforced_deny": 1, "repeated_failure": {"weight": 1, "count": 2}})
    g.deny(input_hash="x")
    assert levels(g.deny(input_hash="x")) == ["notice"]
    assert levels(g.deny(input_hash="x")) == ["quarantine"]
    g.lift()
    assert g.deny(input_hash="x") == [], "no streak, no old denies carried over"
    assert g.ladder.score == 1
    assert levels(g.deny(input_hash="y")) == ["notice"]
    steps = g.deny(input_hash="y")
    assert levels(steps) == ["quarantine"]
    assert steps[0].score == 4
    assert steps[0].evidence == ("audit:0004", "audit:0005", "audit:0006")
    assert [type(s).__name__ for s in g.ladder.history] == [
        "Escalation",
        "Escalation",
        "Lift",
        "Escalation",
        "Escalation",
    ]


def test_a_flow_cannot_span_a_lift() -> None:
    g = gate(triggers={"flows": [EXFILTRATION], "credential_access": 2})
    g.call("Read", "file_read", alerts=(CREDENTIAL_ACCESS,))
    g.lift("the secret was a fixture")
    assert g.call("WebFetch", "network") == []


def test_lifting_a_notice_returns_to_observe() -> None:
    g = gate(triggers={"warn": 1})
    g.call(decision="warn")
    g.call(decision="warn")
    g.lift("expected warnings")
    assert g.ladder.level == "observe"
    assert g.ladder.history[-1].previous_level == "notice"  # type: ignore[union-attr]


# -- disabled, history text ---------------------------------------------------------------


def test_a_disabled_ladder_never_escalates() -> None:
    ladder = ImmuneLadder(ImmuneConfig.for_preset("permissive"))
    g = Gate(ladder.config)
    for _ in range(30):
        assert g.deny(input_hash="same", alerts=(CREDENTIAL_ACCESS,)) == []
    assert g.ladder.level == "observe"
    assert g.ladder.check("Bash", "command") is None


def test_history_text_lists_steps_with_evidence() -> None:
    g = gate(triggers={"enforced_deny": 2})
    assert format_history(g.ladder.history) == "no escalation (level observe)"
    g.deny()
    g.deny()
    g.lift("ok")
    text = format_history(g.ladder.history)
    lines = text.splitlines()
    assert lines[0] == (
        "1. notice: enforced_deny brought the score to 2 (threshold 2; enforced_deny 2); "
        "evidence audit:0001"
    )
    assert lines[1].startswith("2. quarantine: enforced_deny brought the score to 4")
    assert lines[1].endswith("evidence audit:0001, audit:0002")
    assert lines[2] == "3. lift from quarantine (ended the whole session): ok"


def test_status_summarises_level_score_and_evidence() -> None:
    g = gate(triggers={"enforced_deny": 1, "warn": 0.5}, quarantine_scope="tool")
    g.deny()
    g.call(decision="warn")
    g.deny()
    status = g.ladder.status()
    assert status.level == "notice"
    assert status.score == 2.5
    assert status.contributions == (("enforced_deny", 2.0), ("warn", 0.5))
    assert status.evidence == ("audit:0001", "audit:0002", "audit:0003")
    assert "level: notice" in status.describe()
    assert "score: 2.5 (notice at 2, quarantine at 4; 3 calls in the window)" in status.describe()


def test_fractional_weights_add_up_exactly() -> None:
    g = gate(triggers={"warn": 0.1}, thresholds={"notice": 0.3, "quarantine": 1})
    g.call(decision="warn")
    g.call(decision="warn")
    (notice,) = g.call(decision="warn")  # 0.1 + 0.1 + 0.1 < 0.3 in floating point
    assert notice.score == 0.3
