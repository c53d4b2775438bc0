"""Compatibility re-export of :class:`CallRecord`.

The record view lives in :mod:`pytest_harness_audit.audit.record_view`.
"""

from pytest_harness_audit.audit.record_view import CallRecord

__all__ = ["CallRecord"]
