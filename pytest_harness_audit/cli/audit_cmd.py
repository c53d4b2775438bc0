"""`harness-audit audit summary | verify | last | query | report | repair | checkpoint | keygen`."""

from __future__ import annotations

import argparse
import heapq
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit import (
    RecordFilter,
    build_statistics,
    filter_records,
    format_statistics,
    iter_records,
    list_sessions,
    repair_chain,
    verify_chain,
)
from pytest_harness_audit.audit.continuity_files import witnessed_sessions
from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.audit.query import record_status, record_target
from pytest_harness_audit.audit.session_file import load_session_file
from pytest_harness_audit.audit.statistics import summarize_chain
from pytest_harness_audit.audit.storage import StorageLayout, sanitize_session_id
from pytest_harness_audit.audit.verify import ChainReport
from pytest_harness_audit.cli import checkpoint_cmd, prune_cmd
from pytest_harness_audit.doors.hook_continuity import recorded_losses
from pytest_harness_audit.doors.hook_session import unended_report
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.readers.report import load_report_text
from pytest_harness_audit.readers.report_check import chain_verdict, report_file_problem
from pytest_harness_audit.wording import one_line, plural

DEFAULT_LAST = 10
DEFAULT_QUERY_LIMIT = 50


def register(subparsers: Any) -> None:
    """Add the ``audit`` command group."""
    group = subparsers.add_parser("audit", help="inspect and verify audit chains")
    commands = group.add_subparsers(dest="command", metavar="SUBCOMMAND")
    commands.required = True

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = commands.add_parser(name, help=help_text)
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        return parser

    add("summary", "sessions with record counts, validity, tools and categories").set_defaults(
        func=_summary
    )

    verify = add("verify", "verify chain integrity (exit 1 if any chain is invalid)")
    verify.add_argument("session", nargs="?", help="session id (default: every session)")
    verify.add_argument("--full", action="store_true", help="parse every line in full")
    checkpoint_cmd.add_verify_options(verify)
    verify.set_defaults(func=_verify)

    last = add("last", "show the newest N records across sessions")
    last.add_argument("count", nargs="?", type=_non_negative, default=DEFAULT_LAST)
    last.add_argument("--session", help="only this session")
    last.set_defaults(func=_last)

    query = add("query", "filter records")
    query.add_argument("--session", help="only this session")
    query.add_argument("--tool", help="exact tool name")
    query.add_argument("--category", help="exact category")
    query.add_argument("--status", help="success, error or blocked")
    query.add_argument("--target", metavar="GLOB", help="glob over the display target")
    query.add_argument("--since", help="30s, 5m, 2h, 1d or an ISO timestamp")
    query.add_argument("--kind", help="record kind (call, escalation, lift, …)")
    query.add_argument(
        "--limit",
        type=_non_negative,
        default=DEFAULT_QUERY_LIMIT,
        help="newest N across sessions",
    )
    query.set_defaults(func=_query)

    report = add("report", "aggregated report: tools, categories, policy, errors, timeline")
    report.add_argument(
        "session_report",
        nargs="?",
        metavar="SESSION",
        help="print this session's report (written under --harness-audit), then its statistics",
    )
    report.add_argument("--session", help="only this session")
    report.add_argument("--since", help="30s, 5m, 2h, 1d or an ISO timestamp")
    report.set_defaults(func=_report)

    repair = add(
        "repair", "undo a crashed writer's leftovers: a torn final line, an unanchored append"
    )
    repair.add_argument("session", help="session id")
    repair.add_argument(
        "--public-key", metavar="FILE", help="a checkpoint signed with this key may vouch"
    )
    repair.add_argument("--checkpoints", metavar="FILE", help="checkpoint file to read")
    repair.set_defaults(func=_repair)
    checkpoint_cmd.register(add)
    prune_cmd.register(add)


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be zero or more: {value}")
    return value


