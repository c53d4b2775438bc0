"""A call whose JSON holds an escaped lone surrogate (``"\\ud800"``) is gated and recorded.

Such a string is valid JSON but not well-formed Unicode, and the SDK's parser refuses it: the
proxy answered ``-32600`` and no record was left, so whatever the call meant went unjudged. A
``tools/call``, ``resources/read`` or ``prompts/get`` is now served like any other: a workspace
tool fails on the text it cannot use, an upstream is never sent it (its connection would be
lost for every later call: ``-32602``), and every one of them is one record in the chain.
Other requests with such text are answered with their error as before. Over HTTP, where the
SDK's transport cannot parse such a call, it is refused with ``-32602`` and recorded.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx2
import mcp_types as types
import pytest
from proxy_support import TEST_SERVER, test_upstream
from stub_gate import StubGate

from pytest_harness_audit.audit import iter_records, verify_chain
from pytest_harness_audit.doors.proxy import BackgroundProxy
from pytest_harness_audit.doors.proxy.envelope import ill_formed_text, wire_line
from pytest_harness_audit.doors.proxy.stdio import parse_line

SESSION = "ill-formed-text"
LONE = "\\ud800"  # as it is written on the wire: a JSON escape


def _line(request_id: int, method: str, params: str) -> str:
    return f'{{"jsonrpc":"2.0","id":{request_id},"method":"{method}","params":{params}}}'


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", f'{{"name":"Read","arguments":{{"file_path":"a{LONE}.md"}}}}'),
        ("tools/call", f'{{"name":"Re{LONE}ad","arguments":{{}}}}'),
        ("resources/read", f'{{"uri":"file:///x{LONE}"}}'),
        ("prompts/get", f'{{"name":"review","arguments":{{"topic":"{LONE}"}}}}'),
    ],
)
def test_a_call_with_a_lone_surrogate_parses(method: str, params: str) -> None:
    parsed = parse_line(_line(1, method, params).encode())
    assert parsed is not None and not isinstance(parsed, types.JSONRPCError)
    assert isinstance(parsed.message, types.JSONRPCRequest) and parsed.message.method == method


@pytest.mark.parametrize(
    "line",
    [
        _line(2, "completion/complete", f'{{"argument":{{"name":"a","value":"{LONE}"}}}}'),
        _line(3, "tools/list", f'{{"cursor":"{LONE}"}}'),
        f'{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"x","a":"{LONE}"',
    ],
)
def test_other_requests_with_one_are_still_answered_at_once(line: str) -> None:
    assert isinstance(parse_line(line.encode()), types.JSONRPCError)


def test_an_answer_echoing_one_is_written_as_its_escape() -> None:
    error = types.JSONRPCError(
        jsonrpc="2.0", id=1, error=types.ErrorData(code=-32602, message="Unknown tool: a\ud800")
    )
    line = wire_line(error)
    assert line.endswith(b"\n") and json.loads(line)["error"]["message"] == "Unknown tool: a\ud800"


def test_where_the_ill_formed_text_is_named() -> None:
    assert ill_formed_text({"a": ["ok", {"b": "x\udc00"}]}, "arguments") == "arguments.a[1].b"
    assert ill_formed_text({"k\ud800": 1}, "params") == "params (a key)"
    assert ill_formed_text({"a": ["ok", "\U0001f600"]}, "arguments") is None


class _Proxy:
    def __init__(self, process: subprocess.Popen[bytes], storage: Path) -> None:
        self.process = process
        self.storage = storage
        self.ids = iter(range(100, 10_000))

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 20.0) -> dict[str, Any]:
        stdout: IO[bytes] | None = self.process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], timeout)
        assert ready, "no answer from the proxy"
        answer: dict[str, Any] = json.loads(stdout.readline())
        return answer

    def ask(self, method: str, params: str) -> dict[str, Any]:
        request_id = next(self.ids)
        self.send(_line(request_id, method, params))
        answer = self.receive()
        assert answer["id"] == request_id
        return answer

    def records(self) -> list[dict[str, Any]]:
        return [r for r in iter_records(self.storage, SESSION) if r["kind"] == "call"]


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Proxy]:
    base = tmp_path_factory.mktemp("ill-formed")
    workspace = base / "workspace"
    workspace.mkdir()
    (workspace / "README.md").write_text("hello\n", encoding="utf-8")
    storage = base / "storage"
    argv = [sys.executable, "-m", "pytest_harness_audit", "--storage", str(storage), "proxy"]
    argv += ["--workspace", str(workspace), "--session", SESSION, "--preset", "permissive"]
    argv += ["--", sys.executable, TEST_SERVER]
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    running = _Proxy(process, storage)
    try:
        client = '"clientInfo":{"name":"t","version":"0"}'
        hello = f'{{"protocolVersion":"2025-11-25","capabilities":{{}},{client}}}'
        assert "result" in running.ask("initialize", hello)
        running.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        assert "result" in running.ask("tools/list", "{}")
        yield running
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()


CALLS = {
    "workspace-tool": ("tools/call", f'{{"name":"Read","arguments":{{"file_path":"R{LONE}.md"}}}}'),
    "tool-name": ("tools/call", f'{{"name":"Re{LONE}ad","arguments":{{"file_path":"README.md"}}}}'),
    "argument-key": ("tools/call", f'{{"name":"Read","arguments":{{"f{LONE}":"README.md"}}}}'),
    "upstream-tool": ("tools/call", f'{{"name":"echo","arguments":{{"text":"hi {LONE}"}}}}'),
    "upstream-meta": (
        "tools/call",
        f'{{"name":"echo","arguments":{{"text":"hi"}},"_meta":{{"note":"{LONE}"}}}}',
    ),
    "resource": ("resources/read", f'{{"uri":"memo://greeting{LONE}"}}'),
    "prompt": ("prompts/get", f'{{"name":"review","arguments":{{"topic":"{LONE}"}}}}'),
}


@pytest.mark.parametrize("case", list(CALLS))
def test_the_call_is_recorded_and_the_upstream_still_serves(proxy: _Proxy, case: str) -> None:
    before = len(proxy.records())
    method, params = CALLS[case]
    answer = proxy.ask(method, params)
    assert "error" in answer or answer["result"].get("isError"), answer
    records = proxy.records()
    assert len(records) == before + 1, f"{case}: no record"
    assert records[-1]["result"]["status"] == "error"
    # the upstream's connection is intact: a well-formed call after it is served
    echoed = proxy.ask("tools/call", '{"name":"echo","arguments":{"text":"still here"}}')
    assert echoed["result"]["content"][0]["text"] == "still here"
    assert verify_chain(proxy.storage, SESSION).valid


HTTP_CALLS = {
    "upstream-tool": (
        "tools/call",
        f'{{"name":"echo","arguments":{{"text":"hi {LONE}"}}}}',
        "mcp__test__echo",
    ),
    "unknown-tool": ("tools/call", f'{{"name":"ec{LONE}ho","arguments":{{}}}}', None),
    "resource": ("resources/read", f'{{"uri":"memo://greeting{LONE}"}}', "resources/read"),
    "prompt": (
        "prompts/get",
        f'{{"name":"review","arguments":{{"topic":"{LONE}"}}}}',
        "prompts/get",
    ),
}


def test_over_http_such_a_call_is_refused_and_recorded(tmp_path: Path) -> None:
    # the SDK's HTTP transport cannot parse it: the proxy answers -32602 and records the call
    gate = StubGate(tmp_path)
    with BackgroundProxy(gate, [test_upstream()], report=lambda line: None) as proxy:
        headers = proxy.endpoint.headers | {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        client = '"clientInfo":{"name":"t","version":"0"}'
        hello = _line(
            1, "initialize", f'{{"protocolVersion":"2025-11-25","capabilities":{{}},{client}}}'
        )
        started = httpx2.post(proxy.url, content=hello.encode(), headers=headers)
        headers["mcp-session-id"] = started.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = "2025-11-25"
        initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        httpx2.post(proxy.url, content=initialized, headers=headers)
        for number, (method, params, _tool) in enumerate(HTTP_CALLS.values(), start=10):
            answer = httpx2.post(
                proxy.url, content=_line(number, method, params).encode(), headers=headers
            )
            error = answer.json()
            assert (error["id"], error["error"]["code"]) == (number, types.INVALID_PARAMS), error
            assert "not well-formed Unicode" in error["error"]["message"]
        alive = _line(20, "tools/call", '{"name":"echo","arguments":{"text":"alive"}}')
        served = httpx2.post(proxy.url, content=alive.encode(), headers=headers)
        assert served.status_code == 200 and '"alive"' in served.text
    records = gate.records()
    assert len(records) == len(HTTP_CALLS) + 1
    for record, (_method, _params, tool) in zip(records, HTTP_CALLS.values(), strict=False):
        assert record["status"] == "error"
        if tool is not None:
            assert record["tool"].endswith(tool)
