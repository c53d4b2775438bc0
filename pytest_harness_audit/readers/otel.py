"""A session's chain as an OpenTelemetry trace, in the GenAI semantic conventions.

The trace is built after the session, from the records of its chain, so every door's sessions
(scripted, proxy, hook) export the same way and the chain is only read. One root span
``invoke_agent`` stands for the session (``gen_ai.conversation.id`` is the session id); each
call record is an ``execute_tool {tool}`` child span (``gen_ai.operation.name``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id`` = the record id) carrying the project's own
attributes under ``harness_audit.`` (decision, status, rule, record id, …). A blocked or failed
call has span status ERROR and ``error.type``. A span ends at the record's clock and starts
``durationMs`` before it. Other records (escalations, lifts, messages …) are events of the
root span. Trace and span ids are derived from the session and record ids, so exporting a
session twice gives the same trace.

Needs the ``otel`` extra (``opentelemetry-sdk``; ``opentelemetry-exporter-otlp-proto-http`` for
OTLP); importing this module without it raises ``ImportError``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

from pytest_harness_audit._version import __version__
from pytest_harness_audit.audit.atomic_file import replace_file
from pytest_harness_audit.audit.reader import iter_file_records
from pytest_harness_audit.audit.tags import parse_tags

#: Prefix of the attributes that are the project's, not the conventions'.
PREFIX = "harness_audit."
SCOPE = "pytest-harness-audit"
INSTALL_HINT = "pip install 'pytest-harness-audit[otel]'"
DEFAULT_OTLP_ENDPOINT = "http://localhost:4318/v1/traces"


class _DerivedIds(IdGenerator):
    """Ids from the session and record ids: the span about to start takes ``next_span``."""

    def __init__(self, trace_id: int) -> None:
        self.trace_id = trace_id
        self.next_span = 1

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.next_span


class _Collect(SpanProcessor):
    """Keeps every ended span, to export them in one batch."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.spans.append(span)


def _derived(*parts: str, size: int) -> int:
    digest = hashlib.sha256("\x00".join(parts).encode()).digest()
    return int.from_bytes(digest[:size], "big") or 1


def _part(record: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """A nested object of a record, or an empty one when it is missing or not an object."""
    value = record.get(key)
    return value if isinstance(value, Mapping) else {}


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
        return float(value)
    return None


def _end_ns(record: Mapping[str, Any]) -> int:
    clock = _number(record.get("clock"))
    if clock is not None and 0 < clock < 1e11:
        return int(clock * 1e9)
    stamp = str(record.get("timestamp", ""))
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1e9)
    except (ValueError, OverflowError):
        return 0


def _start_ns(record: Mapping[str, Any], end: int) -> int:
    duration = _number(_part(record, "result").get("durationMs"))
    if end and duration is not None and 0 < duration * 1e6 < end:
        return end - int(duration * 1e6)
    return end


def call_attributes(record: Mapping[str, Any]) -> dict[str, Any]:
    """The ``execute_tool`` span attributes of one call record."""
    constraints = _part(record, "rules").get("constraints")
    tags = parse_tags(constraints if isinstance(constraints, (list, tuple)) else ())
    result = _part(record, "result")
    position = _number(_part(record, "provenance").get("actionIndex"))
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": str(record.get("tool", "")),
        "gen_ai.tool.call.id": str(record.get("recordId", "")),
        PREFIX + "record_id": str(record.get("recordId", "")),
        PREFIX + "position": int(position) if position is not None else -1,
        PREFIX + "status": str(result.get("status", "")),
        PREFIX + "door": str(record.get("door", "scripted")),
        PREFIX + "enforced": tags.enforced,
    }
    optional = {
        "decision": tags.decision,
        "rule": tags.rule,
        "category": record.get("category"),
        "target": record.get("target"),
        "reason": record.get("reason"),
    }
    for key, value in optional.items():
        if value is not None:
            attributes[PREFIX + key] = str(value)
    alerts = record.get("alerts")
    if isinstance(alerts, (list, tuple)) and alerts:
        attributes[PREFIX + "alerts"] = [str(alert) for alert in alerts]
    if result.get("status") in ("blocked", "error"):
        attributes["error.type"] = "blocked" if result.get("status") == "blocked" else "tool_error"
    return attributes


