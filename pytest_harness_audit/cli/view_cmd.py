"""`harness-audit view [SESSION…] -o FILE`: one self-contained HTML page of audited sessions."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.storage import list_sessions
from pytest_harness_audit.errors import UsageError

DEFAULT_OUTPUT = "harness-audit-view.html"


def register(subparsers: Any) -> None:
    """Add the ``view`` command."""
    view = subparsers.add_parser(
        "view",
        help="write a static HTML page of sessions: overview, timelines, immune score, chain",
    )
    view.add_argument("sessions", nargs="*", metavar="SESSION", help="default: every session")
    view.add_argument(
        "-o",
        "--output",
        default=DEFAULT_OUTPUT,
        metavar="FILE",
        help=f"the HTML file to write (default: {DEFAULT_OUTPUT})",
    )
    view.add_argument("--title", default="harness-audit sessions", help="the page's title")
    view.set_defaults(func=_view)


def _view(args: argparse.Namespace) -> int:
    from pytest_harness_audit.readers.viewer import SessionRef, session_exists, write_view

    storage = str(args.storage)
    if not Path(storage).is_dir():
        raise UsageError(
            f"no audit storage at {storage} (give --storage DIR or set HARNESS_AUDIT_DIR)"
        )
    chosen = list(dict.fromkeys(args.sessions)) or list_sessions(storage)
    if not chosen:
        raise UsageError(f"no audit sessions in {storage}: nothing to view")
    for session in chosen:
        if not session_exists(storage, session):
            raise UsageError(f"no audit session {session!r} in {storage}")
    run = write_view(
        args.output, [SessionRef(storage, session) for session in chosen], title=args.title
    )
    print(f"Wrote {args.output}: {run.totals()}")
    return 0
