"""A tool name the upstream never listed is the client's text, and it leaves with the call.

With one upstream the proxy forwards any name, so a name can carry a secret to the upstream
(whose "Unknown tool" error may not even echo it, leaving nothing for the output scan to
catch). A name that no listing holds is checked like an argument: one holding a known secret of
the workspace is refused before it leaves and recorded under ``mcp__<server>__tools/call`` (not
under the name), and the session FAILs. Listed tools and unknown ordinary names are unaffected.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from secret_support import api_key, call_tools, service_harness

from pytest_harness_audit.session.harness import Harness

LIBRARY = str(Path(__file__).resolve().with_name("library_server.py"))


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _call(harness: Harness, calls: list[tuple[str, dict[str, Any]]], listed: bool) -> list[str]:
    upstream = {"mcpServers": {"lib": {"command": sys.executable, "args": [LIBRARY]}}}
    return call_tools(harness, upstream, calls, list_first=listed)


def test_a_secret_as_a_tool_name_is_refused_before_it_leaves(harness: Harness) -> None:
    key = api_key(harness)
    (answer,) = _call(harness, [(key, {})], listed=False)
    assert answer == "refused: [blocked] [web4-policy] a known secret is in the outgoing payload"
    assert harness.verdict == "FAIL"
    assert [(c.tool, c.status) for c in harness.calls()] == [("mcp__lib__tools/call", "blocked")]
    assert key not in harness.chain.path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_listed_names_are_forwarded_and_unknown_ones_answered_by_the_proxy(
    harness: Harness,
) -> None:
    calls = [("lookup", {"book": "dune"}), ("api_key_helper", {})]
    looked, unknown = _call(harness, calls, listed=True)
    assert "Dune" in looked
    assert unknown == "refused: Unknown tool: api_key_helper"  # never sent upstream
    assert [c.tool for c in harness.calls()] == ["mcp__lib__lookup", "mcp__lib__api_key_helper"]
