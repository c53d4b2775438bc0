"""Regex target patterns: unanchored search, linear-time matching, the bounded fallback engine
for what RE2 lacks, and fail-closed resolution of a timed-out match."""

from __future__ import annotations

import pytest
from policy_support import glob_policy, hits, regex_policy

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy import patterns
from pytest_harness_audit.policy.patterns import PatternTimeout, TargetMatcher


@pytest.mark.parametrize(
    ("pattern", "target", "expected"),
    [
        (r"rm\s+-rf", "sudo rm -rf /", True),
        (r"rm\s+-rf", "rm -r f", False),
        (r"^rm", "rm x", True),
        (r"^rm", "x rm", False),
        (r"\.env$", "/p/.env", True),
        (r"\.env$", "/p/.env.bak", False),
        (r"mkfs\.", "sudo mkfs.ext4 /dev/sda", True),
        (r"(?i)secret", "/p/SECRET.txt", True),
        (r"secret", "/p/SECRET.txt", False),
        (r"a.c", "xxabcxx", True),
    ],
)
def test_regex_is_an_unanchored_case_sensitive_search(
    pattern: str, target: str, expected: bool
) -> None:
    assert hits(regex_policy(pattern), target) is expected


def test_any_regex_of_the_list_may_match() -> None:
    p = regex_policy(r"^a", r"b$")
    assert hits(p, "ax")
    assert hits(p, "xb")
    assert not hits(p, "xax")


def test_a_catastrophic_pattern_answers_at_once() -> None:
    p = regex_policy(r"(a+)+$")
    assert not hits(p, "a" * 40 + "!")
    assert hits(p, "a" * 40)


def test_a_catastrophic_pattern_on_a_long_target_still_answers() -> None:
    p = regex_policy(r"(x+x+)+y", r"(.*a){12}")
    assert not hits(p, "x" * 5000)
    assert hits(p, "x" * 5000 + "y")


def test_a_lookahead_runs_on_the_bounded_fallback_engine() -> None:
    assert TargetMatcher(r"foo(?=bar)", is_regex=True).bounded_only
    assert not TargetMatcher(r"foobar", is_regex=True).bounded_only
    p = regex_policy(r"foo(?=bar)", r"(\w)\1x")
    assert hits(p, "xfoobar")
    assert not hits(p, "xfoobaz")
    assert hits(p, "aax")  # the back-reference, too
    assert not hits(p, "abx")


def test_a_fallback_pattern_and_set_patterns_mix_in_one_rule() -> None:
    p = regex_policy(r"(?<=/)\.env$", r"^id_rsa$")
    assert hits(p, "/p/.env")
    assert not hits(p, ".env")
    assert hits(p, "id_rsa")


# A pattern the fallback engine needs seconds for on this target: exponential backtracking.
HOSTILE = r"(a|a)+(?=b)"
HOSTILE_TARGET = "a" * 30 + "!"


def test_a_timed_out_fallback_match_raises_pattern_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(patterns, "FALLBACK_TIMEOUT_S", 0.01)
    with pytest.raises(PatternTimeout):
        TargetMatcher(HOSTILE, is_regex=True).matches(HOSTILE_TARGET)


@pytest.mark.parametrize(("decision", "fires"), [("deny", True), ("warn", True), ("allow", False)])
def test_a_timed_out_match_is_resolved_fail_closed(
    monkeypatch: pytest.MonkeyPatch, decision: str, fires: bool
) -> None:
    monkeypatch.setattr(patterns, "FALLBACK_TIMEOUT_S", 0.01)
    p = regex_policy(HOSTILE, decision=decision)
    evaluation = p.evaluate("Grep", {"pattern": HOSTILE_TARGET})
    assert (evaluation.rule_id == "regex") is fires


@pytest.mark.parametrize("pattern", ["(unclosed", "a**", "[z-a]", "*a", "a{2,1}", "\\"])
def test_a_regex_that_does_not_compile_is_a_load_error(pattern: str) -> None:
    with pytest.raises(PolicyError) as caught:
        regex_policy(pattern)
    error = caught.value
    assert error.rule_id == "regex"
    assert error.field == "match.targetPatterns"
    assert repr(pattern) in str(error)


def test_globs_are_not_compiled_as_regexes() -> None:
    # "(unclosed" is a fine glob: every character literal
    assert hits(glob_policy("(unclosed"), "(unclosed")
