"""``--harness-audit-otel``: each harness session of a test is exported after the test, to a
JSON Lines file or OTLP; an unreachable endpoint is one warning line and the chains are kept; a
bad value or a missing extra stops the run at start-up with one line."""

from __future__ import annotations

import importlib.util
import json
import socket

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra")

pytest_plugins = ["pytester"]

RUN = ("-p", "no:cacheprovider", "-p", "no:randomly")
TWO_SESSIONS = """
import pytest

@pytest.mark.expect_verdict("FAIL")
def test_one(harness):
    harness.call("Glob", pattern="*")
    harness.call("Read", file_path=".env")

def test_two(harness):
    harness.call("Glob", pattern="*.md")
"""


def test_each_session_is_exported_to_the_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(TWO_SESSIONS)
    result = pytester.runpytest(*RUN, "--harness-audit-otel=spans.json")
    result.assert_outcomes(passed=2)
    spans = [json.loads(line) for line in (pytester.path / "spans.json").read_text().splitlines()]
    roots = [s for s in spans if s["name"] == "invoke_agent"]
    assert len(roots) == 2
    assert len({s["context"]["trace_id"] for s in spans}) == 2
    tools = [(s["name"], s["attributes"].get("harness_audit.decision")) for s in spans]
    assert ("execute_tool Read", "deny") in tools
    assert [name for name, _ in tools].count("execute_tool Glob") == 2


def test_an_unreachable_endpoint_is_one_line_and_the_chains_are_kept(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    pytester.makepyfile(TWO_SESSIONS)
    result = pytester.runpytest(
        *RUN, "--harness-audit", "--harness-audit-dir=kept", "--harness-audit-otel=otlp"
    )
    result.assert_outcomes(passed=2)
    text = result.stdout.str()
    assert text.count("OpenTelemetry export to") == 1
    result.stdout.fnmatch_lines(
        [
            f"*OpenTelemetry export to http://127.0.0.1:{port}/v1/traces failed (unreachable or "
            "refused); the chains are untouched, later sessions are not exported"
        ]
    )
    chains = list((pytester.path / "kept" / "audit").glob("test_*.jsonl"))
    assert len(chains) == 2
    assert all(chain.read_text().count('"kind":"call"') >= 1 for chain in chains)


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("spans.txt", "ERROR: --harness-audit-otel spans.txt: expected otlp or a file ending *"),
        ("jaeger", "ERROR: --harness-audit-otel jaeger: expected otlp or a file ending *"),
    ],
)
def test_a_bad_value_stops_the_run(pytester: pytest.Pytester, value: str, line: str) -> None:
    pytester.makepyfile(TWO_SESSIONS)
    result = pytester.runpytest(*RUN, f"--harness-audit-otel={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line])


def test_without_the_extra_one_line_names_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def no_otel(name: str, *args: object) -> object:
        return None if name.startswith("opentelemetry") else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", no_otel)
    pytester.makepyfile(TWO_SESSIONS)
    result = pytester.runpytest_inprocess(*RUN, "--harness-audit-otel=otlp")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --harness-audit-otel: opentelemetry.sdk is not installed; "
            "pip install 'pytest-harness-audit[otel]'"
        ]
    )
