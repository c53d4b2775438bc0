"""A tool's prefilter is built only after the policy has decided :data:`PREFILTER_AFTER` of its
calls on the full path: a process that decides a few calls (one hook event) never pays for
working out what every pattern requires, and the calls before and after decide alike."""

from __future__ import annotations

from typing import Any

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.engine import PREFILTER_AFTER

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("Read", {"file_path": "app/main.py"}),
    ("Read", {"file_path": ".env"}),
    ("Bash", {"command": "ls -la"}),
    ("Bash", {"command": "cat .env"}),
    ("Bash", {"command": "rm -rf app"}),
    ("Write", {"file_path": ".git/hooks/pre-commit", "content": "x"}),
    ("Write", {"file_path": "notes.md", "content": "x"}),
]


def outcome(policy: Policy, tool: str, params: dict[str, Any]) -> tuple[Any, ...]:
    """What a decision says."""
    evaluation = policy.evaluate(tool, params, root="/srv/work")
    return (evaluation.decision, evaluation.rule_id, evaluation.reason, evaluation.targets)


def test_a_new_policy_has_worked_out_no_pattern_requirement() -> None:
    policy = Policy.preset("safety")
    with_patterns = [rule for rule in policy.compiled_rules if rule.patterns is not None]
    assert with_patterns
    assert not any(rule.requirements_known for rule in with_patterns)
    for tool, params in CALLS:
        policy.evaluate(tool, params)
    assert not any(rule.requirements_known for rule in with_patterns)


def test_the_prefilter_comes_after_the_first_calls_and_decides_alike() -> None:
    late, early = Policy.preset("safety"), Policy.preset("safety")
    early.prefilter_after = 0
    for round_ in range(PREFILTER_AFTER + 2):
        for tool, params in CALLS:
            assert outcome(late, tool, params) == outcome(early, tool, params), (round_, tool)
    for tool in ("Read", "Bash", "Write"):
        assert late._by_tool[tool].prefilter is not None, tool
        assert early._by_tool[tool].prefilter is not None, tool


def test_a_policy_without_the_prefilter_never_builds_one() -> None:
    full = Policy.preset("safety")
    full.prefilter_enabled = False
    for _ in range(PREFILTER_AFTER + 2):
        full.evaluate("Read", {"file_path": "app/main.py"})
    assert full._by_tool["Read"].prefilter is None
