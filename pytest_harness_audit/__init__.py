"""pytest-harness-audit: test how AI agents behave, with governed and recorded tool calls.

The public API: :class:`Policy` (load, preset, evaluate), :class:`Harness` (one audited session
on a workspace), :class:`Verdict`, :class:`CallRecord`, and the errors.
"""

from __future__ import annotations

from pytest_harness_audit.calls import CallRecord
from pytest_harness_audit.errors import HarnessAuditError, PolicyError, ScenarioError, UsageError
from pytest_harness_audit.harness import CallResult, Harness
from pytest_harness_audit.policy import Evaluation, Policy
from pytest_harness_audit.report import SessionReport
from pytest_harness_audit.snapshot import AuditReportExtension
from pytest_harness_audit.verdict import Verdict, VerdictReason

__all__ = [
    "AuditReportExtension",
    "CallRecord",
    "CallResult",
    "Evaluation",
    "Harness",
    "HarnessAuditError",
    "Policy",
    "PolicyError",
    "ScenarioError",
    "SessionReport",
    "UsageError",
    "Verdict",
    "VerdictReason",
]
__version__ = "0.1.0"
