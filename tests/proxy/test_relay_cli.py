"""`harness-audit relay URL`: bad input is one line, an unreachable proxy answers every waiting
request with an error and exits 1, never a traceback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

RELAY = [sys.executable, "-m", "pytest_harness_audit", "relay"]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _run(
    args: list[str], stdin: bytes, token: str | None = "t0ken"
) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_AUDIT_RELAY_TOKEN"}
    if token is not None:
        env["HARNESS_AUDIT_RELAY_TOKEN"] = token
    return subprocess.run(
        [*RELAY, *args], input=stdin, capture_output=True, env=env, timeout=60, check=False
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "token", "said"),
    [
        (["ftp://example.org/mcp"], "t0ken", "URL must be an http(s) address"),
        (["http://127.0.0.1:1/mcp"], None, "HARNESS_AUDIT_RELAY_TOKEN must hold the token"),
        ([], "t0ken", "the following arguments are required: URL"),
    ],
)
def test_bad_input_is_one_line(args: list[str], token: str | None, said: str) -> None:
    done = _run(args, b"", token)
    assert done.returncode == 2
    err = done.stderr.decode()
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.slow
def test_an_unreachable_proxy_answers_each_waiting_request_and_exits_1() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    lines = json.dumps(INITIALIZE).encode() + b"\nnot json\n"
    done = _run([url], lines)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert {a["id"] for a in answers} == {None, 1}
    assert next(a for a in answers if a["id"] is None)["error"]["code"] == -32700
    refused = next(a for a in answers if a["id"] == 1)["error"]
    assert refused["code"] == -32603 and "is unreachable" in refused["message"]
    err = done.stderr.decode()
    assert done.returncode == 1 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("harness-audit relay: the recording proxy")
