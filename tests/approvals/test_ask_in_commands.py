"""An ``ask`` rule among a command's views: it outranks a warn, a deny outranks it."""

from __future__ import annotations

import pytest

from pytest_harness_audit.policy import Policy

POLICY = {
    "preset": "safety",
    "rules": [
        {
            "id": "ask-push",
            "name": "Pushes need approval",
            "priority": 5,
            "decision": "ask",
            "match": {"tools": ["Bash"], "targetPatterns": ["git push*"]},
        }
    ],
}


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("git push origin main", "ask"),  # the network warn of the preset does not win
        ("git status", "allow"),  # a benign look-alike
        ("rm -rf / && git push origin main", "deny"),  # a deny still wins
    ],
)
def test_ask_ranks_between_warn_and_deny(command: str, decision: str) -> None:
    evaluation = Policy.from_dict(POLICY).evaluate("Bash", {"command": command})
    assert evaluation.decision == decision
