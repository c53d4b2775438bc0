"""pytest-harness-audit: test how AI agents behave, with governed and recorded tool calls.

The public API: :class:`Policy` (load, preset, evaluate), :class:`Harness` (one audited session
on a workspace), :class:`Verdict`, :class:`CallRecord`, :class:`SessionReport`,
:class:`AuditReportExtension`, and the errors. Names are imported on first use, so importing one
submodule (the audit chain, the CLI) does not load the rest.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_harness_audit._version import __version__
from pytest_harness_audit.errors import HarnessAuditError, PolicyError, ScenarioError, UsageError

if TYPE_CHECKING:
    from pytest_harness_audit.policy import Evaluation, Policy
    from pytest_harness_audit.readers.record_view import CallRecord
    from pytest_harness_audit.readers.report import SessionReport
    from pytest_harness_audit.readers.snapshot import AuditReportExtension
    from pytest_harness_audit.readers.verdict import Verdict, VerdictReason
    from pytest_harness_audit.session.harness import CallResult, Harness

_LAZY = {
    "AuditReportExtension": "pytest_harness_audit.readers.snapshot",
    "CallRecord": "pytest_harness_audit.readers.record_view",
    "CallResult": "pytest_harness_audit.session.harness",
    "Evaluation": "pytest_harness_audit.policy",
    "Harness": "pytest_harness_audit.session.harness",
    "Policy": "pytest_harness_audit.policy",
    "SessionReport": "pytest_harness_audit.readers.report",
    "Verdict": "pytest_harness_audit.readers.verdict",
    "VerdictReason": "pytest_harness_audit.readers.verdict",
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
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_harness_audit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
