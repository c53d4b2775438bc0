"""Statistics over records: tools, categories, policy decisions, errors, timeline.

:func:`build_statistics` aggregates any set of records (``harness-audit audit report``);
:func:`summarize_chain` counts one session's chain at a glance (``harness-audit audit summary``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from pytest_harness_audit.audit.clock import minute_bucket, parse_timestamp
from pytest_harness_audit.audit.query import record_status
from pytest_harness_audit.audit.tags import record_tags
from pytest_harness_audit.wording import one_line

_TOP_ERRORS = 5


@dataclass(frozen=True)
class ToolStats:
    """Outcome counts and mean duration of one tool's calls."""

    tool: str
    invocations: int
    success: int
    error: int
    blocked: int
    success_rate: float
    mean_duration_ms: float | None


@dataclass(frozen=True)
class CategoryShare:
    """How many calls fell into one category, and their share in percent."""

    category: str
    count: int
    percentage: float


@dataclass(frozen=True)
class PolicyStats:
    """Policy decisions as recorded in ``rules.constraints``.

    ``deny`` counts every deny decision; ``dry_run_deny`` those that were not enforced (the call
    ran). ``unevaluated`` counts calls whose record carries no ``policy:`` constraint.
    """

    evaluated: int
    allow: int
    warn: int
    deny: int
    dry_run_deny: int
    blocked: int
    unevaluated: int
    block_rate: float


