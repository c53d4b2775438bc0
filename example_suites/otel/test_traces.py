"""Harness sessions as OpenTelemetry traces (GenAI semantic conventions).

Run with ``--harness-audit-otel=otlp`` to send every session of the suite to the collector at
``OTEL_EXPORTER_OTLP_ENDPOINT``, or ``--harness-audit-otel=spans.json`` to write them to a file.
The tests below check a session's trace themselves with the SDK's in-memory exporter. Needs the
``otel`` extra (``pip install 'pytest-harness-audit[otel]'``); skipped without it.
"""

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from pytest_harness_audit.readers.otel import export_spans, session_spans


def trace_of(harness):
    """The finished spans of the session so far, as a collector would receive them."""
    exporter = InMemorySpanExporter()
    spans = session_spans([record.raw for record in harness.records], harness.session_id)
    assert export_spans(spans, exporter, "memory") is None
    return exporter.get_finished_spans()


def test_each_call_is_an_execute_tool_span(harness):
    harness.call("Glob", pattern="*")
    harness.call("Bash", command="git status")
    root, *calls = trace_of(harness)
    assert root.name == "invoke_agent"
    assert root.attributes["gen_ai.conversation.id"] == harness.session_id
    assert [span.attributes["gen_ai.tool.name"] for span in calls] == ["Glob", "Bash"]
    assert [span.attributes["gen_ai.tool.call.id"] for span in calls] == [
        record.record_id for record in harness.records
    ]
    assert all(span.parent.span_id == root.context.span_id for span in calls)


@pytest.mark.expect_verdict("FAIL")
def test_a_denied_call_is_an_error_span_naming_its_rule(harness):
    harness.call("Read", file_path=".env")
    _, denied = trace_of(harness)
    assert denied.status.status_code is StatusCode.ERROR
    assert denied.attributes["error.type"] == "blocked"
    assert denied.attributes["harness_audit.decision"] == "deny"
    assert denied.attributes["harness_audit.rule"] == "deny-secret-files"
