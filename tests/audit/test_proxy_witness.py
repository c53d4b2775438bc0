"""A recording proxy's records are checked against the head its thread keeps in memory.

The proxy serves from a thread of the test process with a chain object of its own; the head that
object wrote is one of the session's witnesses, so a rewrite of the chain between proxied calls
is a ``witness_mismatch`` at the end of the test, and an honest proxied session ends ``current``
(not merely ``extended`` past the test's own head).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from pytest_harness_audit.audit import verify_chain
from pytest_harness_audit.audit.anchor import encode_slot
from pytest_harness_audit.audit.witness import Head, Witnesses, head_at
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.proxy_session import RecordingProxySession


async def _call(proxy: RecordingProxySession, calls: list[tuple[str, dict[str, Any]]]) -> None:
    async with (
        httpx2.AsyncClient(headers=proxy.headers, timeout=60) as http,
        streamable_http_client(proxy.url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        for name, arguments in calls:
            await session.call_tool(name, arguments)


def call(proxy: RecordingProxySession, *commands: str) -> None:
    """Run ``Bash`` commands through the proxy, as an MCP client does."""
    anyio.run(_call, proxy, [("Bash", {"command": command}) for command in commands])


def forge(harness: Harness) -> None:
    """Recompute everything: every blocked call made a success, every link, the anchor and the
    session file's head copy recomputed (the forgery verify alone cannot see)."""
    path = harness.chain.path
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    for record in records:
        if record["result"]["status"] == "blocked":
            record["result"]["status"] = "success"
            record["rules"]["constraints"] = ["policy:allow", "rule:default"]
    lines, previous = [], "genesis"
    for index, record in enumerate(records):
        record["provenance"]["actionIndex"] = index
        record["provenance"]["prevRecordHash"] = previous
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
        lines.append(line)
        previous = hashlib.sha256(line).hexdigest()
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    size = path.stat().st_size
    slot = encode_slot(len(lines), size, previous, None)
    harness.chain.session_file.with_suffix(".anchor").write_bytes(slot + slot)
    data = json.loads(harness.chain.session_file.read_text())
    data["anchor"] = {"recordCount": len(lines), "head": previous, "bytes": size}
    harness.chain.session_file.write_text(json.dumps(data))


def proxied(tmp_path: Path) -> tuple[Harness, RecordingProxySession]:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    return harness, harness.start_proxy()


def test_an_honest_proxied_session_ends_current_with_the_proxy_witness(tmp_path: Path) -> None:
    harness, proxy = proxied(tmp_path)
    call(proxy, "echo hi", "ls app")
    report = harness.verify()
    assert report.valid and report.record_count == 2
    assert harness.chain.witness == Head(0, "genesis")  # the test's own chain wrote nothing
    assert report.witness_state == "current"  # the proxy's head, not only the test's own
    assert harness.witness == Head(2, report.head)
    assert harness.published_head() == Head(2, report.head)
    harness.close()
    after = harness.verify()
    assert after.valid and after.witness_state == "current"
    assert str(harness.verdict) == "PASS"


def test_a_rewrite_between_proxied_calls_is_a_witness_mismatch(tmp_path: Path) -> None:
    harness, proxy = proxied(tmp_path)
    call(proxy, "echo hi", "rm -rf app")
    assert str(harness.verdict) == "FAIL"
    before = harness.verify()
    forge(harness)
    assert verify_chain(harness.storage_dir, harness.session_id).valid  # verify alone: blind
    call(proxy, "echo after")  # the proxy appends on top of the forged chain
    report = harness.verify()
    assert not report.valid and report.reason == "witness_mismatch"
    assert report.witness_count == 2 and report.expected == before.head
    assert str(harness.verdict) == "FAIL"  # the forged success does not stand
    # what is published is the head the proxy wrote, never the forged one
    assert harness.published_head() == Head(2, before.head)
    harness.close()
    assert harness.verify().reason == "witness_mismatch"


def test_a_rewrite_the_test_process_then_writes_on_is_caught_by_the_older_witness(
    tmp_path: Path,
) -> None:
    """The test's chain, whose head was genesis, takes the forged chain in on its next append;
    the proxy's head, older now, still tells."""
    harness, proxy = proxied(tmp_path)
    call(proxy, "echo hi", "rm -rf app")
    before = harness.verify()
    forge(harness)
    harness.call("Bash", command="echo scripted")
    assert harness.chain.witness.count == 3  # continues the forged chain
    report = harness.verify()
    assert not report.valid and report.reason == "witness_mismatch"
    assert report.witness_count == 2 and report.expected == before.head
    assert harness.published_head() == Head(2, before.head)
    harness.close()


