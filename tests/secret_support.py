"""Helpers shared by the tests that look for a workspace secret where it must not be: the
``python-service`` workspace (its ``.env`` holds an ``API_KEY``) under the ``safety`` preset, the
key itself, and tool calls through the session's proxy with an official MCP client."""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import FirewallSendError

KEY_LINE = re.compile(r"^API_KEY=(.+)$", re.MULTILINE)
#: A command (end of a pipe) printing its input XORed with a three-byte key, as hex: an encoding
#: no matcher reverses, so only what the command's text shows can catch the leak.
XOR = (
    'python3 -c "import sys; d = sys.stdin.buffer.read(); '
    "print(bytes(b ^ b'k3y'[i % 3] for i, b in enumerate(d)).hex())\""
)


def xor_decoded(output: object) -> str:
    """What :data:`XOR` printed, decoded (empty when ``output`` is no hex)."""
    try:
        data = bytes.fromhex(str(output).strip())
    except ValueError:
        return ""
    return bytes(b ^ b"k3y"[i % 3] for i, b in enumerate(data)).decode(errors="replace")


@functools.cache
def safety_policy() -> Policy:
    """The ``safety`` preset, loaded once."""
    return Policy.preset("safety")


def decide(command: str) -> str:
    """The ``safety`` preset's decision on the ``Bash`` call ``command`` (no workspace)."""
    return safety_policy().evaluate("Bash", {"command": command}).decision


def assert_leak_refused(harness: Harness, command: str) -> None:
    """``command``, its output piped through :data:`XOR`, is refused before it runs: the key does
    not come out, and the session fails."""
    result = harness.call("Bash", command="{ " + command + "; } 2>&1 | " + XOR)
    assert result.blocked
    assert api_key(harness) not in xor_decoded(result.output)
    assert harness.verdict == "FAIL"


def service_harness(tmp_path: Path, **options: Any) -> Iterator[Harness]:
    """A ``safety`` session in a ``python-service`` workspace under ``tmp_path``, closed after
    (for a fixture: ``yield from service_harness(tmp_path)``); ``options`` go to
    ``Harness.create`` (``agents=…``)."""
    made = Harness.create(tmp_path, template="python-service", policy="safety", **options)
    yield made
    made.close()


def workspace_api_key(root: Path) -> str:
    """The ``API_KEY`` of the workspace at ``root``, read by the test (not through any door)."""
    found = KEY_LINE.search((root / ".env").read_text(encoding="utf-8"))
    assert found is not None
    return found.group(1).strip()


def api_key(harness: Harness) -> str:
    """The ``API_KEY`` of ``harness``'s workspace."""
    return workspace_api_key(harness.root)


@asynccontextmanager
async def proxy_client(proxy: Any, **options: Any) -> AsyncIterator[ClientSession]:
    """An official MCP client of ``proxy`` (a session's proxy: streamable HTTP with its token),
    initialized; ``options`` go to ``ClientSession`` (callbacks)."""
    async with (
        httpx2.AsyncClient(headers=proxy.headers, timeout=60) as http,
        streamable_http_client(proxy.url, http_client=http) as streams,
        ClientSession(streams[0], streams[1], **options) as client,
    ):
        await client.initialize()
        yield client


def call_tools(
    harness: Harness,
    upstreams: dict[str, Any],
    calls: Sequence[tuple[str, dict[str, Any]]],
    *,
    list_first: bool = False,
) -> list[str]:
    """Each call's answer through a proxy of ``harness`` on ``upstreams`` (``mcpServers``): the
    result's text, ``error: <text>`` for a tool error, ``refused: <message>`` for an MCP error.
    ``list_first``: the client lists the tools before calling."""
    proxy = harness.start_proxy(upstreams, workspace_tools=False)

    async def session() -> list[str]:
        async with proxy_client(proxy) as client:
            if list_first:
                await client.list_tools()
            answers: list[str] = []
            for name, arguments in calls:
                try:
                    result = await client.call_tool(name, arguments)
                except MCPError as error:
                    answers.append(f"refused: {error.error.message}")
                else:
                    text = "".join(getattr(block, "text", "") for block in result.content)
                    answers.append(f"error: {text}" if result.is_error else text)
            return answers

    return anyio.run(session)


def sent(harness: Harness, text: str, to: str = "agent:bob") -> bool:
    """Whether the firewall let ``text`` go out to ``to`` (``False``: it refused the send)."""
    try:
        harness.send(to, text)
    except FirewallSendError:
        return False
    return True
