"""Whether a payload about to leave for an upstream holds a known secret of the workspace.

Shared by the requests the proxy relays ungated (:mod:`.outgoing`), the client's answers to
an upstream's own requests (:mod:`.client_requests`) and an upstream call's arguments
(:mod:`.calls`). The inspection reads a payload down to
:data:`~pytest_harness_audit.inspect.outputs.MAX_DEPTH` levels; what lies deeper still leaves
whole, so a value nested that deep is judged as the flat list of its strings
(:func:`readable`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.inspect.outputs import MAX_DEPTH as SCANNED_DEPTH
from pytest_harness_audit.social.message_json import MessageJsonError, json_strings

#: What the client reads when a relayed request held a known secret.
SECRET_REFUSAL = "[blocked] [web4-policy] a known secret is in the outgoing payload"
#: The category the outgoing check reads a relayed request under (that of an upstream tool).
RELAYED_CATEGORY = "mcp"


def holds_secret(gate: GateLike[Any], tool: str, params: Mapping[str, Any]) -> bool:
    """Whether the gate's outgoing-payload check finds a known secret in ``params``.

    A check that raises counts as a finding (fail closed). A gate without inspectors (a test
    stub) finds nothing.
    """
    params = readable(params)
    for inspector in getattr(gate, "inspectors", ()):
        outgoing = getattr(inspector, "outgoing", None)
        if not callable(outgoing):
            continue
        try:
            if outgoing(tool, RELAYED_CATEGORY, params) is not None:
                return True
        except Exception:
            return True
    return False


def readable(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """``params`` as the outgoing check can read them whole: unchanged, unless a value is
    nested deeper than the inspection reads; that value is then its strings (keys and numbers
    included, in document order) as one flat list, so none of them leaves unread."""
    if not isinstance(params, Mapping) or _depth(params) < SCANNED_DEPTH - 1:
        return params
    return {
        key: _strings(value) if _depth(value) >= SCANNED_DEPTH - 2 else value
        for key, value in params.items()
    }


def _depth(value: object) -> int:
    """How many containers deep ``value`` nests (iterative: any depth)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((child, depth + 1) for child in item)
        else:
            continue
        deepest = max(deepest, depth + 1)
    return deepest


def _strings(value: object) -> list[str]:
    """Every string, key and number of ``value``, in document order (any depth); a value that
    is not JSON (never from the wire) is its ``repr``, still read whole."""
    try:
        return json_strings(value)
    except MessageJsonError:
        return [repr(value)]
