"""Tampering with a session while its test process holds it, and after its run is published.

The cases of ``session_tampers`` act on a finished chain whose writer's witness the checker is
handed. These play a whole harness session — calls through a recording proxy (a thread of the
test process with a chain object of its own) or through a writer outside the test process (a
``harness-audit proxy`` an MCP client started, a hook) — and check each level as the plugin
does:

* ``verify``     — ``harness-audit audit verify SESSION`` alone;
* ``witness``    — the end-of-test verification, against every head the test process's writers
                   kept in memory (``Harness.verify()``);
* ``head``       — the head published in the session's report file (``head: {records, hash}``),
                   given to ``audit verify SESSION --head COUNT:HEX``;
* ``checkpoint`` — the session-end checkpoint, signed over that published head.

Each play runs honestly and tampered; only the tampered run may be detected, and exactly from
the case's level on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from session_tampers import OWN, bash

from pytest_harness_audit.audit import AuditChain
from pytest_harness_audit.audit.anchor import encode_slot
from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.readers.report import write_report
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.proxy_session import RecordingProxySession

SESSION = "s"


@dataclass(frozen=True)
class Played:
    """A session played to its end and published (report file, signed checkpoint)."""

    harness: Harness
    storage: Path


async def _call(proxy: RecordingProxySession, commands: tuple[str, ...]) -> None:
    async with (
        httpx2.AsyncClient(headers=proxy.headers, timeout=60) as http,
        streamable_http_client(proxy.url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        for command in commands:
            await session.call_tool("Bash", {"command": command})


def through_proxy(proxy: RecordingProxySession, *commands: str) -> None:
    """Run ``Bash`` commands through the proxy over HTTP, as an agent's MCP client does."""
    anyio.run(_call, proxy, commands)


def recompute_from(storage: Path, first: int = 0) -> None:
    """Make every blocked call from record ``first`` on a success; recompute every link, the
    anchor and the session file's head copy (the forgery verify alone cannot see)."""
    paths = StorageLayout.at(storage).paths(SESSION)
    records = [json.loads(line) for line in paths.chain.read_bytes().splitlines()]
    for record in records[first:]:
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
    paths.chain.write_bytes(b"".join(line + b"\n" for line in lines))
    size = paths.chain.stat().st_size
    slot = encode_slot(len(lines), size, previous, None)
    paths.anchor.write_bytes(slot + slot)
    data = json.loads(paths.session_file.read_text())
    data["anchor"] = {"recordCount": len(lines), "head": previous, "bytes": size}
    paths.session_file.write_text(json.dumps(data))


def _session(base: Path) -> Harness:
    return Harness.create(
        base, template="python-service", storage_dir=base / "store", session_id=SESSION
    )


def _publish(harness: Harness, private_key: Path) -> Played:
    """What the plugin does at the end of the test: the report file (with the published head)
    and the session-end checkpoint over the same head."""
    from pytest_harness_audit.audit.checkpoint import sign_session_end

    harness.close()
    write_report(harness.storage_dir, SESSION, harness.report())
    sign_session_end(harness.storage_dir, SESSION, private_key, witness=harness.published_head())
    return Played(harness, harness.storage_dir)


def rewrite_between_proxied_calls(base: Path, private_key: Path, tamper: bool) -> Played:
    """A blocked `rm -rf app` through the recording proxy is rewritten into a success, every
    link and the anchor recomputed, between two proxied calls; the proxy appends on top."""
    harness = _session(base)
    proxy = harness.start_proxy()
    through_proxy(proxy, "echo 0", "echo 1", "rm -rf app")
    if tamper:
        recompute_from(harness.storage_dir)
    through_proxy(proxy, "echo 3")
    return _publish(harness, private_key)


def rewrite_outside_writer_after_the_run(base: Path, private_key: Path, tamper: bool) -> Played:
    """Records a writer outside the test process appended (a stdio proxy, a hook), rewritten
    after the run with every link and the anchor recomputed: past every in-memory witness, so
    only the published head (and the checkpoint over it) tells."""
    harness = _session(base)
    harness.call("Bash", command="echo 0")
    harness.call("Bash", command="echo 1")
    with AuditChain(harness.storage_dir, SESSION) as outside:
        outside.append(bash("rm -rf /", "blocked"))
        outside.append(bash("echo 3"))
    played = _publish(harness, private_key)
    if tamper:
        recompute_from(played.storage, first=2)
    return played


@dataclass(frozen=True)
class LiveCase:
    """One tamper class played on a live session, with the weakest level that detects it."""

    name: str
    play: Callable[[Path, Path, bool], Played]
    level: str
    origin: str


LIVE_CASES = [
    LiveCase("proxied-rewrite-between-calls", rewrite_between_proxied_calls, "witness", OWN),
    LiveCase(
        "outside-writer-rewritten-after-run", rewrite_outside_writer_after_the_run, "head", OWN
    ),
]
"""Every live tamper class."""


def describe(played: Played) -> dict[str, Any]:
    """The chain as each level sees it (for failure messages)."""
    report = played.harness.verify()
    return {"valid": report.valid, "reason": report.reason, "witness": report.witness_state}
