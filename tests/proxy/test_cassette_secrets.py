"""A recorded cassette holds no more of a known secret than the chain's records do: the
upstream's tool listing (names, descriptions, schemas) and every exchange are redacted as a
record is, a part of a key included, so a committed cassette gives none of it away."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from secret_support import api_key, service_harness

from pytest_harness_audit.doors.proxy.cassette import Interaction
from pytest_harness_audit.doors.proxy.replay import CassetteTape
from pytest_harness_audit.session.harness import Harness

LISTING_SERVER = str(Path(__file__).resolve().parent / "listing_server.py")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _record(harness: Harness, cassette: Path, tools: list[types.Tool], call: Any) -> str:
    """The cassette text after the upstream listed ``tools`` and ran ``call``
    (``(name, arguments, text)``)."""
    upstream = {"mcpServers": {"docs": {"command": sys.executable, "args": [LISTING_SERVER]}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False, record=cassette)
    assert proxy.tape is not None
    docs: Any = type("U", (), {"name": "docs"})()
    proxy.tape.listed(docs, tools)
    name, arguments, text = call
    result = types.CallToolResult(content=[types.TextContent(type="text", text=text)])
    proxy.tape.called(docs, name, arguments, result)
    harness.close()
    return cassette.read_text(encoding="utf-8")


def _tool(name: str, description: str, prop: str = "path") -> types.Tool:
    schema = {"type": "object", "properties": {prop: {"type": "string"}}}
    return types.Tool(name=name, description=description, input_schema=schema)


def test_a_listing_holding_a_key_or_a_part_of_it_is_written_redacted(
    harness: Harness, tmp_path: Path
) -> None:
    key = api_key(harness)
    core = key[len("sk-test-") :]
    part = core[: len(core) // 2]  # half the key: the records redact it too
    tools = [
        _tool("read", f"Reads files. Configured with {part}."),
        _tool(key, "A tool named after the key.", prop=key),
    ]
    text = _record(harness, tmp_path / "c.yaml", tools, ("read", {"path": part}, f"got {part}"))
    assert key not in text and part not in text
    assert "Reads files. Configured with [secret:" in text
    assert text.count("[secret:") == 5  # description, name, schema key, argument, result
    assert part not in harness.chain.path.read_text(encoding="utf-8")


def test_a_replayed_call_carrying_a_part_of_the_key_matches_its_recording(
    harness: Harness, tmp_path: Path
) -> None:
    key = api_key(harness)
    part = key[len("sk-test-") :][:12]
    cassette = tmp_path / "c.yaml"
    _record(harness, cassette, [_tool("read", "Reads files.")], ("read", {"q": part}, "ok"))
    upstream = {"mcpServers": {"docs": {"command": sys.executable, "args": [LISTING_SERVER]}}}
    again = service_harness(tmp_path / "again")
    other = next(again)
    try:
        proxy = other.start_proxy(upstream, workspace_tools=False, record=tmp_path / "d.yaml")
        assert proxy.tape is not None
        replaying = CassetteTape(cassette, "replay", redact=proxy.tape.redact)
        assert replaying.answer(Interaction("docs", "read", {"q": part})) is not None
    finally:
        other.close()


@pytest.mark.slow
def test_an_ordinary_listing_and_look_alikes_are_written_as_they_are(
    harness: Harness, tmp_path: Path
) -> None:
    key = api_key(harness)
    short = key[len("sk-test-") :][:6]  # too short a run to be the key
    tools = [
        _tool("read", "Reads files. Keys look like sk-test-xxxxxxxxxxxxxxxxxxxxxxxx."),
        _tool("find", f"Finds a name starting {short}."),
    ]
    text = _record(harness, tmp_path / "c.yaml", tools, ("read", {"path": "README.md"}, "text"))
    assert "[secret:" not in text
    assert "Keys look like sk-test-xxxxxxxxxxxxxxxxxxxxxxxx." in text
    assert f"Finds a name starting {short}." in text
