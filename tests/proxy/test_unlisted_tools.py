"""A tool the upstream does not list is not called through the proxy.

The proxy's tool list is what its upstreams list, and tool pinning watches those listings. An
upstream can still answer a call of a name it never listed (a hidden tool), or start listing a
tool after the client's last ``tools/list`` (its ``notifications/tools/list_changed`` ignored):
either way a tool the pins never saw would run and the session stay PASS. A call of a name the
proxy has not seen listed makes the proxy list the upstreams again first: a tool that now appears
is a ``tool_changed`` alert (``added``) before it runs; a name still not listed is answered
``Unknown tool`` (JSON-RPC ``-32602``, recorded ``error``) and never reaches the upstream.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from proxy_support import HERE, launched, memory_client

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.doors.proxy import RecordingProxy, StdioUpstream
from pytest_harness_audit.doors.proxy.pins import ALERT
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import judge

pytestmark = pytest.mark.anyio

HIDDEN_SERVER = str(HERE / "hidden_tool_server.py")


class Hidden:
    """The hidden-tool upstream behind a proxy with the real gate (``safety``)."""

    def __init__(self, tmp_path: Path) -> None:
        self.storage = tmp_path / "storage"
        self.control = tmp_path / "control.json"
        self.ran = tmp_path / "ran.txt"
        self.gate = Gate.open(
            storage_dir=self.storage, session_id="hidden", policy=Policy.preset("safety")
        )

    def upstreams(self, *names: str) -> list[StdioUpstream]:
        argv = launched([sys.executable, HIDDEN_SERVER, str(self.control), str(self.ran)])
        return [StdioUpstream(name=n, command=argv[0], args=tuple(argv[1:])) for n in names]

    def list_backdoor(self, shown: bool) -> None:
        self.control.write_text(json.dumps({"list_backdoor": shown}), encoding="utf-8")

    def records(self) -> list[CallRecord]:
        return [CallRecord(raw) for raw in iter_records(self.storage, "hidden")]

    def calls(self) -> list[tuple[str, str]]:
        return [(r.tool, r.status) for r in self.records() if r.kind == "call"]

    def verdict(self) -> str:
        return judge(self.records(), chain_valid=True)[0]

    def backdoor_ran(self) -> bool:
        return self.ran.exists()


@pytest.fixture
def hidden(tmp_path: Path) -> Hidden:
    return Hidden(tmp_path)


@pytest.mark.parametrize("listed_first", [True, False], ids=["after-a-listing", "no-listing"])
async def test_a_tool_the_upstream_never_lists_is_unknown_and_never_runs(
    hidden: Hidden, listed_first: bool
) -> None:
    proxy = RecordingProxy(hidden.gate, hidden.upstreams("dict"))
    async with proxy, memory_client(proxy) as client:
        if listed_first:
            assert "backdoor" not in {t.name for t in (await client.list_tools()).tools}
        with pytest.raises(MCPError) as raised:
            await client.call_tool("backdoor", {"path": "notes.txt"})
        assert (await client.call_tool("lookup", {"word": "dune"})).is_error is False
    assert raised.value.code == types.INVALID_PARAMS
    assert raised.value.error.message == "Unknown tool: backdoor"
    assert not hidden.backdoor_ran()
    assert hidden.calls() == [("mcp__dict__backdoor", "error"), ("mcp__dict__lookup", "success")]


async def test_a_hidden_tool_never_runs_when_the_upstream_cannot_list_again(
    hidden: Hidden,
) -> None:
    proxy = RecordingProxy(hidden.gate, hidden.upstreams("dict"))
    async with proxy, memory_client(proxy) as client:
        assert "backdoor" not in {t.name for t in (await client.list_tools()).tools}
        hidden.control.write_text(json.dumps({"fail_list": True}), encoding="utf-8")
        with pytest.raises(MCPError) as raised:
            await client.call_tool("backdoor", {"path": "notes.txt"})
    assert raised.value.error.message == (
        "upstream 'dict' unreachable: it could not list its tools, so backdoor was not called"
    )
    assert not hidden.backdoor_ran()
    assert hidden.calls() == [("mcp__dict__backdoor", "error")]


async def test_a_prefixed_hidden_tool_of_one_of_several_upstreams_never_runs(
    hidden: Hidden,
) -> None:
    proxy = RecordingProxy(hidden.gate, hidden.upstreams("one", "two"))
    async with proxy, memory_client(proxy) as client:
        await client.list_tools()
        with pytest.raises(MCPError) as raised:
            await client.call_tool("two__backdoor", {"path": "notes.txt"})
    assert raised.value.error.message == "Unknown tool: two__backdoor"
    assert not hidden.backdoor_ran()


async def test_a_tool_listed_after_the_clients_listing_is_an_alert_before_it_runs(
    hidden: Hidden,
) -> None:
    proxy = RecordingProxy(hidden.gate, hidden.upstreams("dict"), report=lambda _: None)
    async with proxy, memory_client(proxy) as client:
        await client.list_tools()  # the pins' baseline: lookup only
        hidden.list_backdoor(True)  # the upstream adds a tool; the client does not list
        result = await client.call_tool("backdoor", {"path": "notes.txt"})
    assert result.is_error is False
    assert hidden.backdoor_ran()
    assert [(r.kind, r.tool) for r in hidden.records()] == [
        ("alert", ALERT),
        ("call", "mcp__dict__backdoor"),
    ]
    changed = hidden.records()[0].raw["toolChanged"]
    assert (changed["tool"], changed["change"]) == ("backdoor", "added")
    assert hidden.verdict() == "WARN"


async def test_listed_tools_are_called_without_listing_again(hidden: Hidden) -> None:
    hidden.list_backdoor(True)
    proxy = RecordingProxy(hidden.gate, hidden.upstreams("dict"))
    async with proxy, memory_client(proxy) as client:
        await client.list_tools()
        hidden.list_backdoor(False)  # a listing now would be a removal alert
        assert (await client.call_tool("lookup", {"word": "dune"})).is_error is False
        assert (await client.call_tool("backdoor", {"path": "a"})).is_error is False
    assert hidden.calls() == [("mcp__dict__lookup", "success"), ("mcp__dict__backdoor", "success")]
    assert hidden.verdict() == "PASS"
