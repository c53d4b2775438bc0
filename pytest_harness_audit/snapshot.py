"""Compatibility re-export of the snapshot extension.

It lives in :mod:`pytest_harness_audit.readers.snapshot`; this path is the one the documentation
names.
"""

from pytest_harness_audit.readers.snapshot import AuditReportExtension

__all__ = ["AuditReportExtension"]
