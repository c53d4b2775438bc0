"""How clients reach a proxy: the command that starts it, and ``mcpServers`` config entries.

``proxy_command(...)`` returns the argv of ``harness-audit proxy``, run with the current Python
so it works in any virtualenv without relying on the console script being on ``PATH``.
``mcp_config(...)`` wraps server entries in the ``{"mcpServers": {...}}`` document that Claude
Code, the MCP Inspector and ``--config`` read.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_harness_audit.doors.proxy.http import HttpEndpoint

DEFAULT_SERVER_NAME = "harness-audit"


def proxy_command(
    *,
    storage: Path | str,
    upstream: Sequence[str] = (),
    session: str | None = None,
    policy: Path | str | None = None,
    preset: str | None = None,
    config: Path | str | None = None,
    workspace: Path | str | None = None,
    http: str | None = None,
    call_timeout: float | None = None,
    social: Sequence[str] = (),
    python: str = sys.executable,
    pin: Path | str | None = None,
    policy_hash: str | None = None,
    config_sha256: str | None = None,
) -> list[str]:
    """Argv for ``harness-audit --storage STORAGE proxy [options] -- UPSTREAM...``.

    ``social`` (the local agent's name, then its peers) adds ``--social LOCAL,PEER,…``: the
    proxy then serves ``send_message`` too. ``policy_hash`` (the policy's ``content_hash``) and
    ``config_sha256`` (of the config file's bytes) seal the files: a proxy that finds them
    changed refuses to serve."""
    if policy is not None and preset is not None:
        raise ValueError("give either policy or preset, not both")
    argv = [python, "-m", "pytest_harness_audit", "--storage", str(storage), "proxy"]
    options: list[tuple[str, object]] = [
        ("--session", session),
        ("--policy", policy),
        ("--preset", preset),
        ("--config", config),
        ("--workspace", workspace),
        ("--http", http),
        ("--call-timeout", call_timeout),
        ("--social", ",".join(social) if social else None),
        ("--pin", pin),
        ("--policy-hash", policy_hash),
        ("--config-sha256", config_sha256),
    ]
    for flag, value in options:
        if value is not None:
            argv += [flag, str(value)]
    if upstream:
        argv += ["--", *upstream]
    return argv


def stdio_server_entry(argv: Sequence[str], env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """An ``mcpServers`` entry that starts ``argv`` (e.g. a ``proxy_command``) over stdio."""
    if not argv:
        raise ValueError("a stdio server entry needs a command")
    entry: dict[str, Any] = {"type": "stdio", "command": argv[0], "args": list(argv[1:])}
    if env:
        entry["env"] = dict(env)
    return entry


def http_server_entry(endpoint: HttpEndpoint) -> dict[str, Any]:
    """An ``mcpServers`` entry for a proxy served over HTTP, bearer token included."""
    return {"type": "http", "url": endpoint.url, "headers": endpoint.headers}


def mcp_config(entry: Mapping[str, Any], name: str = DEFAULT_SERVER_NAME) -> dict[str, Any]:
    """The ``{"mcpServers": {name: entry}}`` document an MCP client loads."""
    return {"mcpServers": {name: dict(entry)}}
