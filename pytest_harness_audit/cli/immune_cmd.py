"""`harness-audit immune status [SESSION]` and `immune lift SESSION --reason …`."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import time
from collections.abc import Callable
from typing import Any

from pytest_harness_audit.audit.chain import AuditChain
from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.audit.storage import list_sessions
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.gate import Gate, immune_entry
from pytest_harness_audit.gate.session_policy import load_session_policy
from pytest_harness_audit.immune import ImmuneLadder
from pytest_harness_audit.immune.records import format_history
from pytest_harness_audit.policy import Policy


def register(subparsers: Any) -> None:
    """Add the ``immune`` command group."""
    group = subparsers.add_parser("immune", help="immune escalation: status and lift")
    commands = group.add_subparsers(dest="command", metavar="SUBCOMMAND")
    commands.required = True
    status = commands.add_parser("status", help="level, score and evidence of sessions")
    status.add_argument("session", nargs="?", help="one session (default: every session)")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.add_argument(
        "--now",
        action="store_true",
        help="score as of now (default: as of the session's last record, as it ended)",
    )
    status.set_defaults(func=_status)
    lift = commands.add_parser("lift", help="end a quarantine, recorded with a reason")
    lift.add_argument("session")
    lift.add_argument("--reason", required=True, help="why the quarantine may end (recorded)")
    lift.add_argument("--json", action="store_true", help="machine-readable output")
    lift.set_defaults(func=_lift)


def _session_policy(storage: str, session: str) -> Policy:
    if session not in list_sessions(storage):
        raise UsageError(f"no session {session!r} in {storage}")
    policy = load_session_policy(storage, session)
    if policy is None:
        raise UsageError(
            f"session {session!r} has no recorded policy "
            f"({storage}/policies/{session}.json): it was not written by a gate"
        )
    return policy


def replay_ladder(storage: str, session: str, *, now: bool = False) -> ImmuneLadder:
    """The immune ladder of a stored session, rebuilt from its chain: as of the session's last
    record (the state it ended in), or as of the wall clock with ``now``."""
    policy = _session_policy(storage, session)
    records = list(iter_records(storage, session))
    entries = (immune_entry(record) for record in records)
    clock = time.time if now else _frozen_at(_last_moment(records))
    return ImmuneLadder.replay(
        policy.immune_config, (e for e in entries if e is not None), clock=clock
    )


def _last_moment(records: list[dict[str, Any]]) -> float | None:
    for record in reversed(records):
        stamp = record.get("timestamp")
        if isinstance(stamp, str):
            try:
                return _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
            except ValueError:
                continue
    return None


def _frozen_at(moment: float | None) -> Callable[[], float]:
    if moment is None:
        return time.time
    return lambda: moment


def _status(args: argparse.Namespace) -> int:
    sessions = [args.session] if args.session else list_sessions(args.storage)
    out = []
    for session in sessions:
        ladder = replay_ladder(args.storage, session, now=args.now)
        status = ladder.status()
        if args.json:
            out.append(
                {
                    "session": session,
                    "enabled": ladder.config.enabled,
                    "level": status.level,
                    "score": status.score,
                    "evidence": list(status.evidence),
                    "quarantines": [q.why for q in status.quarantines],
                    "history": [step.to_dict() for step in ladder.history],
                }
            )
            continue
        print(f"Session {session}:")
        if not ladder.config.enabled:
            print("  immune ladder off in this session's policy")
            continue
        for line in status.describe().splitlines():
            print(f"  {line}")
        if ladder.history:
            print("  history:")
            for line in format_history(ladder.history).splitlines():
                print(f"    {line}")
    if args.json:
        print(json.dumps(out))
    elif not sessions:
        print(f"no sessions in {args.storage}")
    return 0


def _lift(args: argparse.Namespace) -> int:
    policy = _session_policy(args.storage, args.session)
    with AuditChain(args.storage, args.session) as chain:
        gate = Gate(policy, chain, door="cli")
        if gate.ladder.level == "observe":
            print(f"session {args.session} is not escalated (level observe): nothing to lift")
            return 1
        previous = gate.ladder.level
        record = gate.lift(args.reason)
    if args.json:
        print(json.dumps(record))
    else:
        print(f"Lifted {previous} of session {args.session}: {args.reason}")
        print(f"Recorded as {record['recordId']} at position {record['provenance']['actionIndex']}")
    return 0
