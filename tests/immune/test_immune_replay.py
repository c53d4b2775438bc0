"""The chain is the source of truth: stored records read back, and replay gives the same ladder."""

from __future__ import annotations

import json
from typing import Any

import pytest
from immune_support import FakeClock, Gate, gate, make_config

from pytest_harness_audit.immune import (
    CREDENTIAL_ACCESS,
    CallEvent,
    Entry,
    Escalation,
    ImmuneConfig,
    ImmuneLadder,
    ImmuneRecordError,
    Lift,
)


def state(ladder: ImmuneLadder) -> tuple[Any, ...]:
    return (
        ladder.level,
        ladder.score,
        ladder.evidence,
        ladder.quarantines,
        ladder.history,
        ladder.status(),
    )


def through_json(entries: list[Entry]) -> list[Entry]:
    """Store each entry as a JSON line and read it back, as another process would."""
    kinds = {"call": CallEvent, "escalation": Escalation, "lift": Lift}
    names = {CallEvent: "call", Escalation: "escalation", Lift: "lift"}
    lines = [json.dumps({"kind": names[type(e)], "data": e.to_dict()}) for e in entries]
    read: list[Entry] = []
    for line in lines:
        stored = json.loads(line)
        read.append(kinds[stored["kind"]].from_dict(stored["data"]))  # type: ignore[attr-defined]
    return read


def busy_session(config: ImmuneConfig, clock: FakeClock) -> Gate:
    g = Gate(config, clock)
    g.call("Read", "file_read", alerts=(CREDENTIAL_ACCESS,))
    g.deny("Bash", "command", input_hash="rm")
    g.deny("Bash", "command", input_hash="rm")
    g.call("WebFetch", "network", decision="warn")
    g.call("Bash", "command", status="error", input_hash="pytest")
    g.call("Bash", "command", status="error", input_hash="pytest", advance=30)
    g.lift("reviewed")
    g.call("Bash", "command", status="error", input_hash="pytest")
    g.call("Read", "file_read", alerts=(CREDENTIAL_ACCESS,))
    g.call("WebFetch", "network")
    g.call("Read", "file_read")
    return g


@pytest.mark.parametrize("scope", ["session", "category", "tool"])
@pytest.mark.parametrize("via_json", [False, True])
def test_replay_rebuilds_the_same_ladder(scope: str, via_json: bool) -> None:
    config = ImmuneConfig.from_dict(
        {**ImmuneConfig.for_preset("strict").to_dict(), "quarantine_scope": scope}
    )
    clock = FakeClock()
    live = busy_session(config, clock)
    assert any(isinstance(e, Lift) for e in live.ladder.history)
    assert live.ladder.escalations, "the session must escalate for the test to mean anything"
    entries = through_json(live.entries) if via_json else live.entries
    replayed = ImmuneLadder.replay(config, entries, clock=clock)
    assert state(replayed) == state(live.ladder)


def test_a_replayed_ladder_continues_exactly_like_the_live_one() -> None:
    config = make_config(
        triggers={"enforced_deny": 1, "repeated_failure": {"weight": 1, "count": 2}},
        thresholds={"notice": 3, "quarantine": 6},
        quarantine_scope="category",
    )
    clock = FakeClock()
    live = Gate(config, clock)
    live.deny(input_hash="a")
    live.deny(input_hash="a")
    assert live.ladder.level == "notice"
    replayed = ImmuneLadder.replay(config, live.entries, clock=clock)
    later = [
        CallEvent("audit:9001", "Read", "file_read", "q", "allow", True, "error", (), 2000.0),
        CallEvent("audit:9002", "Bash", "command", "a", "deny", True, "blocked", (), 2001.0),
        CallEvent("audit:9003", "Bash", "command", "a", "deny", True, "blocked", (), 2002.0),
    ]
    live_steps = [step for event in later for step in live.ladder.observe(event)]
    replayed_steps = [step for event in later for step in replayed.observe(event)]
    assert [s.level for s in live_steps] == ["quarantine"]
    assert replayed_steps == live_steps
    assert state(replayed) == state(live.ladder)


