"""A listing's ``cursor`` is the client's text, and it leaves for the upstream with the request.

With one upstream the proxy relays ``resources/list``, ``resources/templates/list`` and
``prompts/list`` unchanged, cursor included, so a cursor could carry a known secret to a remote
upstream while the session stayed PASS. A cursor holding a known secret is refused like a
subscription's URI: a JSON-RPC error, a blocked ``mcp__<server>__<method>`` record, nothing sent.
An ordinary cursor (an upstream's own opaque page token) passes unrecorded, as before.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
import pytest

from pytest_harness_audit.doors.proxy.gated_reads import GatedReads, RequestBlocked
from pytest_harness_audit.doors.proxy.outgoing import holds_secret
from pytest_harness_audit.doors.proxy.passthrough import Passthrough
from pytest_harness_audit.gate.seam import GatedCall, run_call_async

SECRET = "sk-live-4f9a1c2e7b3d8a6f0e5c9b2a"
ORDINARY = "eyJwYWdlIjogMn0="  # base64 of {"page": 2}, the usual shape of a page token


class _Inspector:
    def outgoing(self, tool: str, category: str, params: Any) -> object | None:
        return "leak" if SECRET in json.dumps(params, ensure_ascii=False) else None


@dataclass
class _Decision:
    tool: str
    params: dict[str, Any]
    blocked: bool
    message: str


@dataclass
class _Gate:
    inspectors: list[Any] = field(default_factory=lambda: [_Inspector()])
    records: list[dict[str, Any]] = field(default_factory=list)

    def decide(self, tool: str, params: Any) -> _Decision:
        leak = holds_secret(self, tool, params)
        return _Decision(tool, dict(params), leak, "[blocked] a known secret" if leak else "")

    def record(self, decision: _Decision, **fields: Any) -> dict[str, Any]:
        self.records.append({"tool": decision.tool, "params": decision.params, **fields})
        return self.records[-1]

    async def run_async(self, tool: str, params: Any, act: Any, **_: Any) -> GatedCall:
        return await run_call_async(self, tool, params, act)


class _Session:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def send_request(self, request: Any, result_type: Any) -> Any:
        self.sent.append(request)
        return result_type.model_validate({"resources": [], "resourceTemplates": [], "prompts": []})


class _Upstream:
    name = "up"
    alive = True

    def __init__(self) -> None:
        self.session = _Session()
        self.capabilities = types.ServerCapabilities(
            resources=types.ResourcesCapability(), prompts=types.PromptsCapability()
        )


class _ClientSession:
    client_params = None


class _Ctx:
    session = _ClientSession()
    request_id = 1


Listing = Callable[[Passthrough, types.PaginatedRequestParams], Awaitable[Any]]
LISTINGS: dict[str, Listing] = {
    "resources/list": lambda p, params: p.list_resources(_Ctx(), params),  # type: ignore[arg-type]
    "resources/templates/list": lambda p, params: p.list_resource_templates(_Ctx(), params),  # type: ignore[arg-type]
    "prompts/list": lambda p, params: p.list_prompts(_Ctx(), params),  # type: ignore[arg-type]
}


def _run(method: str, cursor: str | None) -> tuple[_Upstream, _Gate, RequestBlocked | None]:
    upstream, gate = _Upstream(), _Gate()
    passthrough = Passthrough([upstream], GatedReads(gate))  # type: ignore[list-item]
    params = types.PaginatedRequestParams(cursor=cursor)
    try:
        anyio.run(LISTINGS[method], passthrough, params)
    except RequestBlocked as refused:
        return upstream, gate, refused
    return upstream, gate, None


@pytest.mark.parametrize("method", list(LISTINGS))
@pytest.mark.parametrize("cursor", [SECRET, f"page-2:{SECRET}"], ids=["plain", "embedded"])
def test_a_cursor_holding_a_secret_is_refused_and_recorded(method: str, cursor: str) -> None:
    upstream, gate, refused = _run(method, cursor)
    assert refused is not None
    assert "known secret" in refused.error.message
    assert upstream.session.sent == []
    (record,) = gate.records
    assert (record["tool"], record["status"]) == (f"mcp__up__{method}", "blocked")
    assert record["params"] == {"cursor": cursor}


@pytest.mark.parametrize("method", list(LISTINGS))
@pytest.mark.parametrize("cursor", [None, ORDINARY], ids=["first-page", "page-token"])
def test_ordinary_listings_pass_unrecorded(method: str, cursor: str | None) -> None:
    upstream, gate, refused = _run(method, cursor)
    assert refused is None
    (sent,) = upstream.session.sent
    assert sent.params.cursor == cursor
    assert gate.records == []
