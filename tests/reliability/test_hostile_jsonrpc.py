"""Hostile JSON-RPC: random frames to ``harness-audit proxy --workspace DIR`` over stdio.

One proxy process serves the whole module. After each fuzzed line a ``ping`` probe is sent:
every line the proxy writes back must be a JSON-RPC 2.0 message, an unparseable or invalid
frame must get its ``-32700`` / ``-32600`` error before the probe's answer, the probe must be
answered within the time limit, and the proxy must never print a traceback. At the end the
proxy exits cleanly when its input closes and its session's chain verifies.

The proxy runs the ``strict`` preset (only Read, Glob and Grep are allowed), so a fuzzed
``tools/call`` never writes files or runs commands; its immune ladder is off, so the calls at the
end are judged by the rules alone.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hostile_inputs import json_values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_harness_audit.audit import iter_records, verify_chain

SESSION = "fuzzed-frames"
ANSWER_TIMEOUT = 15.0
FAST = 150  # the default run; the slow variant tries SLOW
SLOW = 2000
PARSE_ERROR, INVALID_REQUEST = -32700, -32600
METHODS = [
    "ping",
    "tools/list",
    "tools/call",
    "initialize",
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "logging/setLevel",
    "completion/complete",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "nope/nothing",
]
TOOLS = ["Read", "Glob", "Grep", "Write", "Edit", "Bash", "TodoWrite", "unknown", ""]
ARGUMENT_KEYS = ["file_path", "pattern", "path", "command", "content", "offset", "limit", "glob"]

any_text = st.text(alphabet=st.characters(blacklist_categories=()), max_size=30)
"""Text with every kind of code point, lone surrogates included (JSON can escape them)."""
ids = st.one_of(
    st.integers(-(2**63), 2**63), st.text(max_size=12), st.none(), st.floats(), st.booleans()
)
tool_calls = st.fixed_dictionaries(
    {
        "name": st.sampled_from(TOOLS) | any_text,
        "arguments": st.dictionaries(
            st.sampled_from(ARGUMENT_KEYS) | any_text,
            any_text | json_values,
            max_size=4,
        )
        | json_values,
    },
    optional={"_meta": json_values},
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", ""]) | json_values,
        "id": ids,
        "method": st.sampled_from(METHODS) | st.text(max_size=12),
        "params": tool_calls | json_values,
        "result": json_values,
        "error": json_values,
    },
)
requests = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.integers(0, 10**6) | st.text(min_size=1, max_size=8),
        "method": st.sampled_from(METHODS),
    },
    optional={"params": tool_calls | st.dictionaries(st.text(max_size=8), json_values)},
)
notifications = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": st.sampled_from(METHODS)},
    optional={"params": st.dictionaries(st.text(max_size=8), json_values, max_size=3)},
)
frames = st.one_of(
    requests.map(json.dumps),
    requests.map(json.dumps),
    requests.map(json.dumps),
    notifications.map(json.dumps),
    messages.map(json.dumps),
    st.lists(messages, max_size=3).map(json.dumps),
    json_values.map(json.dumps),
    st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=80),
    st.binary(max_size=60).filter(lambda b: b"\n" not in b and b"\r" not in b),
)
"""One wire line: requests and notifications with random parameters, JSON-RPC-shaped objects,
batches, any JSON, any text, any bytes."""


@dataclass
class ProxyProcess:
    """The proxy under test, its answers queued by a reader thread."""

    process: subprocess.Popen[bytes]
    storage: Path
    answers: queue.Queue[bytes] = field(default_factory=queue.Queue)
    probes: Iterator[int] = field(default_factory=itertools.count)
    stderr: list[bytes] = field(default_factory=list)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Send a request; return every message up to and including its answer."""
        probe_id = f"probe-{next(self.probes)}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": probe_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode())
        seen = []
        while True:
            try:
                raw = self.answers.get(timeout=ANSWER_TIMEOUT)
            except queue.Empty:
                raise AssertionError(
                    f"no answer to {method} within {ANSWER_TIMEOUT} s; stderr: {self.stderr[-5:]}"
                ) from None
            answer = json.loads(raw)
            _assert_json_rpc(answer, raw)
            seen.append(answer)
            if answer.get("id") == probe_id:
                assert "result" in answer, answer
                return seen


