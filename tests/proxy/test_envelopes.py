"""Requests whose JSON-RPC envelope is wrong: malformed ids, batches, reused ids.

MCP requires a string or integer request id (never null); JSON-RPC 2.0 answers an Invalid
Request with ``-32600`` and a null id. Such a request is answered, never forwarded or run, and
leaves no call record.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx2
import mcp_types as types
import pytest
from proxy_support import STUB_PROXY, TEST_SERVER, launched, test_upstream
from stub_gate import StubGate, read_records

from pytest_harness_audit.doors.proxy import BackgroundProxy
from pytest_harness_audit.doors.proxy.envelope import InFlightIds
from pytest_harness_audit.doors.proxy.stdio import parse_line

BAD_IDS = ["null", "1.5", "2.0", "1e400", "true", "{}", "[1]"]


def _call(request_id: str, text: str) -> str:
    params = json.dumps({"name": "echo", "arguments": {"text": text}})
    return f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", "params": {params}}}'


@pytest.mark.parametrize("request_id", BAD_IDS)
def test_a_request_with_a_malformed_id_is_an_invalid_request_with_a_null_id(
    request_id: str,
) -> None:
    parsed = parse_line(_call(request_id, "x").encode())
    assert isinstance(parsed, types.JSONRPCError)
    assert (parsed.id, parsed.error.code) == (None, types.INVALID_REQUEST)
    assert "id must be a string or an integer" in parsed.error.message


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'{"jsonrpc": "2.0", "id": -3, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": "", "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 123456789012345678901234567890, "method": "ping"}',
    ],
)
def test_notifications_and_well_formed_ids_still_pass(line: bytes) -> None:
    parsed = parse_line(line)
    assert parsed is not None and not isinstance(parsed, types.JSONRPCError)


def test_in_flight_ids_refuse_a_reuse_until_answered() -> None:
    ids = InFlightIds()
    assert ids.begin("a") is None and ids.begin(1) is None
    assert ids.begin("1") is None  # the string "1" is another id than the number 1
    refusal = ids.begin("a")
    assert refusal is not None and refusal.id == "a"
    assert refusal.error.code == types.INVALID_REQUEST
    ids.end("a")
    assert ids.begin("a") is None


@pytest.fixture
def stdio_proxy(tmp_path: Path) -> Iterator[tuple[IO[str], IO[str], Path]]:
    argv = [sys.executable, STUB_PROXY, "--storage", str(tmp_path), "proxy", "--"]
    argv += launched([sys.executable, TEST_SERVER])
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "STUB_GATE_DENY": ""},
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        _send(process.stdin, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})  # fmt: skip
        assert _receive(process.stdout, timeout=30)["id"] == 0
        _send(process.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield process.stdin, process.stdout, tmp_path
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=20)
        finally:
            if process.poll() is None:
                process.kill()


def _send(stdin: IO[str], message: dict[str, Any] | str) -> None:
    stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
    stdin.flush()


def _receive(stdout: IO[str], timeout: float = 10.0) -> dict[str, Any]:
    ready, _, _ = select.select([stdout], [], [], timeout)
    assert ready, f"no answer from the proxy within {timeout} s"
    line = stdout.readline()
    assert line, "the proxy closed its stdout"
    message: dict[str, Any] = json.loads(line)
    return message


def _echo(request_id: object, text: str) -> dict[str, Any]:
    params = {"name": "echo", "arguments": {"text": text}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.mark.slow
def test_a_tools_call_with_a_null_or_fractional_id_is_answered_and_never_run(
    stdio_proxy: tuple[IO[str], IO[str], Path],
) -> None:
    stdin, stdout, storage = stdio_proxy
    for request_id in ("null", "1.5"):
        _send(stdin, _call(request_id, f"never-{request_id}"))
        answer = _receive(stdout)
        assert answer["id"] is None
        assert answer["error"]["code"] == types.INVALID_REQUEST
    _send(stdin, _echo(2, "alive"))
    answer = _receive(stdout)
    assert answer["id"] == 2 and answer["result"]["content"][0]["text"] == "alive"
    assert [r["params"] for r in read_records(storage)] == [{"text": "alive"}]


@pytest.mark.slow
def test_an_id_reused_while_its_call_is_in_flight_is_refused_and_not_run(
    stdio_proxy: tuple[IO[str], IO[str], Path],
) -> None:
    stdin, stdout, storage = stdio_proxy
    slow = {"name": "sleep", "arguments": {"seconds": 1.5}}
    _send(stdin, {"jsonrpc": "2.0", "id": "dup", "method": "tools/call", "params": slow})
    _send(stdin, _echo("dup", "second"))
    refusal = _receive(stdout)
    assert refusal["id"] == "dup" and refusal["error"]["code"] == types.INVALID_REQUEST
    assert "already used" in refusal["error"]["message"]
    first = _receive(stdout)
    assert first["id"] == "dup" and first["result"]["content"][0]["text"] == "slept 1.5"
    # Answered: the id is free again (the refusal did not close the first call's id).
    _send(stdin, _echo("dup", "third"))
    assert _receive(stdout)["result"]["content"][0]["text"] == "third"
    assert [r["tool"].rsplit("__", 1)[1] for r in read_records(storage)] == ["sleep", "echo"]
    assert [r["params"] for r in read_records(storage)][1] == {"text": "third"}


@pytest.mark.slow
def test_a_cancelled_id_may_be_used_again(stdio_proxy: tuple[IO[str], IO[str], Path]) -> None:
    stdin, stdout, _ = stdio_proxy
    slow = {"name": "sleep", "arguments": {"seconds": 30}}
    _send(stdin, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": slow})
    _send(stdin, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 5, "reason": "user"}})  # fmt: skip
    _send(stdin, _echo(5, "again"))
    assert _receive(stdout)["result"]["content"][0]["text"] == "again"


def test_malformed_envelopes_over_http_are_invalid_requests_and_not_run(tmp_path: Path) -> None:
    gate = StubGate(tmp_path)
    with BackgroundProxy(gate, [test_upstream()], report=lambda line: None) as proxy:
        headers = proxy.endpoint.headers | {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}  # fmt: skip
        started = httpx2.post(proxy.url, json=hello, headers=headers)
        headers["mcp-session-id"] = started.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = "2025-11-25"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        httpx2.post(proxy.url, json=initialized, headers=headers)
        for version in ("2025-11-25", "2026-07-28"):
            headers["mcp-protocol-version"] = version
            for body, request_id in [
                (_call("null", "never"), None),
                (_call("1.5", "never"), None),
                ('[{"jsonrpc": "2.0", "id": 4, "method": "ping"}]', None),
                ('{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": [1]}', 6),
            ]:
                answer = httpx2.post(proxy.url, content=body.encode(), headers=headers)
                assert answer.status_code == 400, (version, body)
                error = answer.json()
                assert error["error"]["code"] == types.INVALID_REQUEST, (version, body)
                assert error["id"] == request_id
        headers["mcp-protocol-version"] = "2025-11-25"
        alive = httpx2.post(proxy.url, json=_echo(9, "alive"), headers=headers)
        assert alive.status_code == 200 and '"alive"' in alive.text
    assert [r["params"] for r in gate.records()] == [{"text": "alive"}]


@pytest.mark.slow
def test_an_id_reused_while_its_post_is_answered_is_refused_over_http(tmp_path: Path) -> None:
    gate = StubGate(tmp_path)
    with BackgroundProxy(gate, [test_upstream()], report=lambda line: None) as proxy:
        headers = proxy.endpoint.headers | {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}  # fmt: skip
        started = httpx2.post(proxy.url, json=hello, headers=headers)
        headers["mcp-session-id"] = started.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = "2025-11-25"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        httpx2.post(proxy.url, json=initialized, headers=headers)
        slow = {"jsonrpc": "2.0", "id": "dup", "method": "tools/call",
                "params": {"name": "sleep", "arguments": {"seconds": 1.5}}}  # fmt: skip
        answers: list[httpx2.Response] = []
        first = threading.Thread(
            target=lambda: answers.append(
                httpx2.post(proxy.url, json=slow, headers=headers, timeout=10)
            )
        )
        first.start()
        time.sleep(0.5)
        second = httpx2.post(proxy.url, json=_echo("dup", "second"), headers=headers)
        first.join(timeout=15)
        assert second.status_code == 400
        assert second.json()["id"] == "dup"
        assert second.json()["error"]["code"] == types.INVALID_REQUEST
        # the first POST still gets its own answer (the SDK would have sent it to the second)
        assert answers and answers[0].status_code == 200 and "slept 1.5" in answers[0].text
    assert [r["tool"] for r in gate.records()] == ["mcp__test__sleep"]
