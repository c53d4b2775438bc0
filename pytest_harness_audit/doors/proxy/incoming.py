"""Known secrets in what an upstream sends the client outside a call's result.

A call's result is inspected by the gate (redacted, counted in the verdict). An upstream also
speaks to the client in notifications: the progress of a call (``notifications/progress``, its
``message``) and, outside any request, log messages (``notifications/message``, its ``data``),
resource updates and list changes. The client's host may show them to its model or write them
to its logs, so a known secret of the workspace in one has left the session as surely as in a
result. Such a notification is not relayed whole: a progress notification goes on without its
``message`` (the client still sees the call advance), any other is withheld. The refusal goes
through the door seam as ``mcp__<server>__<method>`` — refused there and recorded, so the verdict
fails — as an outgoing request holding a secret is (:mod:`.outgoing`). A notification without
one is relayed as before, unrecorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.doors.proxy.outgoing import request_tool_name
from pytest_harness_audit.doors.proxy.secret_check import holds_secret
from pytest_harness_audit.gate.seam import Outcome

#: The error of the record of a notification withheld for the secret it held.
WITHHELD = "[blocked] [web4-policy] a known secret is in the upstream's notification: not relayed"


async def withheld_if_secret(
    gate: GateLike[Any], server: str, method: str, params: Mapping[str, Any]
) -> bool:
    """Whether ``params`` of ``server``'s notification ``method`` hold a known secret; if so
    the refusal to relay it is recorded (``mcp__<server>__<method>``, the secret redacted in the
    record by the chain's scrub) and the caller must not relay it whole."""
    tool = request_tool_name(server, method)
    if not holds_secret(gate, tool, params):
        return False

    async def never(_decision: object) -> Outcome:
        # the policy judges the exposure no failure: still not relayed, and recorded so
        return Outcome.error(WITHHELD)

    await gate.run_async(tool, params, never)
    return True


def notification_params(notification: Any) -> dict[str, Any]:
    """A notification's ``params`` as JSON data (empty when it has none)."""
    params = getattr(notification, "params", None)
    if params is None:
        return {}
    dumped: dict[str, Any] = params.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


__all__ = ["WITHHELD", "notification_params", "withheld_if_secret"]
