"""The session viewer: one self-contained static HTML page of a run's audited sessions.

``harness-audit view`` and ``pytest --harness-audit-html PATH`` both call :func:`write_view`.
The page holds a run overview (verdict, calls, denied, chain, head per session) and, per
session, a timeline of its records, the immune score plotted against its thresholds, its
escalations and lifts, the chain's verification and each call's details. It loads nothing
from the network: styles, the plot (SVG) and the expanding details (``<details>``) are inline.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from pytest_harness_audit.audit.atomic_file import replace_file
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.readers.viewer.model import (
    ChainView,
    RunView,
    SessionRef,
    SessionView,
    TimelineItem,
    load_session,
    session_created,
    session_exists,
)
from pytest_harness_audit.readers.viewer.render import render_html
from pytest_harness_audit.readers.viewer.score import ScoreSeries, score_series

__all__ = [
    "ChainView",
    "RunView",
    "ScoreSeries",
    "SessionRef",
    "SessionView",
    "TimelineItem",
    "build_view",
    "load_session",
    "render_html",
    "score_series",
    "session_created",
    "session_exists",
    "write_view",
]


def build_view(refs: Iterable[SessionRef], *, title: str = "harness-audit sessions") -> RunView:
    """Read every referenced session from its storage (``UsageError`` for an unknown one)."""
    return RunView(
        title=title,
        sessions=tuple(
            load_session(
                r.storage,
                r.session_id,
                test=r.test,
                head=r.head,
                run_verdict=r.verdict,
                reasons=r.reasons,
            )
            for r in refs
        ),
    )


def write_view(
    path: str | os.PathLike[str],
    refs: Sequence[SessionRef],
    *,
    title: str = "harness-audit sessions",
) -> RunView:
    """Build the view of ``refs`` and write it to ``path`` (parent folders are created), whole
    or not at all: a temporary file in the same folder replaces whatever is at ``path``. A write
    that fails is a ``UsageError`` naming the path, and nothing at ``path`` is removed."""
    run = build_view(refs, title=title)
    text = render_html(run)
    target = Path(path)
    try:
        replace_file(target, text.encode("utf-8"), mode=0o644)
    except OSError as exc:
        raise UsageError(f"cannot write the session view to {target}: {exc.strerror}") from None
    return run
