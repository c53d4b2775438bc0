"""Shared policies for the approval tests."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_harness_audit.policy import Policy

#: Writes to ``deploy/`` ask for a human first; everything else is allowed.
ASK_POLICY: dict[str, Any] = {
    "defaultPolicy": "allow",
    "rules": [
        {
            "id": "ask-deploy",
            "name": "Deploy files need approval",
            "priority": 5,
            "decision": "ask",
            "reason": "deploy files need a human",
            "match": {"tools": ["Write"], "targetPatterns": ["deploy/**"]},
        },
        {
            "id": "deny-secrets",
            "name": "No secrets",
            "priority": 0,
            "decision": "deny",
            "match": {"tools": ["Write"], "targetPatterns": ["**/*.pem"]},
        },
    ],
}


@pytest.fixture
def ask_policy() -> Policy:
    """:data:`ASK_POLICY` as a policy."""
    return Policy.from_dict(ASK_POLICY)
