"""Session spans handed from one process to the next: their JSON form and the merge of what
parallel calls handed on."""

from __future__ import annotations

from pytest_harness_audit.inspect import SessionSpans


def test_json_round_trip_and_bad_input() -> None:
    spans = SessionSpans(frozenset({"b.py", "a.py"}), frozenset({"f" * 40}))
    assert spans.to_json() == {"lost": ["a.py", "b.py"], "unnamed": ["f" * 40]}
    assert SessionSpans.from_json(spans.to_json()) == spans
    assert SessionSpans.from_json("not an object") == SessionSpans()
    assert SessionSpans.from_json({"lost": "a.py", "unnamed": [1, "c"]}) == SessionSpans(
        frozenset(), frozenset({"c"})
    )


def test_rebased_keeps_what_a_parallel_call_handed_on() -> None:
    seed = SessionSpans(frozenset({"a", "b"}))
    mine = SessionSpans(frozenset({"b", "c"}))  # this call put back a, lost c
    stored = SessionSpans(frozenset({"a", "b", "d"}))  # meanwhile another call lost d
    assert mine.rebased(seed, stored).lost == {"b", "c", "d"}


def test_rebased_drops_what_this_call_put_back_only() -> None:
    seed = SessionSpans(unnamed=frozenset({"x"}))
    mine = SessionSpans(unnamed=frozenset())
    stored = SessionSpans(unnamed=frozenset({"x", "y"}))
    assert mine.rebased(seed, stored).unnamed == {"y"}
