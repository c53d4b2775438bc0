"""``match.rateLimit``: the rule fires once ``maxCount`` earlier matching calls fall inside the
sliding window; the session owns the counter and the clock is injectable."""

from __future__ import annotations

from typing import Any

import pytest
from policy_support import policy, rule

from pytest_harness_audit.policy import Policy, SlidingWindowCounter
from pytest_harness_audit.policy.ratelimit import HitLog, RateHits, ReplayedHits


class FakeClock:
    """A clock the test moves by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limited(max_count: int = 2, window_ms: float = 10_000, **match: Any) -> Policy:
    return policy(
        rule(
            "burst",
            decision="deny",
            reason="Too many",
            rateLimit={"maxCount": max_count, "windowMs": window_ms},
            **match,
        )
    )


def test_fires_only_once_max_count_earlier_calls_are_in_the_window() -> None:
    clock = FakeClock()
    counter = SlidingWindowCounter(clock)
    p = limited(max_count=2)
    decisions = []
    for _ in range(4):
        decisions.append(p.evaluate("Bash", {"command": "x"}, rate_counter=counter).decision)
        clock.now += 1
    assert decisions == ["allow", "allow", "deny", "deny"]


def test_calls_leave_the_window_as_time_passes() -> None:
    clock = FakeClock()
    counter = SlidingWindowCounter(clock)
    p = limited(max_count=1, window_ms=5_000)
    assert p.evaluate("Bash", {"command": "x"}, rate_counter=counter).decision == "allow"
    clock.now += 4
    assert p.evaluate("Bash", {"command": "x"}, rate_counter=counter).decision == "deny"
    clock.now += 5  # the first call is 9 s old, the second exactly 5 s: both outside
    assert p.evaluate("Bash", {"command": "x"}, rate_counter=counter).decision == "allow"
    clock.now += 10
    assert p.evaluate("Bash", {"command": "x"}, rate_counter=counter).decision == "allow"


def test_only_calls_matching_the_other_criteria_count() -> None:
    clock = FakeClock()
    counter = SlidingWindowCounter(clock)
    p = limited(max_count=1, tools=["WebFetch"])
    for _ in range(5):
        assert p.evaluate("Read", {"file_path": "x"}, rate_counter=counter).decision == "allow"
    assert p.evaluate("WebFetch", {"url": "u"}, rate_counter=counter).decision == "allow"
    assert p.evaluate("Read", {"file_path": "x"}, rate_counter=counter).decision == "allow"
    evaluation = p.evaluate("WebFetch", {"url": "u"}, rate_counter=counter)
    assert (evaluation.decision, evaluation.rule_id, evaluation.reason) == (
        "deny",
        "burst",
        "Too many",
    )


def test_never_fires_without_a_counter() -> None:
    p = limited(max_count=1)
    for _ in range(5):
        assert p.evaluate("Bash", {"command": "x"}).decision == "allow"


def test_a_rate_limited_rule_falls_through_to_later_rules() -> None:
    counter = SlidingWindowCounter(FakeClock())
    p = policy(
        rule("burst", rateLimit={"maxCount": 1, "windowMs": 1000}),
        rule("fallback", decision="warn", priority=2),
    )
    first = p.evaluate("Bash", {"command": "x"}, rate_counter=counter)
    second = p.evaluate("Bash", {"command": "x"}, rate_counter=counter)
    assert (first.rule_id, second.rule_id) == ("fallback", "burst")


def test_the_counter_counts_per_key_and_reports_earlier_hits() -> None:
    clock = FakeClock()
    counter = SlidingWindowCounter(clock)
    assert [counter.hit("a", 1000) for _ in range(3)] == [0, 1, 2]
    assert counter.hit("b", 1000) == 0
    clock.now += 0.5
    assert counter.hit("a", 1000) == 3
    clock.now += 0.9  # the first three are 1.4 s old now
    assert counter.hit("a", 1000) == 1


def test_the_default_clock_is_monotonic_time() -> None:
    counter = SlidingWindowCounter()
    assert counter.hit("k", 60_000) == 0
    assert counter.hit("k", 60_000) == 1


def test_rate_limit_is_part_of_the_rule() -> None:
    rules = limited(max_count=3, window_ms=250).rules
    assert rules[0].match.rate_limit is not None
    assert rules[0].match.rate_limit.max_count == 3
    assert rules[0].match.rate_limit.window_ms == 250.0


def test_hits_learnt_late_are_kept_in_time_order() -> None:
    clock = FakeClock()
    counter = SlidingWindowCounter(clock)
    counter.add("k", 995.0)
    counter.add("k", 990.0)  # older, learnt later: must not hide behind the newer one
    counter.add("other", 999.0)
    assert counter.hit("k", 8_000) == 1  # the window starts at 992 s: only 995 is inside
    clock.now += 1
    counter.add("k", 1000.5)  # between the two live hits
    assert counter.hit("k", 8_000) == 3


def test_a_hit_log_passes_hits_on_and_keeps_them() -> None:
    clock = FakeClock()
    counter = SlidingWindowCounter(clock)
    counter.hit("burst", 10_000)
    log = HitLog(counter)
    p = limited(max_count=1)
    assert p.evaluate("Bash", {"command": "x"}, rate_counter=log).decision == "deny"
    assert log.result(clock.now) == RateHits(("burst",), (1,), 1000.0)
    assert counter.hit("burst", 10_000) == 2
    assert HitLog(counter).result(clock.now) is None


def test_replayed_hits_answer_as_before_and_count_nothing() -> None:
    p = limited(max_count=2)
    fired = ReplayedHits(RateHits(("burst",), (2,), 1000.0))
    assert p.evaluate("Bash", {"command": "x"}, rate_counter=fired).decision == "deny"
    quiet = ReplayedHits(RateHits(("burst",), (1,), 1000.0))
    assert p.evaluate("Bash", {"command": "x"}, rate_counter=quiet).decision == "allow"
    assert p.evaluate("Bash", {"command": "x"}, rate_counter=ReplayedHits(None)).decision == (
        "allow"
    )


def test_rate_hits_round_trip_and_refuse_malformed_data() -> None:
    hits = RateHits(("a", "b"), (0, 3), 1234.5)
    assert RateHits.from_json(hits.to_json()) == hits
    for bad in (None, [], {"ruleIds": ["a"], "earlier": [], "at": 1}, {"ruleIds": [1]}):
        with pytest.raises(ValueError, match="malformed rate hits"):
            RateHits.from_json(bad)
