"""pytest hooks only: options, markers, fixtures wiring, summary. The library does the work."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``--harness-audit…`` option group."""
    group = parser.getgroup("harness-audit", "agent harness auditing")
    group.addoption(
        "--harness-audit",
        action="store_true",
        default=False,
        help="audit every harness session: keep chains, verify them, print a summary",
    )
