"""The files the run writes when it ends: ``--harness-audit-html PATH`` (the session view) and
the ``--harness-audit-otel`` span file, written whole."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_harness_audit.errors import HarnessAuditError

if TYPE_CHECKING:
    from pytest_harness_audit.plugin.summary import SessionSummary
    from pytest_harness_audit.readers.otel import SpanFile


def write_run_view(summaries: Sequence[SessionSummary], path: Path, title: str) -> tuple[str, bool]:
    """Write the view of the run's sessions (test order) to ``path``; return the line to print
    and whether the write failed (which fails the run)."""
    from pytest_harness_audit.readers.viewer import SessionRef, write_view

    rows = sorted(summaries, key=lambda s: (s.nodeid, s.session_id))
    # what the run published at each test's end: a chain replaced since is not read as it
    refs = [
        SessionRef(s.storage, s.session_id, test=s.nodeid, head=s.head, verdict=s.verdict)
        for s in rows
    ]
    try:
        run = write_view(path, refs, title=title)
    except HarnessAuditError as exc:
        left = f"; what is at {path} is not this run's view" if os.path.lexists(path) else ""
        return f"harness-audit: no session view written: {exc}{left}", True
    return f"harness-audit: session view written to {path} ({run.totals()})", False


def finish_span_file(span_file: SpanFile) -> list[tuple[str, bool]]:
    """Write the span file whole; the lines to print (a failed write fails the run)."""
    note, problem = span_file.finish()
    lines = [] if note is None else [(f"harness-audit: {note}", False)]
    if problem is not None:
        lines.append((f"harness-audit: {problem}", True))
    return lines