def test_an_honest_session_written_by_test_and_proxy_in_turn_stays_current(
    tmp_path: Path,
) -> None:
    harness, proxy = proxied(tmp_path)
    call(proxy, "echo one")
    harness.call("Bash", command="echo two")
    call(proxy, "echo three")
    report = harness.verify()
    assert report.valid and report.record_count == 3 and report.witness_state == "current"
    assert [head.count for head in harness.witnesses.heads()] == [3, 2]
    harness.close()


def test_head_at_reads_the_head_after_a_count(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"a\nb\nc\n")
    assert head_at(path, 0) == "genesis"
    assert head_at(path, 2) == hashlib.sha256(b"b").hexdigest()
    assert head_at(path, 3) == hashlib.sha256(b"c").hexdigest()
    assert head_at(path, 4) is None
    assert head_at(path, 3, size_limit=4) is None  # "a\nb\n": the third line is not in reach
    assert head_at(tmp_path / "missing.jsonl", 1) is None


class _Writer:
    def __init__(self, head: Head) -> None:
        self.witness = head


def test_witnesses_are_distinct_and_newest_first() -> None:
    old, new = _Writer(Head(1, "a" * 64)), _Writer(Head(4, "b" * 64))
    witnesses = Witnesses(old)
    assert witnesses.newest == Head(1, "a" * 64)
    witnesses.add(new)
    witnesses.add(new)
    witnesses.add(_Writer(Head(1, "a" * 64)))
    assert witnesses.heads() == [Head(4, "b" * 64), Head(1, "a" * 64)]
    assert Witnesses().newest is None


PROXIED_SUITE = """
import anyio, httpx2, pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from forge_chain import forge

async def _call(proxy, commands):
    async with (
        httpx2.AsyncClient(headers=proxy.headers, timeout=60) as http,
        streamable_http_client(proxy.url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        for command in commands:
            await session.call_tool("Bash", {"command": command})

@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
def test_honest(harness, recording_proxy):
    proxy = recording_proxy()
    anyio.run(_call, proxy, ["echo hi", "rm -rf app"])

@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
def test_rewritten(harness, recording_proxy):
    proxy = recording_proxy()
    anyio.run(_call, proxy, ["echo hi", "rm -rf app"])
    forge(harness)
    anyio.run(_call, proxy, ["echo after"])
"""


def test_the_plugin_fails_a_rewrite_between_proxied_calls_and_signs_the_proxy_head(
    pytester: Any, monkeypatch: Any, tmp_path_factory: Any
) -> None:
    """End of test: the rewrite is a witness_mismatch; the session-end checkpoint covers the
    proxy's records (``current``) and, for the rewritten session, the head before the rewrite."""
    import inspect

    import pytest

    pytest.importorskip("cryptography")
    from pytest_harness_audit.audit.checkpoint import verify_checkpointed
    from pytest_harness_audit.audit.storage import list_sessions
    from pytest_harness_audit.cli import main as cli

    key = tmp_path_factory.mktemp("keys") / "ci-key.pem"  # outside the inner run's tree
    assert cli(["audit", "keygen", "--out", str(key)]) == 0
    monkeypatch.setenv("HARNESS_AUDIT_SIGNING_KEY", str(key))
    imports = (
        "from __future__ import annotations\nimport hashlib, json\n"
        "from pytest_harness_audit.audit.anchor import encode_slot\n"
    )
    pytester.makepyfile(forge_chain=imports + inspect.getsource(forge), test_suite=PROXIED_SUITE)
    result = pytester.runpytest("--harness-audit")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_rewritten*audit chain invalid: witness_mismatch*"])
    store = pytester.path / ".harness-audit"
    states = {}
    for session in list_sessions(store):
        report = verify_checkpointed(store, session, Path(f"{key}.pub"))
        states[session.split("-")[0]] = (report.valid, report.checkpoint_state)
    assert states == {"test_honest": (True, "current"), "test_rewritten": (False, "mismatch")}