def session_spans(
    records: Iterable[Mapping[str, Any]], session_id: str, *, resource: Resource | None = None
) -> list[ReadableSpan]:
    """The spans of one session: the root first, then one per record of kind ``call``."""
    records = list(records)
    seed = records[0].get("recordId", "") if records else ""
    ids = _DerivedIds(_derived(session_id, str(seed), size=16))
    collected = _Collect()
    provider = TracerProvider(
        resource=resource or Resource.create({"service.name": SCOPE}), id_generator=ids
    )
    provider.add_span_processor(collected)
    tracer = provider.get_tracer(SCOPE, __version__)
    times = [(_start_ns(r, _end_ns(r)), _end_ns(r)) for r in records]
    starts = [start for start, _ in times if start] or [0]
    ends = [end for _, end in times if end] or [0]
    ids.next_span = _derived(session_id, "root", size=8)
    root = tracer.start_span(
        "invoke_agent",
        kind=SpanKind.INTERNAL,
        start_time=min(starts) or None,
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.conversation.id": session_id,
            PREFIX + "session_id": session_id,
            PREFIX + "records": len(records),
        },
    )
    parent = trace.set_span_in_context(root)
    failed = 0
    for record, (start, end) in zip(records, times, strict=True):
        record_id = str(record.get("recordId", ""))
        if record.get("kind", "call") != "call":
            root.add_event(
                PREFIX + str(record.get("kind")),
                {PREFIX + "record_id": record_id},
                timestamp=end or None,
            )
            continue
        ids.next_span = _derived(session_id, record_id, size=8)
        attributes = call_attributes(record)
        span = tracer.start_span(
            f"execute_tool {attributes['gen_ai.tool.name']}",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=start or None,
        )
        if "error.type" in attributes:
            failed += 1
            message = _part(record, "result").get("errorMessage")
            span.set_status(Status(StatusCode.ERROR, None if message is None else str(message)))
        span.end(end_time=end or None)
    root.set_attribute(PREFIX + "failed_calls", failed)
    root.end(end_time=max(ends) or None)
    provider.shutdown()
    return [collected.spans[-1], *collected.spans[:-1]]


class JsonLinesExporter(SpanExporter):
    """Appends each span as one JSON line (the SDK's ``to_json``) to a file: several processes
    may append to the same file. ``written`` (when given) keeps the text of every export."""

    def __init__(self, path: str | os.PathLike[str], written: list[str] | None = None) -> None:
        self.path = Path(path)
        self.written = written

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Append the spans; a write error is raised (the caller names the file)."""
        text = "".join(json.dumps(json.loads(span.to_json())) + "\n" for span in spans)
        if self.written is not None:  # kept first: the file is written whole at the end anyway
            self.written.append(text)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(text)
        return SpanExportResult.SUCCESS


class SpanFile:
    """What the run wrote to a ``--harness-audit-otel`` JSON Lines file, kept in memory: the
    file's text before the run and every span line exported since (by this process and, on the
    xdist controller, by its workers). :meth:`finish` writes exactly that back, so a change to
    the file while the run went on (an agent's call rewriting a denied span) does not last."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        #: The text of each export, in order (workers' exports added by the controller).
        self.written: list[str] = []
        self._before: bytes | None = None

    def start(self) -> None:
        """Keep the file's content before any test runs (none when there is no regular file to
        read: what is there is replaced at the end, or the run fails naming it)."""
        with contextlib.suppress(OSError):
            if self.path.is_file():
                self._before = self.path.read_bytes()

    def expected(self) -> bytes | None:
        """The file's content as the plugin made it (``None``: nothing to write)."""
        if self._before is None and not self.written:
            return None
        return (self._before or b"") + "".join(self.written).encode("utf-8")

    def finish(self) -> tuple[str | None, str | None]:
        """Write the file back as the plugin made it (atomically, in its folder).
        Returns ``(note, problem)``: the note when the file had been changed during the run,
        the problem (one line naming the file) when it could not be written."""
        expected = self.expected()
        if expected is None:
            if os.path.lexists(self.path):  # made during the run, and the run exported nothing
                return (
                    None,
                    f"the OpenTelemetry span file {self.path} is not the plugin's: "
                    "the run exported no span",
                )
            return None, None
        current = _regular_bytes(self.path)
        changed = current is None or sorted(current.splitlines()) != sorted(expected.splitlines())
        try:
            replace_file(self.path, expected, mode=0o644)
        except OSError as exc:
            error = exc.strerror or str(exc)
            return None, f"cannot write the OpenTelemetry span file {self.path}: {error}"
        if not changed:
            return None, None
        return (
            f"the OpenTelemetry span file {self.path} was changed during the run by something "
            "other than the plugin; it was written again with the spans the plugin exported"
        ), None


