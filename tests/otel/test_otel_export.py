"""A session's chain as an OpenTelemetry trace in the GenAI conventions: built from the chain
after the session, checked with the SDK's in-memory exporter; the JSON Lines file; an
unreachable OTLP endpoint is one line and changes no record."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra")

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from pytest_harness_audit.audit.reader import iter_file_records
from pytest_harness_audit.readers.otel import (
    OtelTarget,
    export_chain,
    export_spans,
    session_spans,
)
from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def session(tmp_path: Path) -> Harness:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    harness.call("Read", file_path="README.md")
    harness.call("Bash", command="rm -rf /")
    harness.call("Read", file_path="no-such-file.txt")
    harness.close()
    return harness


def exported(harness: Harness) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    spans = session_spans(iter_file_records(harness.chain.path), harness.session_id)
    assert export_spans(spans, exporter, "memory") is None
    return list(exporter.get_finished_spans())


def test_a_session_is_one_trace_with_an_execute_tool_span_per_call(session: Harness) -> None:
    spans = exported(session)
    root, *calls = spans
    records = [r for r in iter_file_records(session.chain.path) if r.get("kind") == "call"]
    assert root.name == "invoke_agent"
    assert root.parent is None
    assert root.attributes is not None
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.conversation.id"] == session.session_id
    assert root.attributes["harness_audit.failed_calls"] == 2
    names = [s.name for s in calls]
    assert names == ["execute_tool Read", "execute_tool Bash", "execute_tool Read"]
    for span, record in zip(calls, records, strict=True):
        assert span.kind is SpanKind.INTERNAL
        assert span.context is not None and root.context is not None
        assert span.context.trace_id == root.context.trace_id
        assert span.parent is not None and span.parent.span_id == root.context.span_id
        attributes = dict(span.attributes or {})
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["gen_ai.tool.name"] == record["tool"]
        assert attributes["gen_ai.tool.call.id"] == record["recordId"]
        assert attributes["harness_audit.record_id"] == record["recordId"]
        assert attributes["harness_audit.status"] == record["result"]["status"]
        # the span ends at the record's clock and lasts its duration
        assert span.end_time == int(record["clock"] * 1e9)
        assert span.start_time == span.end_time - int(record["result"]["durationMs"] * 1e6)
        assert root.start_time is not None and span.start_time >= root.start_time
        assert root.end_time is not None and span.end_time <= root.end_time


def test_decision_rule_and_error_status(session: Harness) -> None:
    _, read, bash, missing = exported(session)
    assert read.status.status_code is StatusCode.UNSET
    assert dict(read.attributes or {})["harness_audit.decision"] == "allow"
    assert "error.type" not in (read.attributes or {})
    bash_attributes = dict(bash.attributes or {})
    assert bash_attributes["harness_audit.decision"] == "deny"
    assert bash_attributes["harness_audit.rule"] == "deny-destructive-commands"
    assert bash_attributes["harness_audit.status"] == "blocked"
    assert bash_attributes["error.type"] == "blocked"
    assert bash.status.status_code is StatusCode.ERROR
    assert "Destructive command blocked" in (bash.status.description or "")
    assert dict(missing.attributes or {})["error.type"] == "tool_error"
    assert missing.status.status_code is StatusCode.ERROR


def test_exporting_twice_gives_the_same_ids(session: Harness) -> None:
    first = [(s.context.trace_id, s.context.span_id) for s in exported(session) if s.context]
    second = [(s.context.trace_id, s.context.span_id) for s in exported(session) if s.context]
    assert first == second
    assert len({span_id for _, span_id in first}) == len(first) == 4


def record(index: int, kind: str = "call", **extra: Any) -> dict[str, Any]:
    return {
        "recordId": f"audit:0000000{index}",
        "kind": kind,
        "tool": "git_status",
        "door": "proxy",
        "clock": 1_700_000_000.0 + index,
        "rules": {"constraints": ["policy:warn", "rule:watch-git"]},
        "provenance": {"actionIndex": index},
        "result": {"status": "success", "durationMs": 250.0},
        **extra,
    }


def test_records_of_any_door_and_other_kinds() -> None:
    records = [record(0), record(1, kind="escalation"), record(2, tool="git_log")]
    root, first, second = session_spans(records, "proxy-session")
    assert dict(first.attributes or {})["harness_audit.door"] == "proxy"
    assert dict(first.attributes or {})["harness_audit.decision"] == "warn"
    assert second.name == "execute_tool git_log"
    assert [e.name for e in root.events] == ["harness_audit.escalation"]
    assert dict(root.events[0].attributes or {})["harness_audit.record_id"] == "audit:00000001"
    assert root.start_time == int(1_700_000_000.0 * 1e9) - 250_000_000
    assert root.end_time == int(1_700_000_002.0 * 1e9)


def test_an_empty_session_is_a_root_span_alone() -> None:
    spans = session_spans([], "empty")
    assert [s.name for s in spans] == ["invoke_agent"]


def test_the_json_lines_file(session: Harness, tmp_path: Path) -> None:
    path = tmp_path / "out" / "spans.json"
    assert export_chain(session.chain.path, session.session_id, OtelTarget(str(path))) is None
    assert export_chain(session.chain.path, session.session_id, OtelTarget(str(path))) is None
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 8
    assert [line["name"] for line in lines[:4]] == [
        "invoke_agent",
        "execute_tool Read",
        "execute_tool Bash",
        "execute_tool Read",
    ]
    assert lines[2]["attributes"]["harness_audit.decision"] == "deny"
    assert lines[2]["status"]["status_code"] == "ERROR"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_otlp_endpoint_is_one_line_and_loses_no_record(
    session: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    endpoint = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    before = session.chain.path.read_bytes()
    problem = export_chain(session.chain.path, session.session_id, OtelTarget("otlp"))
    where = f"{endpoint}/v1/traces"
    assert problem == f"OpenTelemetry export to {where} failed (unreachable or refused)"
    assert session.chain.path.read_bytes() == before
    assert session.verify().valid


def test_an_unwritable_file_is_one_line(session: Harness, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory")
    problem = export_chain(
        session.chain.path, session.session_id, OtelTarget(str(blocker / "spans.json"))
    )
    assert problem is not None and "\n" not in problem
    assert problem.startswith(f"OpenTelemetry export to {blocker / 'spans.json'} failed: ")


def test_timestamps_without_a_clock_and_malformed_fields() -> None:
    plain = {
        "recordId": "audit:00000009",
        "tool": "Read",
        "timestamp": "2026-01-02T03:04:05.500Z",
        "result": {"status": "error", "durationMs": 500},
    }
    hostile = {
        "recordId": "audit:0000000a",
        "tool": "Bash",
        "clock": "soon",
        "rules": "not an object",
        "provenance": {"actionIndex": "first"},
        "result": ["not", "an", "object"],
        "alerts": "not a list",
    }
    root, read, bash = session_spans([plain, hostile], "odd")
    assert read.end_time == 1_767_323_045_500_000_000
    assert read.start_time == read.end_time - 500_000_000
    assert read.status.status_code is StatusCode.ERROR
    attributes = dict(bash.attributes or {})
    assert attributes["harness_audit.position"] == -1
    assert attributes["harness_audit.status"] == ""
    assert "harness_audit.decision" not in attributes and "harness_audit.alerts" not in attributes
    assert root.start_time == read.start_time
