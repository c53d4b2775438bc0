"""Known secrets in the requests the proxy relays without gating them.

``completion/complete`` (the argument being typed, the other arguments of its context) and
``resources/subscribe``/``unsubscribe`` (a URI) are not calls: they pass through unrecorded. They
still carry text the agent chose to the upstream, which may be a remote server. So every string
of such a request (keys included) is read by the gate's outgoing-payload check before it is
relayed; a request holding a known secret of the workspace is not relayed: it goes through the
door seam as ``mcp__<server>__<method>`` — refused there and recorded, so the verdict fails — and
the client gets a JSON-RPC error naming why. A request without one passes through as before,
unrecorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types

from pytest_harness_audit.doors.proxy.approval import client_approver, client_name
from pytest_harness_audit.doors.proxy.client_requests import CallOrigin
from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.doors.proxy.gated_reads import RequestBlocked
from pytest_harness_audit.doors.proxy.secret_check import (
    RELAYED_CATEGORY as RELAYED_CATEGORY,
)
from pytest_harness_audit.doors.proxy.secret_check import SECRET_REFUSAL as SECRET_REFUSAL
from pytest_harness_audit.doors.proxy.secret_check import holds_secret as holds_secret
from pytest_harness_audit.gate.approvals import door_approver
from pytest_harness_audit.gate.seam import Outcome


def request_tool_name(server: str, method: str) -> str:
    """The name a relayed request is judged and recorded under: ``mcp__<server>__<method>``."""
    return f"mcp__{server}__{method}"


async def refuse_if_secret(
    gate: GateLike[Any], tool: str, params: Mapping[str, Any], origin: CallOrigin | None
) -> None:
    """Raise :class:`~.gated_reads.RequestBlocked` (a JSON-RPC error) after recording the
    refusal when ``params`` holds a known secret; return (nothing recorded) when it does not."""
    if not holds_secret(gate, tool, params):
        return

    async def never(_decision: object) -> Outcome:
        # the gate allowed it after all (its policy judges the exposure no failure): it is
        # still not relayed, and the record says so
        return Outcome.error(SECRET_REFUSAL)

    asker = None if origin is None else client_approver(origin)
    with door_approver(asker, "client" if origin is None else client_name(origin)):
        gated = await gate.run_async(tool, params, never)
    message = str(gated.error_message or SECRET_REFUSAL) if gated.blocked else SECRET_REFUSAL
    raise RequestBlocked(code=types.INVALID_REQUEST, message=message)


def completion_params(params: types.CompleteRequestParams) -> dict[str, Any]:
    """What a ``completion/complete`` sends upstream, as the gate reads and records it."""
    dumped: dict[str, Any] = params.model_dump(by_alias=True, mode="json", exclude_none=True)
    dumped.pop("_meta", None)  # the client hop's own: not relayed
    return dumped


def uri_params(uri: str) -> dict[str, Any]:
    """What a ``resources/subscribe``/``unsubscribe`` sends upstream."""
    return {"uri": uri}
