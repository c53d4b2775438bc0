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

Listings (``tools/list``, ``resources/list``, ``resources/templates/list``, ``prompts/list``)
and an upstream's ``instructions`` are relayed ungated, yet a tool's description (and the
instructions) go straight into the model's context. A
listing holding a known secret goes through the door seam as ``mcp__<server>__<method>``, its
answer as the output (:func:`screened`): the client gets it redacted, and the record counts the
exposure in the verdict. Other listings pass unrecorded, as before.

An upstream's JSON-RPC error to any relayed request (a listing, a completion, a subscription,
``logging/setLevel``) is its text too, shown to the client: one holding a known secret (in its
message or its ``data``) goes through the door seam as ``mcp__<server>__<method>``, recorded
``error`` with the whole error as its output (:func:`relayed_error`), and reaches the client
redacted, its code kept. An error without one is relayed unchanged, unrecorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.doors.proxy.gated_reads import (
    RequestBlocked,
    error_output,
    redacted_error,
)
from pytest_harness_audit.doors.proxy.outgoing import request_tool_name
from pytest_harness_audit.doors.proxy.secret_check import holds_secret
from pytest_harness_audit.gate.seam import Outcome

ListingT = TypeVar("ListingT", bound=BaseModel)

#: The error of the record of a notification withheld for the secret it held.
WITHHELD = "[blocked] [web4-policy] a known secret is in the upstream's notification: not relayed"
#: The error a client gets for a listing holding a secret that could not be redacted.
WITHHELD_LISTING = "[blocked] [web4-policy] a known secret is in the upstream's listing"


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


async def screened(gate: GateLike[Any], server: str, method: str, listing: ListingT) -> ListingT:
    """``listing`` as the client may see it: unchanged without a known secret; else gated and
    recorded as ``mcp__<server>__<method>`` with the listing as its output, and answered
    redacted when the policy judges the exposure a failure (as a call's result is). A listing
    the gate refuses, or whose redacted form is no listing any more, is not relayed
    (``RequestBlocked``)."""
    data = listing.model_dump(by_alias=True, mode="json", exclude_none=True)
    tool = request_tool_name(server, method)
    if not holds_secret(gate, tool, data):
        return listing

    async def shown(_decision: object) -> Outcome:
        return Outcome.success(data)

    gated = await gate.run_async(tool, {}, shown)
    if gated.blocked:
        message = str(gated.error_message or WITHHELD_LISTING)
        raise RequestBlocked(code=types.INVALID_REQUEST, message=message)
    if not gated.findings.redacted:
        return listing  # the policy judges the exposure no failure, as for a call's result
    if isinstance(gated.output, Mapping):
        try:
            return type(listing).model_validate(dict(gated.output))
        except ValueError:
            pass
    raise RequestBlocked(code=types.INVALID_REQUEST, message=WITHHELD_LISTING)


async def relayed_error(gate: GateLike[Any], server: str, method: str, error: MCPError) -> MCPError:
    """``server``'s ``error`` to ``method`` as the client may see it: unchanged without a known
    secret; else recorded as ``mcp__<server>__<method>`` (``error``, the whole error as its
    output) and redacted — the same code, message and ``data`` redacted — when the policy
    judges the exposure a failure. The answer is a :class:`RequestBlocked` then, so that no
    other upstream is asked in its place."""
    output = error_output(error.error)
    tool = request_tool_name(server, method)
    if not holds_secret(gate, tool, output):
        return error

    async def failed(_decision: object) -> Outcome:
        return Outcome.error(error.error.message, output)

    gated = await gate.run_async(tool, {}, failed)
    if gated.blocked:
        message = str(gated.error_message or WITHHELD_LISTING)
        return RequestBlocked(code=error.error.code, message=message)
    if not gated.findings.redacted:
        return error  # the policy judges the exposure no failure, as for a call's result
    shown = redacted_error(error.error, gated)
    return RequestBlocked(code=shown.error.code, message=shown.error.message, data=shown.error.data)


class _Instructions(BaseModel):
    """An upstream's ``instructions`` (its ``initialize`` answer), as a listing is screened."""

    instructions: str


async def screened_instructions(
    gate: GateLike[Any], server: str, instructions: str | None
) -> str | None:
    """The upstream's instructions as the client may see them (the host puts them in the
    model's context): screened as a listing is, recorded as ``mcp__<server>__initialize``; ones
    the gate refuses are not relayed (``None``)."""
    if instructions is None:
        return None
    try:
        shown = await screened(gate, server, "initialize", _Instructions(instructions=instructions))
    except RequestBlocked:
        return None
    return shown.instructions


def server_of(upstreams: Sequence[Any]) -> str:
    """The server a listing is recorded under: the one upstream, else ``proxy`` (merged)."""
    return str(upstreams[0].name) if len(upstreams) == 1 else "proxy"


def notification_params(notification: Any) -> dict[str, Any]:
    """A notification's ``params`` as JSON data (empty when it has none)."""
    params = getattr(notification, "params", None)
    if params is None:
        return {}
    dumped: dict[str, Any] = params.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


__all__ = [
    "WITHHELD",
    "WITHHELD_LISTING",
    "notification_params",
    "relayed_error",
    "screened",
    "screened_instructions",
    "server_of",
    "withheld_if_secret",
]