def test_recorded_escalations_are_facts_not_recomputed() -> None:
    # A chain written under a stricter policy stays quarantined when read under a laxer one.
    strict = make_config(triggers={"enforced_deny": 5})
    g = Gate(strict)
    g.deny()
    assert g.ladder.level == "quarantine"
    lax = make_config(triggers={"enforced_deny": 0})
    replayed = ImmuneLadder.replay(lax, g.entries)
    assert replayed.level == "quarantine"
    assert replayed.check("Read", "file_read") is not None


def test_a_chain_with_only_calls_has_evidence_but_no_level() -> None:
    config = make_config(triggers={"enforced_deny": 1})
    g = Gate(config)
    g.deny()
    g.deny()
    calls = [e for e in g.entries if isinstance(e, CallEvent)]
    replayed = ImmuneLadder.replay(config, calls)
    assert replayed.level == "observe", "only recorded escalations raise the level"
    assert replayed.evidence == ("audit:0001", "audit:0002")


def test_replay_refuses_an_unknown_entry() -> None:
    with pytest.raises(ImmuneRecordError, match="cannot replay"):
        ImmuneLadder.replay(make_config(), ["not an entry"])  # type: ignore[list-item]


def test_records_round_trip() -> None:
    g = gate(triggers={"enforced_deny": 2}, quarantine_scope="tool")
    g.deny()
    g.deny()
    g.lift("done")
    for entry in g.entries:
        data = json.loads(json.dumps(entry.to_dict()))
        assert type(entry).from_dict(data) == entry


@pytest.mark.parametrize(
    ("kind", "data", "shown"),
    [
        (CallEvent, {"recordId": "a"}, "field 'tool' is missing"),
        (
            CallEvent,
            {
                "recordId": "a",
                "tool": "Bash",
                "category": "command",
                "inputHash": "h",
                "decision": "block",
                "enforced": True,
                "status": "success",
                "timestamp": 1,
            },
            "field 'decision' must be one of allow, warn, deny, got 'block'",
        ),
        (
            CallEvent,
            {
                "recordId": "a",
                "tool": "Bash",
                "category": "command",
                "inputHash": "h",
                "decision": "allow",
                "enforced": "yes",
                "status": "success",
                "timestamp": 1,
            },
            "field 'enforced' must be true or false, got 'yes'",
        ),
        (Escalation, [], "expected a mapping"),
        (
            Escalation,
            {
                "level": "panic",
                "trigger": "t",
                "score": 1,
                "evidence": [],
                "scope": "session",
                "threshold": 1,
                "timestamp": 0,
            },
            "field 'level' must be one of notice, quarantine, got 'panic'",
        ),
        (
            Escalation,
            {
                "level": "quarantine",
                "trigger": "t",
                "score": 1,
                "evidence": [],
                "scope": "tool",
                "scopeValue": None,
                "threshold": 1,
                "timestamp": 0,
            },
            "field 'scopeValue' must be null exactly when the scope is 'session'",
        ),
        (
            Escalation,
            {
                "level": "notice",
                "trigger": "t",
                "score": "high",
                "evidence": [],
                "scope": "session",
                "threshold": 1,
                "timestamp": 0,
            },
            "field 'score' must be a number, got 'high'",
        ),
        (
            Lift,
            {"reason": "", "timestamp": 0, "previousLevel": "notice"},
            "field 'reason' must be a non-empty text",
        ),
        (
            Lift,
            {"reason": "r", "timestamp": 0, "previousLevel": "notice", "lifted": [{"scope": 1}]},
            "lift.lifted: field 'scope' must be one of session, category, tool, got 1",
        ),
    ],
)
def test_bad_stored_records_name_field_and_value(kind: Any, data: Any, shown: str) -> None:
    with pytest.raises(ImmuneRecordError) as caught:
        kind.from_dict(data)
    assert shown in str(caught.value)
