"""The recording MCP proxy: one door of the gate, between an agent and its MCP servers.

In-process (async)::

    async with RecordingProxy(gate, [upstream_from_argv(argv)]) as proxy:
        await proxy.serve_http(port=0, on_ready=print)      # or: await proxy.serve_stdio()

In-process from synchronous code (a background thread serving HTTP)::

    with BackgroundProxy(gate, upstreams) as proxy:
        proxy.url, proxy.token

As a subprocess: ``proxy_command(storage=..., session=..., upstream=argv)`` gives the argv of
``harness-audit proxy``; ``mcp_config(stdio_server_entry(argv))`` or
``mcp_config(http_server_entry(endpoint))`` the client configuration.
"""

from __future__ import annotations

from pytest_harness_audit.doors.proxy.background import BackgroundProxy
from pytest_harness_audit.doors.proxy.command import (
    http_server_entry,
    mcp_config,
    proxy_command,
    stdio_server_entry,
)
from pytest_harness_audit.doors.proxy.config import (
    HttpUpstream,
    StdioUpstream,
    UpstreamSpec,
    in_workspace,
    load_upstreams_config,
    parse_http_address,
    parse_upstreams_config,
    upstream_from_argv,
)
from pytest_harness_audit.doors.proxy.core import RecordingProxy
from pytest_harness_audit.doors.proxy.errors import ProxyError, UpstreamStartError
from pytest_harness_audit.doors.proxy.gate_protocol import CallStatus, DecisionLike, GateLike
from pytest_harness_audit.doors.proxy.http import HttpEndpoint, parse_ready_line
from pytest_harness_audit.doors.proxy.local_tools import LocalTool, to_tool_result

__all__ = [
    "BackgroundProxy",
    "CallStatus",
    "DecisionLike",
    "GateLike",
    "HttpEndpoint",
    "HttpUpstream",
    "LocalTool",
    "ProxyError",
    "RecordingProxy",
    "StdioUpstream",
    "UpstreamSpec",
    "UpstreamStartError",
    "http_server_entry",
    "in_workspace",
    "load_upstreams_config",
    "mcp_config",
    "parse_http_address",
    "parse_ready_line",
    "parse_upstreams_config",
    "proxy_command",
    "stdio_server_entry",
    "to_tool_result",
    "upstream_from_argv",
]