def _sessions(args: argparse.Namespace) -> list[str]:
    """The session named by ``--session`` / the positional, or every stored session."""
    chosen = getattr(args, "session", None)
    if chosen:
        paths = StorageLayout.at(args.storage).paths(chosen)
        if not (paths.chain.exists() or paths.session_file.exists() or paths.anchor.exists()):
            raise UsageError(f"no audit session {paths.session_id!r} in {args.storage}")
        return [paths.session_id]
    return list_sessions(args.storage)


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _no_sessions(args: argparse.Namespace) -> int:
    if args.json:
        _print_json({"sessions": []})
    else:
        print(f"No audit sessions in {args.storage}.")
    return 0


def _lct_of(storage: str, session_id: str) -> str | None:
    data = load_session_file(StorageLayout.at(storage).paths(session_id).session_file)
    lct = data.get("lct") if data else None
    token = lct.get("tokenId") if isinstance(lct, dict) else None
    return token if isinstance(token, str) else None


# -- summary ---------------------------------------------------------------------------------


def _summary(args: argparse.Namespace) -> int:
    sessions = _sessions(args)
    if not sessions:
        return _no_sessions(args)
    summaries = []
    for session_id in sessions:
        report = verify_chain(args.storage, session_id)
        summaries.append(
            summarize_chain(
                session_id,
                _lct_of(args.storage, session_id),
                iter_records(args.storage, session_id),
                valid=report.valid,
                reason=report.reason,
                record_count=report.record_count,
            )
        )
    if args.json:
        _print_json({"sessions": [summary.to_dict() for summary in summaries]})
        return 0
    for summary in summaries:
        # the session file's label is not part of the chain: a rewrite of it adds no line
        label = one_line(summary.lct or summary.session_id)
        print(f"Session: {label}" + (f" ({summary.session_id})" if summary.lct else ""))
        print(f"  Actions: {sum(summary.tools.values())}")
        print(f"  Audit records: {summary.record_count}")
        validity = "true" if summary.valid else f"false ({summary.reason})"
        print(f"  Chain valid: {validity}")
        for loss in recorded_losses(args.storage, summary.session_id):
            print(f"  Chain lost before {loss}")
        print(f"  Tools: {json.dumps(summary.tools, ensure_ascii=False)}")
        print(f"  Categories: {json.dumps(summary.categories, ensure_ascii=False)}")
    return 0


# -- verify ----------------------------------------------------------------------------------


def _verify(args: argparse.Namespace) -> int:
    verify = checkpoint_cmd.verifier(args)
    if args.session:
        sanitize_session_id(args.session)
    # sessions whose every file is gone, yet a hook door's continuity witness saw their records
    gone = [] if args.session else witnessed_sessions(args.storage)
    ids = [args.session] if args.session else sorted({*_sessions(args), *gone})
    reports = [verify(sid) for sid in ids]
    # a chain a hook found lost (and recorded so) is whole from there on, yet not the session's
    lost = [recorded_losses(args.storage, sid) for sid in ids]
    exit_code = 0 if all(r.valid for r in reports) and not any(lost) else 1
    if args.json:
        sessions = [
            {**report.to_dict(), **({"chainLost": losses} if losses else {})}
            for report, losses in zip(reports, lost, strict=True)
        ]
        _print_json({"valid": exit_code == 0, "sessions": sessions})
        return exit_code
    if not reports:
        print(f"No audit sessions in {args.storage}.")
    elif args.session:
        _print_verify_detail(reports[0])
    else:
        for report in reports:
            _print_verify_line(report)
    for sid, losses in zip(ids, lost, strict=True):
        for loss in losses:
            print(f"{sid}: CHAIN LOST before {loss}")
    return exit_code


def _failure_text(report: ChainReport) -> str:
    who = f"record {report.first_bad_index}"
    if report.first_bad_record_id:
        who += f" ({report.first_bad_record_id})"
    return f"{who}: {report.reason}"


def _print_verify_line(report: ChainReport) -> None:
    if report.valid:
        note = ", legacy 16-hex links" if report.legacy_links else ""
        note += "" if report.anchored else ", no anchor"
        print(f"{report.session_id}: VALID ({plural(report.record_count, 'record')}{note})")
        return
    records = plural(report.record_count, "record")
    text = f"{report.session_id}: INVALID ({records}) — {_failure_text(report)}"
    if report.expected is not None or report.found is not None:
        text += f" (expected {report.expected}, found {report.found})"
    print(text)