def _assert_json_rpc(answer: Any, raw: bytes) -> None:
    assert isinstance(answer, dict) and answer.get("jsonrpc") == "2.0", raw
    if "method" in answer:
        return  # a notification or request from the server
    assert "id" in answer, raw
    assert ("result" in answer) != ("error" in answer), raw
    if "error" in answer:
        error = answer["error"]
        assert isinstance(error["code"], int) and isinstance(error["message"], str), raw


def _pump(stream: Any, sink: Any) -> None:
    for line in iter(stream.readline, b""):
        sink(line)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    base = tmp_path_factory.mktemp("jsonrpc")
    workspace = base / "workspace"
    workspace.mkdir()
    (workspace / "README.md").write_text("hello\n", encoding="utf-8")
    (workspace / ".env").write_text("API_KEY=not-a-real-key\n", encoding="utf-8")
    storage = base / "storage"
    argv = [sys.executable, "-m", "pytest_harness_audit", "--storage", str(storage), "proxy"]
    policy = base / "policy.json"
    policy.write_text(json.dumps({"preset": "strict", "immune": {"enabled": False}}))
    argv += ["--workspace", str(workspace), "--session", SESSION, "--policy", str(policy)]
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    running = ProxyProcess(process, storage)
    readers = [
        threading.Thread(target=_pump, args=(process.stdout, running.answers.put), daemon=True),
        threading.Thread(target=_pump, args=(process.stderr, running.stderr.append), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        running.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "fuzzer", "version": "1"},
            },
        )
        running.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield running
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        for reader in readers:
            reader.join(timeout=5)


def _expected_error(line: bytes) -> tuple[int, Any] | None:
    """The error the proxy's reader must answer ``line`` with at once, if any: (code, id)."""
    if not line.strip():
        return None
    try:
        # as the proxy reads it: UTF-8 (json.loads would guess UTF-16 for b"\x000")
        document = json.loads(line.decode("utf-8"))
    except ValueError:
        return PARSE_ERROR, None
    if isinstance(document, list):
        return INVALID_REQUEST, None
    if not isinstance(document, dict) or document.get("jsonrpc") != "2.0":
        request_id = document.get("id") if isinstance(document, dict) else None
        valid_id = isinstance(request_id, (int, str)) and not isinstance(request_id, bool)
        return INVALID_REQUEST, request_id if valid_id else None
    return None


def _check_frame(proxy: ProxyProcess, frame: str | bytes, counts: Any) -> None:
    line = frame if isinstance(frame, bytes) else frame.encode("utf-8", "surrogatepass")
    proxy.send(line)
    seen = proxy.request("ping")
    expected = _expected_error(line)
    if expected is not None:
        code, request_id = expected
        errors = [m for m in seen if "error" in m and m["error"]["code"] in (code, INVALID_REQUEST)]
        assert errors, (line, seen)
        if request_id is not None and code == INVALID_REQUEST:
            assert any(m["id"] == request_id for m in errors), (line, errors)
        counts.add("hostile JSON-RPC", "answered with an error at once")
    assert not any(b"Traceback" in chunk for chunk in proxy.stderr), b"".join(proxy.stderr)
    counts.add("hostile JSON-RPC", "frames")


def _frames_property(examples: int) -> Any:
    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(frame=frames)
    def check(proxy: ProxyProcess, counts: Any, frame: str | bytes) -> None:
        _check_frame(proxy, frame, counts)

    return check


@pytest.mark.slow
def test_fuzzed_frames_get_json_rpc_answers(proxy: ProxyProcess, reliability_counts: Any) -> None:
    _frames_property(FAST)(proxy, reliability_counts)


@pytest.mark.slow
def test_fuzzed_frames_many(proxy: ProxyProcess, reliability_counts: Any) -> None:
    _frames_property(SLOW)(proxy, reliability_counts)


def test_proxy_still_serves_and_its_chain_verifies(proxy: ProxyProcess) -> None:
    """Runs after the fuzzing (file order): tools still work, every call was recorded."""
    seen = proxy.request("tools/call", {"name": "Read", "arguments": {"file_path": "README.md"}})
    assert "hello" in json.dumps(seen[-1]["result"])
    denied = proxy.request("tools/call", {"name": "Read", "arguments": {"file_path": ".env"}})
    assert "not-a-real-key" not in json.dumps(denied[-1]["result"])
    report = verify_chain(proxy.storage, SESSION)
    assert report.valid, report.errors
    calls = [r for r in iter_records(proxy.storage, SESSION) if r["kind"] == "call"]
    assert [(r["tool"], r["result"]["status"]) for r in calls[-2:]] == [
        ("Read", "success"),
        ("Read", "blocked"),
    ]
