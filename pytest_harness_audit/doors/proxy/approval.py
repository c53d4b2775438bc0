"""Approvals at the proxy: a call a rule decided ``ask`` becomes an MCP elicitation.

The proxy asks the client that made the call (``elicitation/create``, form mode, on the call's
own channel) when the client declared the ``elicitation`` capability; otherwise the call is
rejected. The form has one required field ``decision`` (``approve``, ``reject``, ``escalate``,
``terminate``) and an optional ``reason``. ``accept`` answers with the chosen decision;
``decline`` and ``cancel`` reject. The approver's id in the record is ``client:<name>`` (the
``clientInfo.name`` of ``initialize``).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata

from pytest_harness_audit.doors.proxy.client_requests import CallOrigin, missing_capability
from pytest_harness_audit.gate.approvals import ApprovalRequest, Approver

#: What the client's form offers (``modify`` needs new params: not a form field).
FORM_DECISIONS = ("approve", "reject", "escalate", "terminate")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "title": "Decision", "enum": list(FORM_DECISIONS)},
        "reason": {"type": "string", "title": "Reason"},
    },
    "required": ["decision"],
}


def client_name(origin: CallOrigin) -> str:
    """The approver id of the client behind ``origin``."""
    params = origin.session.client_params
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return f"client:{name}" if isinstance(name, str) and name else "client"


def elicitation_request(request: ApprovalRequest) -> types.ElicitRequest:
    """The ``elicitation/create`` request asking the client about ``request``."""
    message = f"Approve {request.tool}? {request.reason}".strip()
    params = types.ElicitRequestFormParams(message=message, requested_schema=SCHEMA)
    return types.ElicitRequest(params=params)


def client_approver(origin: CallOrigin) -> Approver:
    """An approver that asks the client behind ``origin`` by elicitation."""

    async def ask(request: ApprovalRequest) -> Any:
        elicit = elicitation_request(request)
        missing = missing_capability(origin.session.client_capabilities, elicit)
        if missing is not None:
            return ("reject", f"the client cannot be asked (it declared no '{missing}' capability)")
        if not origin.session.can_send_request:
            return ("reject", "the client's connection cannot take requests")
        try:
            result = await origin.session.send_request(
                elicit,
                types.ElicitResult,
                metadata=ServerMessageMetadata(related_request_id=origin.request_id),
            )
        except MCPError as exc:
            return ("reject", f"elicitation failed: {exc.error.message}")
        if result.action != "accept":
            return ("reject", f"the client answered {result.action}")
        content = result.content or {}
        reason = content.get("reason")
        word = content.get("decision", "approve")
        return (word, reason) if isinstance(reason, str) and reason else word

    return ask
