"""``--harness-audit-html PATH``: the session view of the run, written at its end."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_harness_audit.errors import HarnessAuditError

if TYPE_CHECKING:
    from pytest_harness_audit.plugin.summary import SessionSummary


def write_run_view(summaries: Sequence[SessionSummary], path: Path, title: str) -> str:
    """Write the view of the run's sessions (test order) to ``path``; return the line to print."""
    from pytest_harness_audit.readers.viewer import SessionRef, write_view

    rows = sorted(summaries, key=lambda s: (s.nodeid, s.session_id))
    refs = [SessionRef(s.storage, s.session_id, test=s.nodeid) for s in rows]
    try:
        run = write_view(path, refs, title=title)
    except HarnessAuditError as exc:
        return f"harness-audit: no session view written: {exc}"
    return f"harness-audit: session view written to {path} ({run.totals()})"
