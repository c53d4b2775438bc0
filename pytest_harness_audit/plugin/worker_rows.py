"""What an xdist worker's tests add to the run's end (summary rows, span lines) travels to the
controller with each test's teardown report, not once when the worker finishes: a worker that
crashes later, or never reports its end, loses none of the sessions its finished tests made.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_harness_audit.plugin.options import SPAN_FILE_KEY, SUMMARIES_KEY

#: The teardown report's attributes carrying the test's rows and span lines (JSON text).
ROWS_ATTRIBUTE = "harness_audit_rows"
SPANS_ATTRIBUTE = "harness_audit_spans"
#: How many of the worker's span lines went to the controller already (``config.stash``).
SPANS_SENT_KEY: pytest.StashKey[int] = pytest.StashKey()


def attach(config: pytest.Config, report: pytest.TestReport, rows: list[Any]) -> None:
    """On a worker: put the test's summary rows and new span lines on its teardown report."""
    if rows:
        from pytest_harness_audit.plugin.summary import encode_summaries

        setattr(report, ROWS_ATTRIBUTE, encode_summaries(rows))
    span_file = config.stash.get(SPAN_FILE_KEY, None)
    if span_file is not None:
        sent = config.stash.get(SPANS_SENT_KEY, 0)
        if len(span_file.written) > sent:
            setattr(report, SPANS_ATTRIBUTE, json.dumps(span_file.written[sent:]))
            config.stash[SPANS_SENT_KEY] = len(span_file.written)


class ControllerRows:
    """On the controller (registered there only): take each worker report's rows and span
    lines as it arrives."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A worker's teardown report: keep its rows and span lines."""
        rows = getattr(report, ROWS_ATTRIBUTE, None)
        if isinstance(rows, str):
            from pytest_harness_audit.plugin.summary import decode_summaries

            self.config.stash[SUMMARIES_KEY].extend(decode_summaries(rows))
        spans = getattr(report, SPANS_ATTRIBUTE, None)
        span_file = self.config.stash.get(SPAN_FILE_KEY, None)
        if isinstance(spans, str) and span_file is not None:
            span_file.written.extend(str(text) for text in json.loads(spans))
