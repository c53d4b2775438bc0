"""A listing holding a known secret reaches the client redacted, and counts in the verdict.

``tools/list``, ``resources/list``, ``resources/templates/list``, ``prompts/list``, the
upstream's ``initialize`` instructions and its ``completion/complete`` values are relayed
ungated, but a tool's description (and the instructions) go straight into the model's context:
an upstream that read the workspace's ``.env`` into them hands the key to the agent with no
call at all. Such a listing goes through
the gate as ``mcp__<server>__<method>``: the client gets it redacted, and the session FAILs.
An ordinary listing passes unrecorded, as before.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.session.harness import Harness

LISTING_SERVER = str(Path(__file__).resolve().parent / "listing_server.py")
METHODS = (
    "initialize",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "completion/complete",
)


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _listings(harness: Harness, *flags: str) -> dict[str, str]:
    """Each listing as the client gets it (JSON text), through a proxy of ``harness``."""
    args = [LISTING_SERVER, *flags]
    upstream = {"mcpServers": {"docs": {"command": sys.executable, "args": args}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False)

    async def session() -> dict[str, str]:
        async with proxy_client(proxy) as client:
            got = (
                await client.list_tools(),
                await client.list_resources(),
                await client.list_resource_templates(),
                await client.list_prompts(),
                await client.complete(
                    types.PromptReference(name="greet"), {"name": "who", "value": "a"}
                ),
            )
            dumped = [json.dumps(client.instructions)]
            dumped += [json.dumps(r.model_dump(mode="json")) for r in got]
            return dict(zip(METHODS, dumped, strict=True))

    return anyio.run(session)


def test_a_listing_holding_a_secret_is_redacted_and_fails_the_session(harness: Harness) -> None:
    key = api_key(harness)
    listings = _listings(harness, "--env")
    for method, text in listings.items():
        assert key not in text, method
        assert "Configured with:" in text and "[secret:" in text, method
    assert harness.verdict == "FAIL"
    recorded = [(call.tool, call.status) for call in harness.calls()]
    assert recorded == [(f"mcp__docs__{method}", "success") for method in METHODS]
    assert key not in harness.chain.path.read_text(encoding="utf-8")


def test_an_ordinary_listing_passes_unrecorded(harness: Harness) -> None:
    listings = _listings(harness)
    assert all("Says hello." in text for text in listings.values())
    assert harness.calls() == []
    assert harness.verdict == "PASS"
