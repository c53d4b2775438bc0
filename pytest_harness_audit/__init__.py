"""pytest-harness-audit: test how AI agents behave, with governed and recorded tool calls."""

from __future__ import annotations

from pytest_harness_audit.errors import HarnessAuditError, PolicyError, ScenarioError, UsageError

__all__ = ["HarnessAuditError", "PolicyError", "ScenarioError", "UsageError"]
__version__ = "0.1.0"
