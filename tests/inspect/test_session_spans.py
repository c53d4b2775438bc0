"""Session spans handed from one process to the next: their JSON form and the merge of what
parallel calls handed on."""

from __future__ import annotations

from pytest_harness_audit.inspect import SessionSpans
from pytest_harness_audit.inspect.spans import ReadMemory


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


def test_what_was_read_round_trips_and_bad_entries_are_left_out() -> None:
    read = ReadMemory(
        frozenset({("c8c3cb26cb69cfc0", 32, 0, 8)}), frozenset({("c8c3cb26cb69cfc0", 3, 8, True)})
    )
    spans = SessionSpans(read=read)
    assert SessionSpans.from_json(spans.to_json()) == spans
    assert "read" not in SessionSpans().to_json()
    bad = {
        "pieces": [
            ["f", 32, 8, 8],  # empty
            ["f", 32, 30, 40],  # past the core
            ["f", 32, True, 8],  # not a number
            [1, 32, 0, 8],  # no fingerprint
            ["f", 32, 0],  # short
            ["f", 32, 24, 32],
        ],
        "cuts": [["f", 3, 8, 1], ["f", -1, 8, True], ["f", 0, 12, False]],
    }
    assert ReadMemory.from_json(bad) == ReadMemory(
        frozenset({("f", 32, 24, 32)}), frozenset({("f", 0, 12, False)})
    )
    assert ReadMemory.from_json(["f", 32, 0, 8]) == ReadMemory()


def test_what_was_read_is_joined_with_what_parallel_calls_read() -> None:
    seed = SessionSpans(read=ReadMemory(frozenset({("f", 32, 0, 8)})))
    mine = SessionSpans(read=ReadMemory(frozenset({("f", 32, 0, 8), ("f", 32, 8, 16)})))
    stored = SessionSpans(read=ReadMemory(frozenset({("f", 32, 0, 8), ("g", 20, 4, 12)})))
    merged = mine.rebased(seed, stored)
    assert merged.read.pieces == {("f", 32, 0, 16), ("g", 20, 4, 12)}