def _print_verify_detail(report: ChainReport) -> None:
    print(f"Session: {report.session_id}")
    print(f"Chain valid: {'true' if report.valid else 'false'}")
    print(f"Records: {report.record_count}")
    print(f"Head: {report.head}")
    if report.anchor_state in ("none", "missing"):
        print(f"Anchor: {report.anchor_state}")
    else:
        print(f"Anchor: {report.anchor_state} ({plural(report.anchor_count or 0, 'record')})")
    if report.legacy_links:
        print("Links: legacy 16-hex links (reference plugin format) accepted")
    for line in checkpoint_cmd.head_lines(report):
        print(line)
    if report.valid:
        return
    print(f"First failure: {_failure_text(report)}")
    if report.expected is not None or report.found is not None:
        print(f"  expected: {report.expected}")
        print(f"  found:    {report.found}")
    print("Errors:")
    for error in report.errors:
        print(f"  - {error}")


# -- last / query ----------------------------------------------------------------------------


def _immune_event(record: dict[str, Any]) -> str | None:
    """What an escalation or lift record did, in words (``None`` for any other kind)."""
    event = record.get("immune")
    if not isinstance(event, dict):
        return None
    if record.get("kind") == "escalation":
        level, trigger = event.get("level", "?"), event.get("trigger", "?")
        score, threshold = _number(event.get("score")), _number(event.get("threshold"))
        return f"{level} ({trigger}: score {score}, threshold {threshold})"
    if record.get("kind") == "lift":
        return f"lift from {event.get('previousLevel', '?')}: {event.get('reason', '')!r}"
    return None


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else "?"


def _describe(record: dict[str, Any], *, detailed: bool) -> str:
    # one record, one line: a line break in what the agent wrote is shown as ``\n``
    stamp = one_line(str(record.get("timestamp", "?")))
    tool = one_line(str(record.get("tool", "?")))
    target = _immune_event(record) or record_target(record) or f"({record.get('kind', 'call')})"
    target = one_line(target)
    status = record_status(record) or "?"
    if not detailed:
        return f"{stamp} {tool} → {target} [{status}]"
    result = record.get("result")
    result = result if isinstance(result, dict) else {}
    duration = result.get("durationMs")
    duration_text = f" {duration}ms" if isinstance(duration, (int, float)) else ""
    error = result.get("errorMessage")
    error_text = f" — {one_line(error)}" if isinstance(error, str) and error else ""
    category = one_line(str(record.get("category", "?")))
    return f"{stamp} {tool} [{category}] → {target} [{status}]{duration_text}{error_text}"


def _newest_groups(
    storage: str, sessions: list[str], criteria: RecordFilter, limit: int | None
) -> list[tuple[str, list[dict[str, Any]]]]:
    """The ``limit`` newest matching records across ``sessions`` (all when ``None``), grouped by
    session: the session with the newest record first, each group oldest first."""
    found = [
        (str(record.get("timestamp", "")), order, sid, record)
        for sid in sessions
        for order, record in enumerate(filter_records(iter_records(storage, sid), criteria))
    ]
    if limit is not None:
        found = heapq.nlargest(limit, found, key=lambda item: (item[0], item[1]))
    groups: dict[str, list[tuple[str, int, dict[str, Any]]]] = {}
    for stamp, order, sid, record in sorted(found, key=lambda item: (item[0], item[1])):
        groups.setdefault(sid, []).append((stamp, order, record))
    ordered = sorted(groups.items(), key=lambda group: group[1][-1][:2], reverse=True)
    return [(sid, [record for _, _, record in items]) for sid, items in ordered]


def _last(args: argparse.Namespace) -> int:
    sessions = _sessions(args)
    groups = _newest_groups(args.storage, sessions, RecordFilter(), args.count)
    if args.json:
        _print_json({"sessions": [{"sessionId": sid, "records": recs} for sid, recs in groups]})
        return 0
    if not sessions:
        return _no_sessions(args)
    for sid, records in groups:
        if len(groups) > 1:
            print(f"Session: {sid}")
        prefix = "  " if len(groups) > 1 else ""
        for record in records:
            print(prefix + _describe(record, detailed=False))
    return 0


