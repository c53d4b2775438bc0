"""The client's answer to an upstream's own request leaves for the upstream: it is checked.

An upstream may ask the client during a call (``elicitation/create``, ``sampling/createMessage``);
what the client answers goes to that upstream, which may be a remote server. An answer holding
a known secret of the workspace is not relayed: the upstream gets ``-32600``, the record is an
``error`` whose output (the answer) is redacted, and the session FAILs. An ordinary answer is
relayed as before.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from proxy_support import ASKING_SERVER
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _ask(harness: Harness, answer: str) -> list[Any]:
    """Call ``ask_user`` and ``ask_model`` with a client that answers ``answer`` to both."""
    upstream = {"mcpServers": {"ask": {"command": sys.executable, "args": [ASKING_SERVER]}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False)

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"colour": answer})

    async def sample(ctx: Any, params: Any) -> types.CreateMessageResult:
        text = types.TextContent(text=answer)
        return types.CreateMessageResult(role="assistant", content=text, model="m")

    async def session() -> list[Any]:
        async with proxy_client(
            proxy, elicitation_callback=elicit, sampling_callback=sample
        ) as client:
            results: list[Any] = []
            for tool, arguments in (("ask_user", {"question": "colour?"}), ("ask_model", {})):
                try:
                    result = await client.call_tool(tool, arguments | {"prompt": "hi"})
                except MCPError as error:
                    results.append(f"error: {error.error.message}")
                else:
                    text = "".join(getattr(block, "text", "") for block in result.content)
                    results.append(f"error: {text}" if result.is_error else text)
            return results

    return anyio.run(session)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_an_answer_holding_a_secret_never_reaches_the_upstream(harness: Harness) -> None:
    key = api_key(harness)
    elicited, sampled = _ask(harness, key)
    # the upstream echoes what it got: it got a refusal, never the key (nor its redaction)
    for answer in (elicited, sampled):
        assert (
            answer.startswith("error: ") and "a known secret is in the outgoing payload" in answer
        )
        assert "[secret:" not in answer and key not in answer
    assert harness.verdict == "FAIL"
    statuses = {call.tool: call.status for call in harness.calls()}
    assert statuses["mcp__ask__elicitation/create"] == "error"
    assert statuses["mcp__ask__sampling/createMessage"] == "error"
    assert key not in harness.chain.path.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_an_ordinary_answer_is_relayed(harness: Harness) -> None:
    assert _ask(harness, "teal") == ["accept: teal", "m said: teal"]
    assert harness.verdict == "PASS"
