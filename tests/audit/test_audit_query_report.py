"""Filtering records and the aggregated report."""

from __future__ import annotations

import datetime as dt

import pytest

from pytest_harness_audit.audit import (
    AuditChain,
    RecordFilter,
    build_statistics,
    filter_records,
    format_statistics,
    iter_records,
    list_sessions,
    parse_since,
)
from pytest_harness_audit.errors import UsageError

NOW = dt.datetime(2026, 2, 1, 12, 0, 0, tzinfo=dt.timezone.utc)


def _rec(
    tool="Bash",
    category="command",
    target="ls",
    status="success",
    *,
    ts="12:00:00",
    constraints=("policy:allow", "rule:default"),
    error=None,
    duration=None,
    kind="call",
):
    result = {"status": status}
    if error is not None:
        result["errorMessage"] = error
    if duration is not None:
        result["durationMs"] = duration
    record = {
        "timestamp": f"2026-02-01T{ts}.000Z",
        "kind": kind,
        "tool": tool,
        "category": category,
        "rules": {"auditLevel": "standard", "constraints": list(constraints)},
        "result": result,
    }
    if target is not None:
        record["target"] = target
    return record


RECORDS = [
    _rec(
        "Read",
        "file_read",
        "/p/.env",
        "blocked",
        ts="11:00:00",
        constraints=("policy:deny", "rule:deny-secret-files"),
    ),
    _rec("Read", "file_read", "/p/prod.env", ts="11:00:30"),
    _rec(
        "Bash",
        "command",
        "rm -rf build",
        ts="11:58:00",
        constraints=("policy:deny", "rule:deny-destructive", "enforced:false"),
        duration=10,
    ),
    _rec(
        "WebFetch",
        "network",
        "https://example.org",
        "error",
        ts="11:59:10",
        constraints=("policy:warn", "rule:warn-network"),
        error="timeout",
        duration=30,
    ),
    _rec(
        "WebFetch",
        "network",
        "https://example.org/x",
        "error",
        ts="11:59:40",
        constraints=("policy:warn", "rule:warn-network"),
        error="timeout",
    ),
    _rec(
        "WebFetch",
        "network",
        "https://example.org/y",
        "error",
        ts="11:59:50",
        constraints=("policy:warn", "rule:warn-network"),
        error="refused",
    ),
    _rec("Bash", "command", None, ts="11:59:59", constraints=()),
    _rec(
        "immune", "immune", None, ts="11:59:59", kind="escalation", constraints=("immune:notice",)
    ),
]


def _pick(**criteria):
    return list(filter_records(RECORDS, RecordFilter(**criteria), now=NOW))


def test_filters_by_tool_category_status_and_kind():
    assert len(_pick(tool="WebFetch")) == 3
    assert len(_pick(category="file_read")) == 2
    assert [r["target"] for r in _pick(status="blocked")] == ["/p/.env"]
    assert len(_pick(kind="escalation")) == 1
    assert _pick(tool="Bash", status="error") == []


def test_target_glob_uses_whole_target_and_settled_semantics():
    assert [r["target"] for r in _pick(target="**/.env")] == ["/p/.env"]
    assert [r["target"] for r in _pick(target="/p/*.env")] == ["/p/.env", "/p/prod.env"]
    assert len(_pick(target="https://example.org/?")) == 2
    assert _pick(target="example.org") == []


def test_since_relative_and_iso():
    assert len(_pick(since="2m")) == 6
    assert len(_pick(since="30s")) == 4
    assert len(_pick(since="2026-02-01T11:59:45Z")) == 3
    assert len(_pick(since="1d")) == len(RECORDS)


def test_limit_keeps_the_last_n_in_order():
    assert [r["timestamp"][11:19] for r in _pick(tool="WebFetch", limit=2)] == [
        "11:59:40",
        "11:59:50",
    ]
    assert _pick(limit=0) == []


@pytest.mark.parametrize("bad", ["yesterday", "5 minutes", "-1h", ""])
def test_unreadable_since_is_a_usage_error(bad):
    with pytest.raises(UsageError, match="--since"):
        parse_since(bad, now=NOW)


def test_bad_status_is_a_usage_error():
    with pytest.raises(UsageError, match="--status"):
        RecordFilter(status="denied")


def test_report_counts_tools_categories_policy_errors_and_timeline():
    report = build_statistics(RECORDS)
    assert report.total_records == 8
    assert report.kinds == {"call": 7, "escalation": 1}
    assert report.time_range == ("2026-02-01T11:00:00.000Z", "2026-02-01T11:59:59.000Z")
    web = next(s for s in report.tool_stats if s.tool == "WebFetch")
    assert (web.invocations, web.success, web.error, web.blocked) == (3, 0, 3, 0)
    assert web.mean_duration_ms == 30
    read = next(s for s in report.tool_stats if s.tool == "Read")
    assert (read.success, read.blocked, read.success_rate) == (1, 1, 0.5)
    assert [s.tool for s in report.tool_stats] == ["WebFetch", "Bash", "Read"]
    top = report.category_breakdown[0]
    assert (top.category, top.count) == ("network", 3)
    assert round(sum(c.percentage for c in report.category_breakdown)) == 100
    policy = report.policy
    assert (policy.allow, policy.warn, policy.deny, policy.dry_run_deny) == (1, 3, 2, 1)
    assert (policy.blocked, policy.unevaluated, policy.evaluated) == (1, 1, 6)
    assert report.errors[0].tool == "WebFetch"
    assert report.errors[0].top_messages == (("timeout", 2), ("refused", 1))
    assert report.timeline == (
        ("2026-02-01T11:00", 2),
        ("2026-02-01T11:58", 1),
        ("2026-02-01T11:59", 5),
    )


def test_report_text_and_json_forms():
    report = build_statistics(RECORDS)
    text = format_statistics(report)
    for heading in (
        "=== Audit Report ===",
        "--- Tool Stats ---",
        "--- Categories ---",
        "--- Policy ---",
        "--- Errors ---",
        "--- Timeline (actions/min) ---",
    ):
        assert heading in text
    assert "Warned: 3" in text and "Denied: 2 (1 dry-run)" in text
    data = report.to_dict()
    assert data["policy"]["warn"] == 3
    assert data["timeline"][0] == {"minute": "2026-02-01T11:00", "count": 2}
    assert "(no data)" in format_statistics(build_statistics([]))


def test_reading_sessions_from_storage(storage, make_draft):
    for name in ("b-session", "a-session"):
        with AuditChain(storage, name) as chain:
            chain.append(make_draft(0))
            chain.append(make_draft(1))
    assert list_sessions(storage) == ["a-session", "b-session"]
    assert [r["target"] for r in iter_records(storage, "a-session")] == [
        "echo step 0",
        "echo step 1",
    ]
    assert list_sessions(storage / "missing") == []


def test_reading_skips_a_torn_tail(storage, make_draft):
    with AuditChain(storage, "torn") as chain:
        chain.append(make_draft(0))
    with open(chain.path, "ab") as handle:
        handle.write(b'{"recordId":"audit:1')
    assert len(list(iter_records(storage, "torn"))) == 1
