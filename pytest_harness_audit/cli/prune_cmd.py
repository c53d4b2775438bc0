"""`harness-audit audit prune [--keep N] [--older-than AGE] [--dry-run]`."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from pytest_harness_audit.audit.prune import parse_age, prune
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.wording import plural


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``audit prune`` through the audit group's ``add``."""
    command = add(
        "prune",
        "remove old sessions: all but the newest N runs (a session no run lists counts as one) "
        "and/or those older than an age",
    )
    command.add_argument("--keep", type=int, metavar="N", help="keep the newest N runs")
    command.add_argument("--older-than", metavar="AGE", help="remove runs older than 30m, 2h, 7d…")
    command.add_argument("--dry-run", action="store_true", help="say what would go; remove nothing")
    command.set_defaults(func=_prune)


def _prune(args: argparse.Namespace) -> int:
    if args.keep is None and args.older_than is None:
        raise UsageError("audit prune: give --keep N, --older-than AGE, or both")
    older_than = parse_age(args.older_than) if args.older_than is not None else None
    result = prune(args.storage, keep=args.keep, older_than=older_than, dry_run=args.dry_run)
    if args.json:
        import json

        print(
            json.dumps(
                {
                    "removed": result.removed_sessions,
                    "removedRuns": result.removed_groups,
                    "keptRuns": result.kept_groups,
                    "dryRun": args.dry_run,
                }
            )
        )
        return 0
    verb = "Would remove" if args.dry_run else "Removed"
    print(
        f"{verb} {plural(len(result.removed_sessions), 'session')} "
        f"({plural(result.removed_groups, 'run')}); kept {plural(result.kept_groups, 'run')} "
        f"in {args.storage}."
    )
    for session in result.removed_sessions:
        print(f"  {session}")
    return 0
