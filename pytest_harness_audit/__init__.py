"""pytest-harness-audit: test how AI agents behave, with governed and recorded tool calls.

The public API: :class:`Policy` (load, preset, evaluate), :class:`Harness` (one audited session
on a workspace), :class:`Verdict`, :class:`CallRecord`, :class:`SessionReport`,
:class:`AuditReportExtension`, and the errors. Names are imported on first use, so importing one
submodule (the audit chain, the CLI) does not load the rest.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_harness_audit.errors import HarnessAuditError, PolicyError, ScenarioError, UsageError

if TYPE_CHECKING:
    from pytest_harness_audit.calls import CallRecord
    from pytest_harness_audit.harness import CallResult, Harness
    from pytest_harness_audit.policy import Evaluation, Policy
    from pytest_harness_audit.report import SessionReport
    from pytest_harness_audit.snapshot import AuditReportExtension
    from pytest_harness_audit.verdict import Verdict, VerdictReason

_LAZY = {
    "AuditReportExtension": "pytest_harness_audit.snapshot",
    "CallRecord": "pytest_harness_audit.calls",
    "CallResult": "pytest_harness_audit.harness",
    "Evaluation": "pytest_harness_audit.policy",
    "Harness": "pytest_harness_audit.harness",
    "Policy": "pytest_harness_audit.policy",
    "SessionReport": "pytest_harness_audit.report",
    "Verdict": "pytest_harness_audit.verdict",
    "VerdictReason": "pytest_harness_audit.verdict",
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_harness_audit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
