"""A command's many targets go to the RE2 pattern sets only where they can match: a pattern
matches one target, so the target must hold the pattern's literals itself (the prefilter's
requirement, one target at a time). The decision stays that of the full path."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy import Policy, SlidingWindowCounter, prefilter
from pytest_harness_audit.policy.patterns import PatternProgram
from pytest_harness_audit.policy.prefilter import (
    Prefilter,
    requirement,
    targets_may_match,
    worth_matching,
)

RULES = [
    {
        "id": "force-push",
        "name": "force push",
        "priority": 1,
        "decision": "deny",
        "match": {"targetPatterns": [r"git\s+push\s+.*--force"], "targetPatternsAreRegex": True},
    },
    {
        "id": "env",
        "name": "env files",
        "priority": 2,
        "decision": "deny",
        "match": {"targetPatterns": ["**/.env", "/srv/**/*.sql"]},
    },
]


#: Spies replace methods, which the compiled build's native classes do not allow: those tests run
#: against the plain-Python modules (CI runs the tests on both).
spies_work = pytest.mark.skipif(
    str(prefilter.__file__).endswith(".so"),
    reason="a compiled class's methods cannot be replaced by a spy",
)


def policies() -> tuple[Policy, Policy]:
    """The same policy with the prefilter, and with every call on the full path."""
    spec: dict[str, Any] = {"defaultPolicy": "allow", "rules": RULES}
    fast, full = Policy.from_dict(spec), Policy.from_dict(spec)
    full.prefilter_enabled = False
    fast.prefilter_after = 0  # the prefilter from the first call
    return fast, full


@spies_work
def test_targets_without_the_literals_skip_the_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bytes] = []
    original = PatternProgram.matching

    def recording(self: PatternProgram, data: bytes) -> list[int]:
        seen.append(data)
        return original(self, data)

    monkeypatch.setattr(PatternProgram, "matching", recording)
    fast, _ = policies()
    result = fast.evaluate("Bash", {"command": "cat a.txt b.txt && git push origin --force"})
    assert result.decision == "deny" and result.rule_id == "force-push"
    assert b"a.txt" not in seen and b"cat a.txt b.txt" not in seen
    assert b"git push origin --force" in seen


@pytest.mark.parametrize(
    "command",
    [
        "cat a.txt b.txt && git push origin --force",
        "git status && push --force",  # `git` in one target, `push` in another: no match
        "echo git; echo push --force",
        "cat notes.txt && cat app/.env",
        "cat /srv/x.txt && cat data.sql",  # `/srv/` and `.sql` in two targets: no match
        "cat /srv/db/dump.sql notes.txt",
        "cat README.md",
    ],
)
def test_same_decision_as_the_full_path(command: str) -> None:
    fast, full = policies()
    counter = SlidingWindowCounter()
    a = fast.evaluate("Bash", {"command": command}, rate_counter=counter)
    b = full.evaluate("Bash", {"command": command}, rate_counter=counter)
    assert (a.decision, a.rule_id, a.targets) == (b.decision, b.rule_id, b.targets)


PREFILTER = Prefilter(
    [
        r
        for r in (
            requirement(r"git\s+push\s+.*--force", is_regex=True),
            requirement("**/.env", is_regex=False),
            requirement("/srv/**/*.sql", is_regex=False),
            requirement("exact.txt", is_regex=False),
        )
        if r is not None
    ]
)
TARGET = st.one_of(
    st.sampled_from(["git push --force", ".env", "/srv/a.sql", "exact.txt", "EXACT.TXT", "push"]),
    st.text(alphabet="gitpushforce-/.envsrqlxa ", max_size=16),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(TARGET, min_size=1, max_size=6))
def test_each_kept_target_may_match_alone(targets: list[str]) -> None:
    kept = worth_matching(PREFILTER, targets)
    for target in targets:  # one target at a time, as the call-wide test reads it
        assert (target in kept) == targets_may_match(PREFILTER, [target]), (target, targets)


@spies_work
@pytest.mark.parametrize(
    ("targets", "kept"),
    [
        (["cat /srv/x.txt", "/srv/x.txt", "notes.txt"], []),  # `/srv/` alone meets nothing
        (["cat /srv/x.sql", "/srv/x.sql", "notes.txt"], ["cat /srv/x.sql", "/srv/x.sql"]),
    ],
)
def test_forms_are_looked_at_one_by_one_only_when_their_literals_meet_a_requirement(
    monkeypatch: pytest.MonkeyPatch, targets: list[str], kept: list[str]
) -> None:
    calls: list[set[str]] = []
    original = Prefilter._met_by

    def recording(self: Prefilter, hits: set[str]) -> bool:
        calls.append(hits)
        return original(self, hits)

    monkeypatch.setattr(Prefilter, "_met_by", recording)
    assert worth_matching(PREFILTER, targets) == kept
    # the joined text's literals first; a form holding all of them needs no second look
    assert len(calls) == 1
