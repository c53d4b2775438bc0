"""The recorded form of a cassette: its upstreams and interactions, as written in YAML."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_harness_audit.doors.proxy.cassette_kinds import KINDS, ref_mapping
from pytest_harness_audit.doors.proxy.errors import ProxyError

CASSETTE_VERSION = 1


class CassetteError(ProxyError):
    """A cassette that is missing, does not parse or has the wrong shape (one line)."""


@dataclass
class Interaction:
    """One recorded upstream exchange: the request and its result or MCP error.

    ``name`` is what the request is about: the tool of a ``tools/call``, the URI of a
    ``resources/read``, the prompt of a ``prompts/get`` or the reference of a
    ``completion/complete`` (``ref/prompt:<name>``, ``ref/resource:<uri>``); empty for
    listings. ``client_requests`` holds what the upstream asked the client during a call
    (``method``, ``params`` and the client's ``answer``).
    """

    upstream: str
    name: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    method: str = "tools/call"
    client_requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def tool(self) -> str:
        """``name``, under the name matchers written for tool calls know it by."""
        return self.name

    def to_dict(self) -> dict[str, Any]:
        """The YAML form."""
        data: dict[str, Any] = {"method": self.method, "upstream": self.upstream}
        key = KINDS[self.method].key if self.method in KINDS else "tool"
        if key == "ref":
            data["ref"] = ref_mapping(self.name)
        elif key is not None:
            data[key] = self.name
        if self.arguments or self.method == "tools/call":
            data["arguments"] = self.arguments
        if self.client_requests:
            data["client_requests"] = self.client_requests
        if self.error is not None:
            data["error"] = self.error
        else:
            data["result"] = self.result
        return data


@dataclass
class RecordedUpstream:
    """What one upstream announced in its handshake, and its tools."""

    name: str
    server_info: dict[str, Any] | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The YAML form."""
        return {
            "name": self.name,
            "server_info": self.server_info,
            "capabilities": self.capabilities,
            "instructions": self.instructions,
            "tools": self.tools,
        }


@dataclass
class Cassette:
    """The upstreams and calls of one recorded proxy session."""

    upstreams: dict[str, RecordedUpstream] = field(default_factory=dict)
    interactions: list[Interaction] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The YAML document."""
        return {
            "version": CASSETTE_VERSION,
            "upstreams": [u.to_dict() for u in self.upstreams.values()],
            "interactions": [i.to_dict() for i in self.interactions],
        }
