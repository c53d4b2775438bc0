"""A message nested deeper than a JSON parser's recursion limit is a parse error, not a crash.

A stdio line of ``[[[[…]]]]`` deep enough to exhaust Python's recursion (a few thousand levels,
a few kilobytes) used to end the whole proxy with a traceback while it worked out which error to
answer with; every other client request then went unanswered. It is answered like any line that
does not parse (``-32700``, null id, one line), never forwarded, run or recorded, and the proxy
keeps serving. Over HTTP the same body gets a JSON-RPC error and the next request is served.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx2
import mcp_types as types
import pytest
from proxy_support import STUB_PROXY, TEST_SERVER, launched, test_upstream
from stub_gate import StubGate, read_records

from pytest_harness_audit.doors.proxy import BackgroundProxy
from pytest_harness_audit.doors.proxy.stdio import parse_line

DEPTHS = [300, 5_000, 200_000]


def _deep_call(request_id: int, depth: int) -> str:
    deep = "[" * depth + "]" * depth
    arguments = f'{{"text": "never", "deep": {deep}}}'
    params = f'{{"name": "echo", "arguments": {arguments}}}'
    return f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", "params": {params}}}'


def _echo(request_id: int, text: str) -> dict[str, Any]:
    params = {"name": "echo", "arguments": {"text": text}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_line_is_an_error_answer(depth: int) -> None:
    answer = parse_line(_deep_call(7, depth).encode())
    assert isinstance(answer, types.JSONRPCError)
    assert answer.error.code in (types.PARSE_ERROR, types.INVALID_REQUEST)
    assert answer.id in (7, None)
    assert "\n" not in answer.error.message and len(answer.error.message) < 200


def test_a_line_too_deep_for_the_parser_is_a_parse_error_with_a_null_id() -> None:
    answer = parse_line(_deep_call(7, 200_000).encode())
    assert isinstance(answer, types.JSONRPCError)
    assert (answer.id, answer.error.code) == (None, types.PARSE_ERROR)
    assert answer.error.message == "Parse error: nested too deeply"


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


def test_the_stdio_proxy_answers_deep_lines_and_keeps_serving(
    stdio_proxy: tuple[IO[str], IO[str], Path],
) -> None:
    stdin, stdout, storage = stdio_proxy
    for request_id, depth in enumerate(DEPTHS, start=1):
        _send(stdin, _deep_call(request_id, depth))
        answer = _receive(stdout)
        assert "error" in answer and answer["id"] in (request_id, None)
    _send(stdin, _echo(9, "alive"))
    answer = _receive(stdout)
    assert answer["id"] == 9 and answer["result"]["content"][0]["text"] == "alive"
    assert [r["params"] for r in read_records(storage)] == [{"text": "alive"}]


def test_the_http_proxy_answers_deep_bodies_and_keeps_serving(tmp_path: Path) -> None:
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
        for request_id, depth in enumerate(DEPTHS, start=2):
            body = _deep_call(request_id, depth).encode()
            answer = httpx2.post(proxy.url, content=body, headers=headers, timeout=30)
            assert answer.status_code in (200, 400), depth
            assert "error" in answer.text
        alive = httpx2.post(proxy.url, json=_echo(9, "alive"), headers=headers, timeout=30)
        assert alive.status_code == 200 and '"alive"' in alive.text
    assert [r["params"] for r in gate.records()] == [{"text": "alive"}]