@dataclass(frozen=True)
class ErrorSummary:
    """Errors of one tool and its most frequent messages."""

    tool: str
    count: int
    top_messages: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class AuditStatistics:
    """The aggregated view of a set of records (calls only for tool and policy figures)."""

    total_records: int
    time_range: tuple[str, str] | None
    kinds: dict[str, int]
    tool_stats: tuple[ToolStats, ...]
    category_breakdown: tuple[CategoryShare, ...]
    policy: PolicyStats
    errors: tuple[ErrorSummary, ...]
    timeline: tuple[tuple[str, int], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``--json`` output)."""
        data = asdict(self)
        data["time_range"] = (
            None
            if self.time_range is None
            else {"from": self.time_range[0], "to": self.time_range[1]}
        )
        data["errors"] = [
            {
                "tool": item.tool,
                "count": item.count,
                "top_messages": [{"message": m, "count": c} for m, c in item.top_messages],
            }
            for item in self.errors
        ]
        data["timeline"] = [{"minute": minute, "count": count} for minute, count in self.timeline]
        return data


class _ToolTally:
    __slots__ = ("blocked", "duration_count", "duration_total", "error", "success")

    def __init__(self) -> None:
        self.success = self.error = self.blocked = self.duration_count = 0
        self.duration_total = 0.0


def build_statistics(records: Iterable[dict[str, Any]]) -> AuditStatistics:
    """Aggregate ``records`` in one streaming pass (memory grows with distinct values only)."""
    total = 0
    kinds: Counter[str] = Counter()
    tools: dict[str, _ToolTally] = {}
    categories: Counter[str] = Counter()
    decisions: Counter[str] = Counter()
    dry_run = blocked_total = unevaluated = calls = 0
    error_messages: dict[str, Counter[str]] = {}
    error_counts: Counter[str] = Counter()
    timeline: Counter[str] = Counter()
    first: tuple[Any, str] | None = None
    last: tuple[Any, str] | None = None
    for record in records:
        total += 1
        kind = record.get("kind", "call")
        kind = kind if isinstance(kind, str) else "call"
        kinds[kind] += 1
        stamp = record.get("timestamp")
        if isinstance(stamp, str):
            minute = minute_bucket(stamp)
            if minute is not None:
                timeline[minute] += 1
            moment = parse_timestamp(stamp)
            if moment is not None:
                if first is None or moment < first[0]:
                    first = (moment, stamp)
                if last is None or moment >= last[0]:
                    last = (moment, stamp)
        if kind != "call":
            continue
        calls += 1
        tool = str(record.get("tool", "?"))
        tally = tools.get(tool)
        if tally is None:
            tally = tools[tool] = _ToolTally()
        status = record_status(record)
        if status == "success":
            tally.success += 1
        elif status == "error":
            tally.error += 1
        elif status == "blocked":
            tally.blocked += 1
            blocked_total += 1
        result = record.get("result")
        result = result if isinstance(result, dict) else {}
        duration = result.get("durationMs")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool):
            tally.duration_total += duration
            tally.duration_count += 1
        categories[str(record.get("category", "unknown"))] += 1
        tags = record_tags(record)
        if tags.decision is None:
            unevaluated += 1
        else:
            decisions[tags.decision] += 1
            if tags.dry_run_deny:
                dry_run += 1
        if status == "error":
            error_counts[tool] += 1
            message = result.get("errorMessage")
            if isinstance(message, str):
                error_messages.setdefault(tool, Counter())[message] += 1
    tool_stats = sorted(
        (
            ToolStats(
                tool=name,
                invocations=(count := tally.success + tally.error + tally.blocked),
                success=tally.success,
                error=tally.error,
                blocked=tally.blocked,
                success_rate=tally.success / count if count else 0.0,
                mean_duration_ms=(
                    tally.duration_total / tally.duration_count if tally.duration_count else None
                ),
            )
            for name, tally in tools.items()
        ),
        key=lambda item: (-item.invocations, item.tool),
    )
    category_breakdown = tuple(
        CategoryShare(name, count, count * 100.0 / calls if calls else 0.0)
        for name, count in sorted(categories.items(), key=lambda item: (-item[1], item[0]))
    )
    evaluated = sum(decisions.values())
    policy = PolicyStats(
        evaluated=evaluated,
        allow=decisions.get("allow", 0),
        warn=decisions.get("warn", 0),
        deny=decisions.get("deny", 0),
        dry_run_deny=dry_run,
        blocked=blocked_total,
        unevaluated=unevaluated,
        block_rate=blocked_total / calls if calls else 0.0,
    )
    errors = tuple(
        ErrorSummary(
            tool=name,
            count=count,
            top_messages=tuple(
                sorted(
                    error_messages.get(name, Counter()).items(),
                    key=lambda item: (-item[1], item[0]),
                )[:_TOP_ERRORS]
            ),
        )
        for name, count in sorted(error_counts.items(), key=lambda item: (-item[1], item[0]))
    )
    return AuditStatistics(
        total_records=total,
        time_range=None if first is None or last is None else (first[1], last[1]),
        kinds=dict(sorted(kinds.items())),
        tool_stats=tuple(tool_stats),
        category_breakdown=category_breakdown,
        policy=policy,
        errors=errors,
        timeline=tuple(sorted(timeline.items())),
    )


def format_statistics(report: AuditStatistics) -> str:
    """Plain-text form of statistics (the reference plugin's report layout, warns included)."""
    lines = ["=== Audit Report ===", f"Total records: {report.total_records}"]
    if report.time_range is not None:
        lines.append(f"Time range: {report.time_range[0]} → {report.time_range[1]}")
    other_kinds = {kind: count for kind, count in report.kinds.items() if kind != "call"}
    if other_kinds:
        lines.append("Other records: " + ", ".join(f"{k}={v}" for k, v in other_kinds.items()))
    lines.append("")
    lines.append("--- Tool Stats ---")
    if not report.tool_stats:
        lines.append("  (no data)")
    for stats in report.tool_stats:
        duration = (
            "n/a" if stats.mean_duration_ms is None else f"{stats.mean_duration_ms:.0f}ms avg"
        )
        lines.append(
            f"  {one_line(stats.tool)}: {stats.invocations} calls,"
            f" {stats.success_rate * 100:.0f}% success"
            f" ({stats.success} ok, {stats.error} error, {stats.blocked} blocked), {duration}"
        )
    lines.append("")
    lines.append("--- Categories ---")
    for share in report.category_breakdown:
        lines.append(f"  {share.category}: {share.count} ({share.percentage:.1f}%)")
    lines.append("")
    policy = report.policy
    lines.append("--- Policy ---")
    lines.append(f"  Evaluated: {policy.evaluated}")
    lines.append(f"  Allowed: {policy.allow}")
    lines.append(f"  Warned: {policy.warn}")
    lines.append(f"  Denied: {policy.deny} ({policy.dry_run_deny} dry-run)")
    lines.append(f"  Blocked: {policy.blocked}")
    if policy.unevaluated:
        lines.append(f"  Without policy decision: {policy.unevaluated}")
    lines.append(f"  Block rate: {policy.block_rate * 100:.1f}%")
    lines.append("")
    if report.errors:
        lines.append("--- Errors ---")
        for summary in report.errors:
            lines.append(f"  {one_line(summary.tool)}: {summary.count} errors")
            for message, count in summary.top_messages:
                lines.append(f"    - {one_line(message)} ({count}x)")
        lines.append("")
    if report.timeline:
        lines.append("--- Timeline (actions/min) ---")
        for minute, count in report.timeline:
            lines.append(f"  {minute}: {count}")
    return "\n".join(lines).rstrip("\n")


@dataclass(frozen=True)
class ChainSummary:
    """One session's chain at a glance: identity, size, validity, tool and category counts."""

    session_id: str
    lct: str | None
    record_count: int
    valid: bool
    reason: str | None
    tools: dict[str, int]
    categories: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``--json`` output)."""
        return asdict(self)


def summarize_chain(
    session_id: str,
    lct: str | None,
    records: Iterable[dict[str, Any]],
    *,
    valid: bool,
    reason: str | None,
    record_count: int,
) -> ChainSummary:
    """Count tools and categories of a session's call records."""
    tools: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    for record in records:
        if record.get("kind", "call") != "call":
            continue
        tools[str(record.get("tool", "?"))] += 1
        categories[str(record.get("category", "unknown"))] += 1
    return ChainSummary(
        session_id=session_id,
        lct=lct,
        record_count=record_count,
        valid=valid,
        reason=reason,
        tools=dict(tools.most_common()),
        categories=dict(categories.most_common()),
    )
