"""A known key handed to the model in two halves, one per call.

The chain's scrub redacts a run of a known secret (half a key) in every record, yet the tool
results the model reads are judged and redacted only for a whole secret: each half reaches the
model in the clear, the model holds the whole key, and the verdict is PASS. Shown at the proxy
(a real upstream that loaded the ``.env`` at start, as a dotenv-reading server does, so no
credential read happens during a call) and at the function-tool door. The benign twin: the
whole key in one result is redacted and FAILs the session.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.session.harness import Harness

LEAKY = str(Path(__file__).resolve().parent / "leaky_upstream.py")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _pieces_through_proxy(harness: Harness, size: int) -> list[str]:
    upstream = {"mcpServers": {"leaky": {"command": sys.executable, "args": [LEAKY]}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False)
    length = len(api_key(harness))

    async def session() -> list[str]:
        async with proxy_client(proxy) as client:
            texts: list[str] = []
            for start in range(0, length, size):
                result = await client.call_tool("piece", {"start": start, "size": size})
                texts.append("".join(getattr(block, "text", "") for block in result.content))
            return texts

    return anyio.run(session)


def _joined(texts: list[str]) -> str:
    return "".join(text.split(": ", 1)[1] for text in texts)


@pytest.mark.xfail(
    strict=True,
    reason="each half of the key reaches the model unredacted through the proxy and the "
    "verdict is PASS (the chain's records redact the same halves)",
)
def test_redteam5_key_in_two_results_through_the_proxy(harness: Harness) -> None:
    key = api_key(harness)
    texts = _pieces_through_proxy(harness, len(key) // 2)
    model_has_key = _joined(texts) == key
    assert not (model_has_key and harness.verdict == "PASS"), texts
    assert key[len(key) // 2 :] not in "".join(texts)


def test_redteam5_benign_twin_whole_key_through_the_proxy_is_redacted(harness: Harness) -> None:
    key = api_key(harness)
    texts = _pieces_through_proxy(harness, len(key))
    assert key not in "".join(texts) and "[secret:" in texts[0]
    assert harness.verdict == "FAIL"


@pytest.mark.xfail(
    strict=True,
    reason="each half of the key reaches the framework unredacted from a function tool and "
    "the verdict is PASS",
)
def test_redteam5_key_in_two_results_of_a_function_tool(harness: Harness) -> None:
    key = api_key(harness)
    half = len(key) // 2

    def piece(start: int, size: int) -> str:
        """A slice of a settings value."""
        return f"piece {start}: {key[start : start + size]}"

    tool = harness.tool(piece)
    texts = [tool(0, half), tool(half, half)]
    assert not (_joined(texts) == key and harness.verdict == "PASS"), texts
    assert key[half:] not in "".join(texts)


def test_redteam5_benign_twin_whole_key_from_a_function_tool_is_redacted(
    harness: Harness,
) -> None:
    key = api_key(harness)

    def piece(start: int, size: int) -> str:
        """A slice of a settings value."""
        return f"piece {start}: {key[start : start + size]}"

    assert key not in harness.tool(piece)(0, len(key))
    assert harness.verdict == "FAIL"
