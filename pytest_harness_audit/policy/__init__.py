"""The policy engine: rules, matching, targets, categories and presets (DESIGN §4 "Policy")."""

from __future__ import annotations

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy.engine import RateCounter
from pytest_harness_audit.policy.evaluation import Evaluation
from pytest_harness_audit.policy.model import Match, RateLimit, Rule
from pytest_harness_audit.policy.policy import Policy
from pytest_harness_audit.policy.ratelimit import SlidingWindowCounter

__all__ = [
    "Evaluation",
    "Match",
    "Policy",
    "PolicyError",
    "RateCounter",
    "RateLimit",
    "Rule",
    "SlidingWindowCounter",
]
