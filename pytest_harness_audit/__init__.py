"""pytest-harness-audit: test how AI agents behave, with governed and recorded tool calls.

The public API: :class:`Policy` (load, preset, evaluate), :class:`Harness` (one audited session
on a workspace), :class:`Verdict`, :class:`CallRecord`, :class:`SessionReport`,
:class:`AuditReportExtension`, the errors, and what the fixtures and the harness hand a test:
:class:`RecordingProxySession` (``recording_proxy``), :class:`AgentRun` (``harness.run_agent``),
:class:`SendResult` (``harness.send``). The closed vocabularies are ``Literal`` types:
:data:`Decision`, :data:`Status`, :data:`Door`, :data:`VerdictName` (:mod:`.types`).

Names are imported on first use, so importing one submodule (the audit chain, the CLI, the
pytest plugin) does not load the rest.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_harness_audit._version import __version__
from pytest_harness_audit.errors import HarnessAuditError, PolicyError, ScenarioError, UsageError
from pytest_harness_audit.types import Decision, Door, Status, VerdictName

if TYPE_CHECKING:
    from pytest_harness_audit.audit.record_view import CallRecord
    from pytest_harness_audit.doors.agent import AgentRun
    from pytest_harness_audit.policy import Evaluation, Policy
    from pytest_harness_audit.readers.report import SessionReport
    from pytest_harness_audit.readers.snapshot import AuditReportExtension
    from pytest_harness_audit.readers.verdict import Verdict, VerdictReason
    from pytest_harness_audit.session.harness import CallResult, Harness
    from pytest_harness_audit.session.proxy_session import RecordingProxySession
    from pytest_harness_audit.social.events import SendResult

_LAZY = {
    "AgentRun": "pytest_harness_audit.doors.agent",
    "AuditReportExtension": "pytest_harness_audit.readers.snapshot",
    "CallRecord": "pytest_harness_audit.audit.record_view",
    "CallResult": "pytest_harness_audit.session.harness",
    "Evaluation": "pytest_harness_audit.policy",
    "Harness": "pytest_harness_audit.session.harness",
    "Policy": "pytest_harness_audit.policy",
    "RecordingProxySession": "pytest_harness_audit.session.proxy_session",
    "SendResult": "pytest_harness_audit.social.events",
    "SessionReport": "pytest_harness_audit.readers.report",
    "Verdict": "pytest_harness_audit.readers.verdict",
    "VerdictReason": "pytest_harness_audit.readers.verdict",
}

__all__ = [
    "AgentRun",
    "AuditReportExtension",
    "CallRecord",
    "CallResult",
    "Decision",
    "Door",
    "Evaluation",
    "Harness",
    "HarnessAuditError",
    "Policy",
    "PolicyError",
    "RecordingProxySession",
    "ScenarioError",
    "SendResult",
    "SessionReport",
    "Status",
    "UsageError",
    "Verdict",
    "VerdictName",
    "VerdictReason",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_harness_audit' has no attribute {name!r}")
    # Not cached in globals(): a module dropped from sys.modules (pytester's in-process runs do
    # that) is imported again, and every caller then sees the same class.
    return getattr(importlib.import_module(module), name)
