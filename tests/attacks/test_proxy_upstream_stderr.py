"""An upstream server's stderr quoting the workspace's ``.env`` key.

A stdio upstream inherited the proxy's stderr, so a server logging its settings wrote the key
into the proxy's log (and the test run's captured output, kept with a failing test or in JUnit
XML). Its stderr now passes through the proxy line by line: each line is written on with the
known secrets redacted, and a line that held one is recorded as an unjudged note
(``mcp__<server>__stderr``, the redacted line as its output). Lines keep streaming: ordinary
lines are written as they come, and a line the process leaves unfinished is written when it
stops. The benign twin: a
server writing no secret has its stderr relayed unchanged and the session stays PASS.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.session.harness import Harness

NOISY = str(Path(__file__).resolve().parent / "noisy_upstream.py")
UPSTREAM = {"mcpServers": {"noisy": {"command": sys.executable, "args": [NOISY]}}}


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _run(harness: Harness, texts: list[str]) -> None:
    """A proxy on the noisy upstream: the client calls ``log`` with each of ``texts``, then
    the proxy stops (the upstream with it)."""
    proxy = harness.start_proxy(UPSTREAM, workspace_tools=False)

    async def session() -> None:
        async with proxy_client(proxy) as client:
            for text in texts:
                await client.call_tool("log", {"text": text})

    try:
        anyio.run(session)
    finally:
        proxy.stop()


def test_a_key_on_an_upstream_s_stderr_is_redacted_and_noted(
    harness: Harness, capfd: pytest.CaptureFixture[str]
) -> None:
    key = api_key(harness)
    _run(harness, ["request handled\n", "retrying with token {key}\n", "bye {key}"])
    err = capfd.readouterr().err
    assert key not in err and key[-16:] not in err
    assert "starting\n" in err and "request handled\n" in err  # ordinary lines as they were
    assert "config: API_KEY=[secret:" in err
    assert "retrying with token [secret:" in err
    assert "bye [secret:" in err  # the unfinished last line, written when the process stopped
    notes = [r for r in harness.records if r.tool == "mcp__noisy__stderr"]
    assert [r.kind for r in notes] == ["note"] * 3
    assert all(r.raw["result"].get("outputHash") for r in notes)
    assert key not in json.dumps([r.raw for r in harness.records])
    assert not [c for c in harness.calls() if c.tool == "mcp__noisy__stderr"]
    # nothing the agent read held the key: a server logging its settings is no act of the
    # agent's, and no model reads an upstream's stderr
    assert harness.verdict == "PASS"


@pytest.mark.slow
def test_benign_twin_stderr_without_a_secret_is_relayed_unchanged(
    harness: Harness, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOISY_BENIGN", "1")
    key = api_key(harness)
    _run(harness, ["request handled\n", f"key ends in {key[-4:]}\n", "no newline at the end"])
    err = capfd.readouterr().err
    assert "starting\nconfig: settings loaded (3 entries)\n" in err
    assert f"request handled\nkey ends in {key[-4:]}\nno newline at the end" in err
    assert "[secret:" not in err
    assert not [c for c in harness.calls() if c.tool == "mcp__noisy__stderr"]
    assert harness.verdict == "PASS"
