"""`harness-audit view [SESSION…] -o FILE`: one self-contained HTML page of audited sessions."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.clock import parse_since, parse_timestamp
from pytest_harness_audit.audit.storage import list_sessions
from pytest_harness_audit.errors import UsageError

DEFAULT_OUTPUT = "harness-audit-view.html"


def register(subparsers: Any) -> None:
    """Add the ``view`` command."""
    view = subparsers.add_parser(
        "view",
        help="write a static HTML page of sessions: overview, timelines, immune score, chain",
    )
    view.add_argument(
        "sessions",
        nargs="*",
        metavar="SESSION",
        help="sessions to show, in this order (default: every session, oldest first)",
    )
    view.add_argument(
        "--last-run",
        action="store_true",
        help="only the sessions of the latest pytest --harness-audit run kept in the storage",
    )
    view.add_argument(
        "--since",
        help="only sessions started since: 30s, 5m, 2h, 1d or an ISO timestamp (a recent run)",
    )
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
    from pytest_harness_audit.readers.viewer import (
        SessionRef,
        session_created,
        session_exists,
        write_view,
    )

    storage = str(args.storage)
    if not Path(storage).is_dir():
        raise UsageError(
            f"no audit storage at {storage} (give --storage DIR or set HARNESS_AUDIT_DIR)"
        )
    cutoff = parse_since(args.since) if args.since else None
    chosen = list(dict.fromkeys(args.sessions))
    for session in chosen:
        if not session_exists(storage, session):
            raise UsageError(f"no audit session {session!r} in {storage}")
    if args.last_run and chosen:
        raise UsageError("give SESSION names or --last-run, not both")
    if not chosen:
        started = {
            sid: session_created(storage, sid)
            for sid in (_last_run(storage) if args.last_run else list_sessions(storage))
        }
        chosen = sorted(started, key=lambda sid: (started[sid] or "~", sid))
    if cutoff is not None:
        chosen = [sid for sid in chosen if _started_since(session_created(storage, sid), cutoff)]
    if not chosen:
        since = f" started since {args.since}" if args.since else ""
        raise UsageError(f"no audit sessions{since} in {storage}: nothing to view")
    from pytest_harness_audit.doors.hook_session import outside_reasons

    # a hook session is judged by what its chain does not hold too (no end, calls unseen)
    refs = [
        SessionRef(storage, session, reasons=outside_reasons(Path(storage), session))
        for session in chosen
    ]
    run = write_view(args.output, refs, title=args.title)
    print(f"Wrote {args.output}: {run.totals()}")
    return 0


def _started_since(created: str, cutoff: dt.datetime) -> bool:
    started = parse_timestamp(created) if created else None
    return started is not None and started >= cutoff


def _last_run(storage: str) -> list[str]:
    """The sessions of the newest run ``pytest --harness-audit`` recorded in ``storage``."""
    from pytest_harness_audit.audit.prune import session_groups

    runs = [group for group in session_groups(storage) if group.run_file is not None]
    if not runs:
        raise UsageError(
            f"no pytest run recorded in {storage} (pytest --harness-audit records each run)"
        )
    return runs[0].sessions
