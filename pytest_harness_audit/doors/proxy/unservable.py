"""Calls a transport reads but cannot hand to the server: refused, and recorded all the same.

A ``tools/call``, ``resources/read`` or ``prompts/get`` whose JSON holds an escaped lone
surrogate (``"\\ud800"``: valid JSON, not well-formed Unicode) is refused by the SDK's
streamable-HTTP transport before any handler sees it. The stdio wire serves such a call
(:mod:`.stdio`); over HTTP :class:`~.envelope.EnvelopeCheck` hands it here instead: the gate
decides it as the server would have named it (``mcp__<server>__<tool>``, a local tool's own
name, ``mcp__<server>__resources/read``, ``mcp__<server>__prompts/get``), a call it allows
fails with ``-32602`` (nothing runs, nothing is sent upstream), and either way one record is
left in the chain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types

from pytest_harness_audit.doors.proxy.calls import gate_tool_name
from pytest_harness_audit.doors.proxy.envelope import CALL_METHODS, ill_formed_text, valid_id
from pytest_harness_audit.doors.proxy.gate_failures import run_or_refuse
from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.doors.proxy.gated_reads import (
    prompt_params,
    prompt_tool_name,
    read_params,
    read_tool_name,
)
from pytest_harness_audit.doors.proxy.incoming import server_of
from pytest_harness_audit.doors.proxy.routing import ToolCatalog
from pytest_harness_audit.gate.seam import Outcome


def ill_formed_call(document: object) -> bool:
    """Whether ``document`` is a call (:data:`~.envelope.CALL_METHODS`) holding a string that
    is not well-formed Unicode."""
    return (
        isinstance(document, Mapping)
        and document.get("method") in CALL_METHODS
        and isinstance(document.get("params"), Mapping)
        and ill_formed_text(document["params"], "params") is not None
    )


class UnservableCalls:
    """Records and refuses the calls of :func:`ill_formed_call` (see the module doc)."""

    def __init__(self, gate: GateLike[Any], catalog: ToolCatalog, upstreams: Sequence[Any]):
        self._gate = gate
        self._catalog = catalog
        self._upstreams = upstreams

    async def refuse(self, document: Any) -> types.JSONRPCError | None:
        """Gate and record the call ``document`` when it is one of :func:`ill_formed_call`;
        the error the client is answered with (None: not such a call)."""
        if not ill_formed_call(document):
            return None
        params: Mapping[str, Any] = document["params"]
        where = ill_formed_text(params, "params") or "params"
        message = (
            f"Invalid params: {where} is not well-formed Unicode (a lone surrogate); "
            "the call was not served"
        )
        tool, judged = self._named(str(document["method"]), params)

        async def act(_decision: object) -> Outcome:
            return Outcome.error(message)

        gated = await run_or_refuse(self._gate, tool, judged, act)
        if isinstance(gated, str):  # the gate failed: refused and recorded
            message = gated
        elif gated.blocked and gated.error_message:
            message = gated.error_message
        request_id = document.get("id")
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id if valid_id(request_id) else None,
            error=types.ErrorData(
                code=types.INVALID_PARAMS,
                message=message,
            ),
        )

    def _named(self, method: str, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The tool the gate judges the call as, and its parameters."""
        server = server_of(self._upstreams) if self._upstreams else "proxy"
        if method == "tools/call":
            name = params.get("name")
            arguments = params.get("arguments")
            judged = dict(arguments) if isinstance(arguments, Mapping) else {"arguments": arguments}
            if not isinstance(name, str) or not name:
                return f"mcp__{server}__tools/call", {"name": name, **judged}
            return gate_tool_name(name, self._catalog.resolve(name)), judged
        if method == "resources/read":
            uri = params.get("uri")
            return read_tool_name(server), read_params(uri) if isinstance(uri, str) else {
                "uri": uri
            }
        name = params.get("name")
        arguments = params.get("arguments")
        return prompt_tool_name(server), prompt_params(
            str(name), arguments if isinstance(arguments, Mapping) else None
        )
