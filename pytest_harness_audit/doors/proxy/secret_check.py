"""Whether a payload about to leave for an upstream holds a known secret of the workspace.

Shared by the requests the proxy relays ungated (:mod:`.outgoing`) and the client's answers to
an upstream's own requests (:mod:`.client_requests`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_harness_audit.doors.proxy.gate_protocol import GateLike

#: What the client reads when a relayed request held a known secret.
SECRET_REFUSAL = "[blocked] [web4-policy] a known secret is in the outgoing payload"
#: The category the outgoing check reads a relayed request under (that of an upstream tool).
RELAYED_CATEGORY = "mcp"


def holds_secret(gate: GateLike[Any], tool: str, params: Mapping[str, Any]) -> bool:
    """Whether the gate's outgoing-payload check finds a known secret in ``params``.

    A check that raises counts as a finding (fail closed). A gate without inspectors (a test
    stub) finds nothing.
    """
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