def _regular_bytes(path: Path) -> bytes | None:
    """The bytes of a regular file (``None`` for anything else: a link, a FIFO, nothing)."""
    try:
        if stat.S_ISREG(os.lstat(path).st_mode):
            return path.read_bytes()
    except OSError:
        pass
    return None


def otlp_endpoint() -> str:
    """Where OTLP/HTTP traces go: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, else
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``, else the collector's default."""
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if traces:
        return traces
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return base.rstrip("/") + "/v1/traces" if base else DEFAULT_OTLP_ENDPOINT


@dataclass
class OtelTarget:
    """Where ``--harness-audit-otel`` sends traces: ``otlp`` or a JSON Lines file."""

    target: str
    #: Kept by the file exporter: the text of every export (see :class:`SpanFile`).
    written: list[str] | None = None

    @property
    def where(self) -> str:
        """The endpoint or the file, for messages."""
        return otlp_endpoint() if self.target == "otlp" else self.target

    def exporter(self) -> SpanExporter:
        """A fresh exporter for the target."""
        if self.target == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            return OTLPSpanExporter(endpoint=otlp_endpoint())
        return JsonLinesExporter(self.target, self.written)


def export_spans(spans: Sequence[ReadableSpan], exporter: SpanExporter, where: str) -> str | None:
    """Export ``spans`` in one batch; a failure is one line (``None``: exported)."""
    try:
        result = exporter.export(spans)
    except Exception as exc:  # any exporter fault is reported, never raised into the test run
        return f"OpenTelemetry export to {where} failed: {type(exc).__name__}: {exc}"
    finally:
        with contextlib.suppress(Exception):  # shutting a failed exporter down is best effort
            exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        return f"OpenTelemetry export to {where} failed (unreachable or refused)"
    return None


def export_chain(
    chain_file: str | os.PathLike[str], session_id: str, target: OtelTarget
) -> str | None:
    """Read a session's chain and export its trace to ``target``; a failure is one line naming
    the target (the chain is only read, never changed)."""
    try:
        spans = session_spans(iter_file_records(chain_file), session_id)
        exporter = target.exporter()
    except Exception as exc:  # a chain or setting the exporter cannot use is one line
        return f"OpenTelemetry export of {session_id} failed: {type(exc).__name__}: {exc}"
    return export_spans(spans, exporter, target.where)


def export_sessions(
    chains: Iterable[tuple[Path, str]], target: str, *, written: list[str] | None = None
) -> str | None:
    """Export each ``(chain file, session id)``; stop at the first failure and return its line.
    ``written`` keeps the text a file target was given."""
    where = OtelTarget(target, written)
    for chain_file, session_id in chains:
        problem = export_chain(chain_file, session_id, where)
        if problem:
            return problem
    return None
