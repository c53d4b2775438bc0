"""The policy engine: rules, matching, targets, categories and presets (DESIGN §4 "Policy").

Names are imported on first use, so a leaf module (``policy.glob``) loads without the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_harness_audit.errors import PolicyError

if TYPE_CHECKING:
    from pytest_harness_audit.policy.engine import RateCounter
    from pytest_harness_audit.policy.evaluation import Evaluation
    from pytest_harness_audit.policy.model import Match, RateLimit, Rule
    from pytest_harness_audit.policy.policy import Policy
    from pytest_harness_audit.policy.ratelimit import SlidingWindowCounter

_LAZY = {
    "Evaluation": "pytest_harness_audit.policy.evaluation",
    "Match": "pytest_harness_audit.policy.model",
    "Policy": "pytest_harness_audit.policy.policy",
    "RateCounter": "pytest_harness_audit.policy.engine",
    "RateLimit": "pytest_harness_audit.policy.model",
    "Rule": "pytest_harness_audit.policy.model",
    "SlidingWindowCounter": "pytest_harness_audit.policy.ratelimit",
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_harness_audit.policy' has no attribute {name!r}")
    # Not cached in globals(): a module dropped from sys.modules (pytester's in-process runs do
    # that) is imported again, and every caller then sees the same class.
    return getattr(importlib.import_module(module), name)
