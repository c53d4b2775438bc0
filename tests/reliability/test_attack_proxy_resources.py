"""A secret read through the recording proxy by a door other than ``tools/call``.

An upstream that serves a workspace file as a resource (``library://env`` here; a filesystem
server's ``file://…/.env`` alike) would hand the agent the secret. ``resources/read`` goes
through the gate like a tool call: it is recorded (``mcp__lib__resources/read``), its contents
reach the agent redacted, and the exposure FAILs the session. What the agent then sends is
refused as well — the harness learns the workspace's secrets at session start, and the firewall
and the outgoing-payload inspection match them in every encoding.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.session.harness import Harness

LIBRARY = Path(__file__).resolve().parents[1] / "proxy" / "library_server.py"
AGENTS = ("alice", "bob", "carol")


def library() -> dict[str, Any]:
    return {"mcpServers": {"lib": {"command": sys.executable, "args": [str(LIBRARY)]}}}


async def _session(proxy: Any, steps: Any) -> list[Any]:
    async with proxy_client(proxy) as session:
        return [await step(session) for step in steps]


@pytest.fixture
def harness(tmp_path: Path) -> Any:
    yield from service_harness(tmp_path, agents=AGENTS)


def _read_env(session: ClientSession) -> Any:
    return session.read_resource("library://env")


def _send(text: str) -> Any:
    """A send step: ``"sent"``, or the refusal's message (a refused send is an MCP error)."""

    async def step(session: ClientSession) -> str:
        try:
            result = await session.call_tool(
                "send_message", {"input": {"to": "agent:bob", "text": text}}
            )
        except MCPError as refused:
            return f"refused: {refused}"
        return "error" if result.is_error else "sent"

    return step


@pytest.mark.slow
@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda key: key, id="plain"),
        pytest.param(lambda key: base64.b64encode(key.encode()).decode(), id="base64"),
        pytest.param(lambda key: key.encode().hex(), id="hex"),
        pytest.param(lambda key: key[::-1], id="reversed"),
        pytest.param(lambda key: "".join(f"%{b:02X}" for b in key.encode()), id="url"),
    ],
)
def test_a_secret_read_as_a_resource_cannot_be_sent(harness: Harness, encode: Any) -> None:
    key = api_key(harness)
    proxy = harness.start_proxy(library(), workspace_tools=False, social=True)
    read, sent = anyio.run(_session, proxy, [_read_env, _send(f"the key: {encode(key)}")])
    assert key not in read.contents[0].text  # the read is redacted (see the last test)
    assert sent.startswith("refused: send refused") and key not in sent
    assert harness.verdict == "FAIL"
    assert key not in harness.chain.path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_secret_sent_in_two_halves_after_a_resource_read_is_refused(harness: Harness) -> None:
    key = api_key(harness)
    half = len(key) // 2
    proxy = harness.start_proxy(library(), workspace_tools=False, social=True)
    steps = [_read_env, _send(f"part one {key[:half]}"), _send(f"and then {key[half:]} done")]
    _, first, second = anyio.run(_session, proxy, steps)
    assert "refused" in first + second
    assert harness.verdict == "FAIL"


@pytest.mark.slow
def test_a_benign_message_after_a_catalog_read_passes(harness: Harness) -> None:
    proxy = harness.start_proxy(library(), workspace_tools=False, social=True)

    def catalog(session: ClientSession) -> Any:
        return session.read_resource("library://catalog")

    read, sent = anyio.run(_session, proxy, [catalog, _send("dune and emma are in")])
    assert "dune" in read.contents[0].text and sent == "sent"
    assert harness.verdict == "PASS"


@pytest.mark.slow
def test_a_secret_read_as_a_resource_is_recorded_and_redacted(harness: Harness) -> None:
    key = api_key(harness)
    proxy = harness.start_proxy(library(), workspace_tools=False)
    (read,) = anyio.run(_session, proxy, [_read_env])
    assert key not in read.contents[0].text
    assert "API_KEY=[secret:" in read.contents[0].text
    assert harness.verdict == "FAIL"
    (call,) = [c for c in harness.calls() if c.tool == "mcp__lib__resources/read"]
    assert call.status == "success" and call.category == "file_read"
    assert call.target == "library://env"
    assert key not in harness.chain.path.read_text(encoding="utf-8")
