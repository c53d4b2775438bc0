"""A known secret nested deeper than the inspection reads still never leaves for an upstream.

The outgoing check reads a payload down to a fixed depth (64 levels); a secret wrapped in 70
lists, in a tool call's arguments or its forwarded ``_meta``, used to reach the upstream with the
call recorded ``success`` and the session PASS. A value nested that deep is now judged as the
flat list of its strings, so the secret in it is refused like any other (blocked, FAIL), while
an ordinary deep value is still relayed whole.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from proxy_support import launched

from pytest_harness_audit.doors.proxy.secret_check import holds_secret, readable
from pytest_harness_audit.session.harness import Harness

ECHO = Path(__file__).resolve().parent / "echo_meta_server.py"
SECRET = "sk-live-4f9a1c2e7b3d8a6f0e5c9b2a"


def _nested(value: Any, depth: int, *, as_object: bool = False) -> Any:
    for _ in range(depth):
        value = {"a": value} if as_object else [value]
    return value


class _Inspector:
    def outgoing(self, tool: str, category: str, params: Any) -> object | None:
        # reads no deeper than the real inspection does
        text = json.dumps(params) if _depth_ok(params) else ""
        return "leak" if SECRET in text else None


def _depth_ok(value: Any, depth: int = 0) -> bool:
    if isinstance(value, dict):
        return depth < 64 and all(_depth_ok(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return depth < 64 and all(_depth_ok(v, depth + 1) for v in value)
    return True


class _Gate:
    def __init__(self) -> None:
        self.inspectors = [_Inspector()]


@pytest.mark.parametrize("as_object", [False, True], ids=["lists", "objects"])
@pytest.mark.parametrize("depth", [70, 5_000])
def test_a_secret_nested_too_deep_is_still_found(depth: int, as_object: bool) -> None:
    params = {"book": "dune", "extra": _nested(f"see {SECRET}", depth, as_object=as_object)}
    assert holds_secret(_Gate(), "mcp__up__lookup", params)  # type: ignore[arg-type]


def test_shallow_payloads_are_judged_as_they_are() -> None:
    params = {"book": "dune", "filters": _nested({"year": 1965}, 20)}
    assert readable(params) is params
    assert not holds_secret(_Gate(), "mcp__up__lookup", params)  # type: ignore[arg-type]


def test_a_deep_value_is_judged_as_its_strings_in_order() -> None:
    deep = _nested({"k": ["v", 7, {"w": "x"}]}, 70, as_object=True)
    judged = readable({"path": "notes.txt", "deep": deep})
    assert judged["path"] == "notes.txt"
    assert judged["deep"] == ["a"] * 70 + ["k", "v", "7", "w", "x"]


# -- end to end: a real session, proxy and upstream -----------------------------------------


def _key(harness: Harness) -> str:
    env = (harness.root / ".env").read_text(encoding="utf-8")
    return next(line.split("=", 1)[1] for line in env.splitlines() if line.startswith("API_KEY="))


Call = tuple[dict[str, Any], dict[str, Any] | None]


async def _calls(proxy: Any, calls: list[Call]) -> list[Any]:
    out: list[Any] = []
    async with (
        httpx2.AsyncClient(headers=proxy.headers, timeout=60) as http,
        streamable_http_client(proxy.url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        for arguments, meta in calls:
            out.append(await session.call_tool("lookup", arguments, meta=meta))  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("place", ["arguments", "meta"])
def test_a_deep_secret_never_reaches_the_upstream_and_fails(tmp_path: Path, place: str) -> None:
    received = tmp_path / "received.jsonl"
    harness = Harness.create(tmp_path / "s", template="python-service", policy="safety")
    try:
        deep = _nested(f"see {_key(harness)}", 70)
        call: Call = (
            ({"book": "dune", "extra": deep}, None)
            if place == "arguments"
            else ({"book": "dune"}, {"trace": deep})
        )
        argv = launched([sys.executable, str(ECHO)])
        upstream = {"command": argv[0], "args": argv[1:], "env": {"RECEIVED": str(received)}}
        proxy = harness.start_proxy({"mcpServers": {"up": upstream}}, workspace_tools=False)
        (result,) = anyio.run(_calls, proxy, [call])
        assert result.is_error
        assert "known secret" in result.content[0].text
        assert not received.exists() or _key(harness) not in received.read_text()
        assert [(c.tool, c.status) for c in harness.calls()] == [("mcp__up__lookup", "blocked")]
        assert harness.verdict == "FAIL"
    finally:
        harness.close()


def test_an_ordinary_deep_value_is_relayed_whole(tmp_path: Path) -> None:
    received = tmp_path / "received.jsonl"
    harness = Harness.create(tmp_path / "s", template="python-service", policy="safety")
    try:
        deep = _nested("plain words", 70)
        argv = launched([sys.executable, str(ECHO)])
        upstream = {"command": argv[0], "args": argv[1:], "env": {"RECEIVED": str(received)}}
        proxy = harness.start_proxy({"mcpServers": {"up": upstream}}, workspace_tools=False)
        calls: list[Call] = [({"book": "dune"}, {"trace": deep})]
        (result,) = anyio.run(_calls, proxy, calls)
        assert not result.is_error
        (line,) = received.read_text(encoding="utf-8").splitlines()
        assert json.loads(line)["meta"]["trace"] == deep
        assert harness.verdict == "PASS"
    finally:
        harness.close()