def _query(args: argparse.Namespace) -> int:
    criteria = RecordFilter(
        tool=args.tool,
        category=args.category,
        status=args.status,
        target=args.target,
        since=args.since,
        kind=args.kind,
    )
    groups = _newest_groups(args.storage, _sessions(args), criteria, args.limit)
    if args.json:
        _print_json(
            {
                "total": sum(len(records) for _, records in groups),
                "sessions": [
                    {"sessionId": sid, "count": len(records), "records": records}
                    for sid, records in groups
                ],
            }
        )
        return 0
    if not groups:
        print("No matching audit records found.")
        return 0
    for sid, records in groups:
        print(f"Session: {sid} ({plural(len(records), 'result')})")
        for record in records:
            print("  " + _describe(record, detailed=True))
    return 0


# -- report / repair -------------------------------------------------------------------------


def _report(args: argparse.Namespace) -> int:
    session_text: str | None = None
    problem: str | None = None
    if args.session_report:
        if args.session and args.session != args.session_report:
            raise UsageError("give the session once: SESSION or --session")
        args.session = args.session_report
        if args.session not in list_sessions(args.storage):
            raise UsageError(f"no session {args.session!r} in {args.storage}")
        session_text, problem = _stored_report(args.storage, args.session)
    criteria = RecordFilter(since=args.since)

    def records() -> Iterator[dict[str, Any]]:
        for sid in _sessions(args):
            yield from filter_records(iter_records(args.storage, sid), criteria)

    report = build_statistics(records())
    if args.json:
        data = report.to_dict()
        if args.session_report:
            data["sessionReport"] = session_text
            if problem is not None:
                data["sessionReportProblem"] = problem
        _print_json(data)
        return 0 if problem is None else 1
    if args.session_report:
        if problem is not None:
            print(problem)
        elif session_text is None:
            print(
                f"(no session report file for {args.session}: reports are written by "
                "pytest --harness-audit)"
            )
        else:
            print(session_text.rstrip("\n"))
        print()
    print(format_statistics(report))
    return 0 if problem is None else 1


def _stored_report(storage: str, session_id: str) -> tuple[str | None, str | None]:
    """The session's report to print, and why its report file is not printed (``None``: it
    is, or there is none). A hook session with no ``SessionEnd`` is judged now (the host's
    settings compared too); any other report file is printed only when its document is what
    the chain holds now (:func:`.report_file_problem`): the file is a copy a program can
    rewrite, the chain is the evidence."""
    unended = unended_report(Path(storage), session_id)
    if unended is not None:
        return unended.render(), None
    text = load_report_text(storage, session_id)
    problem = None if text is None else report_file_problem(storage, session_id, text)
    if problem is None:
        return text, None
    verdict = chain_verdict(storage, session_id)[0]
    return None, (
        f"the report file of {session_id} is not what its chain holds ({one_line(problem)}): "
        f"not shown; the chain judges {verdict} "
        f"(harness-audit audit verify {session_id}; harness-audit view {session_id})"
    )


def _repair(args: argparse.Namespace) -> int:
    try:
        key = checkpoint_cmd.repair_key(args)
        result = repair_chain(
            args.storage, args.session, public_key=key, checkpoints=args.checkpoints
        )
    except ChainError as exc:
        if args.json:
            _print_json({"sessionId": args.session, "repaired": False, "refused": str(exc)})
        else:
            print(f"Refusing to repair: {exc}")
        return 1
    if args.json:
        _print_json(result.to_dict())
        return 0
    path = Path(result.report.path or "")
    if result.repaired:
        if result.removed_bytes:
            print(
                f"Removed a torn final line ({result.removed_bytes} bytes, sha256 "
                f"{result.removed_sha256}) from {path}."
            )
        if result.adopted_records:
            print(
                f"Anchored an interrupted append (a complete record written just before its "
                f"writer died) in {path}."
            )
        print(f"Chain valid: true ({plural(result.report.record_count, 'record')})")
    else:
        print(
            f"Nothing to repair: chain {result.session_id} is valid "
            f"({plural(result.report.record_count, 'record')})."
        )
    return 0
