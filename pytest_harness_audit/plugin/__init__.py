"""The pytest face of harness auditing: the ``pytest11`` entry point ``harness_audit``.

pytest registers this module as the plugin, so every hook and fixture is an attribute of it.
They live by concern: :mod:`.hooks` (options, markers, end-of-test check, summary, xdist),
:mod:`.fixtures`, :mod:`.markers`, :mod:`.options`, :mod:`.summary`, :mod:`.html` (pytest-html)
and :mod:`.hookspecs` (the hooks other plugins implement). :mod:`.support` is the library side
of the end-of-test check.

Importing the plugin costs next to nothing: the harness, the readers, the policy engine, syrupy
and GitPython load only when a test uses a harness fixture or marker.
"""

from __future__ import annotations

from pytest_harness_audit.plugin.fixtures import (
    _harness_snapshot_marker,
    audit_snapshot,
    git_workspace,
    harness,
    harness_factory,
    recording_proxy,
)
from pytest_harness_audit.plugin.hooks import (
    pytest_addhooks,
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_report_header,
    pytest_runtest_call,
    pytest_runtest_makereport,
    pytest_runtest_protocol,
    pytest_runtest_teardown,
    pytest_sessionfinish,
    pytest_terminal_summary,
)

__all__ = [
    "_harness_snapshot_marker",
    "audit_snapshot",
    "git_workspace",
    "harness",
    "harness_factory",
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_report_header",
    "pytest_runtest_call",
    "pytest_runtest_makereport",
    "pytest_runtest_protocol",
    "pytest_runtest_teardown",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "recording_proxy",
]
