"""Hook specifications other plugins implement to extend harness auditing (pluggy).

Implement them in a ``conftest.py`` or a plugin::

    def pytest_harness_audit_classify_tool(tool, params):
        if tool.startswith("db_"):
            return "file_write"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_harness_audit.audit.record_view import CallRecord
    from pytest_harness_audit.readers.verdict import VerdictReason
    from pytest_harness_audit.session.harness import Harness


@pytest.hookspec(firstresult=True)
def pytest_harness_audit_classify_tool(tool: str, params: Mapping[str, Any]) -> str | None:
    """Return the category of ``tool`` (e.g. ``"file_write"``), or ``None`` to pass.

    Asked for tools the workspace does not know itself, before the built-in classification.
    """


@pytest.hookspec
def pytest_harness_audit_verdict_rules(
    harness: Harness, records: list[CallRecord]
) -> list[VerdictReason] | None:
    """Return extra verdict reasons for a session (each with its ``Verdict``), or ``None``."""


@pytest.hookspec
def pytest_harness_audit_report_fields(harness: Harness) -> Mapping[str, Any] | None:
    """Return extra fields for the session report (merged under ``extra``), or ``None``."""
