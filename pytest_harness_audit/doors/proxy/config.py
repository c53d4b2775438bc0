"""Which upstream MCP servers the proxy fronts: from a command line or an `mcpServers` file.

The file shape is the one every MCP client reads::

    {"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"], "env": {}},
                    "docs": {"url": "http://127.0.0.1:9000/mcp", "headers": {}}}}
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_harness_audit.doors.proxy.errors import ProxyError

# Server names become tool-name prefixes (`server__tool`), so they must be valid tool-name text.
_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http", "streamableHttp"})
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class StdioUpstream:
    """An upstream MCP server started as a subprocess and spoken to over its stdin/stdout."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None

    @property
    def argv(self) -> list[str]:
        """The full command line of the upstream process."""
        return [self.command, *self.args]


@dataclass(frozen=True)
class HttpUpstream:
    """An upstream MCP server reached over streamable HTTP."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)


UpstreamSpec = StdioUpstream | HttpUpstream


def upstream_from_argv(argv: Sequence[str], *, name: str | None = None) -> StdioUpstream:
    """Build the stdio upstream given as a command line (what follows ``--``)."""
    if not argv or not argv[0]:
        raise ProxyError("no upstream command given after '--'")
    server_name = name or default_server_name(argv)
    _check_server_name(server_name, where="the upstream command")
    return StdioUpstream(name=server_name, command=argv[0], args=tuple(argv[1:]))


def default_server_name(argv: Sequence[str]) -> str:
    """Derive a readable server name from a command line (`python -m pkg` → `pkg`)."""
    words = list(argv)
    for index, word in enumerate(words[:-1]):
        if word == "-m":
            return _sanitise(words[index + 1])
    for word in words:
        base = os.path.basename(word)
        if base and not base.startswith("-") and not _is_launcher(base):
            return _sanitise(base)
    return "upstream"


def _is_launcher(base: str) -> bool:
    return base in {"uvx", "npx", "node", "env", "uv", "run", "pipx"} or base.startswith("python")


def _sanitise(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", text.split("@")[0]).strip("-.")
    # `mcp_server_git` / `mcp-server-git` / `server-filesystem` → `git` / `filesystem`: the
    # names MCP clients give these servers, so rules read `mcp__git__git_commit`
    cleaned = re.sub(r"^(?:mcp[_-]server[_-]|server[_-])(?=.)", "", cleaned)
    return cleaned[:64] or "upstream"


class ConfigChanged(ProxyError):
    """A config file sealed by its hash changed since it was written."""


def load_upstreams_config(path: Path, *, sha256: str | None = None) -> list[UpstreamSpec]:
    """Read the upstreams of a standard ``{"mcpServers": {...}}`` JSON file, in file order.

    With ``sha256``, the file's bytes must hash to it (a file written for this proxy and
    changed since is refused: its commands would run outside any gated call)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProxyError(f"{path}: cannot read the MCP config: {exc.strerror or exc}") from None
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise ConfigChanged(
            f"{path}: the MCP config changed since it was written for this proxy (its sha256 is "
            f"not {sha256[:12]}…): refusing to start its servers"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProxyError(f"{path}: the MCP config is not UTF-8 ({exc.reason})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProxyError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    return parse_upstreams_config(document, source=str(path))


def parse_upstreams_config(document: Any, *, source: str = "<config>") -> list[UpstreamSpec]:
    """Validate an already-parsed ``mcpServers`` document and return its upstreams."""
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), dict):
        raise ProxyError(f"{source}: expected an object with an 'mcpServers' object")
    servers: dict[str, Any] = document["mcpServers"]
    upstreams: list[UpstreamSpec] = []
    for name, entry in servers.items():
        where = f"{source}: mcpServers.{name}"
        _check_server_name(name, where=where)
        if not isinstance(entry, dict):
            raise ProxyError(f"{where}: expected an object with 'command' or 'url'")
        if entry.get("disabled") is True:
            continue
        upstreams.append(_parse_entry(name, entry, where))
    if not upstreams:
        raise ProxyError(f"{source}: 'mcpServers' lists no enabled server")
    return upstreams


def _parse_entry(name: str, entry: dict[str, Any], where: str) -> UpstreamSpec:
    kind = entry.get("type")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command and has_url:
        raise ProxyError(f"{where}: give either 'command' or 'url', not both")
    if kind == "sse":
        raise ProxyError(
            f"{where}: field 'type' value 'sse' is not supported (use streamable HTTP)"
        )
    if has_url:
        if kind is not None and kind not in _HTTP_TYPES:
            raise ProxyError(f"{where}: field 'type' value {kind!r} does not fit a 'url' server")
        url = _string(entry, "url", where)
        if not url.startswith(("http://", "https://")):
            raise ProxyError(f"{where}: field 'url' value {url!r} is not an http(s) URL")
        return HttpUpstream(name=name, url=url, headers=_string_map(entry, "headers", where))
    if not has_command:
        raise ProxyError(f"{where}: missing field 'command' (or 'url')")
    if kind is not None and kind != "stdio":
        raise ProxyError(f"{where}: field 'type' value {kind!r} does not fit a 'command' server")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise ProxyError(f"{where}: field 'args' must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ProxyError(f"{where}: field 'cwd' must be a string")
    return StdioUpstream(
        name=name,
        command=_string(entry, "command", where),
        args=tuple(args),
        env=_string_map(entry, "env", where),
        cwd=cwd,
    )


def _string(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise ProxyError(f"{where}: field {key!r} must be a non-empty string, got {value!r}")
    return value


def _string_map(entry: dict[str, Any], key: str, where: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ProxyError(f"{where}: field {key!r} must be an object of strings")
    return dict(value)


def _check_server_name(name: str, *, where: str) -> None:
    if not _SERVER_NAME.match(name) or "__" in name:
        raise ProxyError(
            f"{where}: server name {name!r} must be 1-64 of [A-Za-z0-9_.-], "
            "start with a letter or digit, and not contain '__'"
        )


def check_unique_names(upstreams: Sequence[UpstreamSpec]) -> None:
    """Refuse two upstreams with the same name (their tools could not be told apart)."""
    seen: set[str] = set()
    for upstream in upstreams:
        if upstream.name in seen:
            raise ProxyError(f"two upstream servers are named {upstream.name!r}")
        seen.add(upstream.name)


def parse_http_address(text: str) -> tuple[str, int]:
    """Parse ``HOST:PORT`` for ``--http``; only loopback hosts are accepted (port 0 = any free)."""
    host, sep, port_text = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host:
        raise ProxyError(f"--http value {text!r} must look like 127.0.0.1:PORT")
    if host not in _LOOPBACK_HOSTS:
        raise ProxyError(f"--http value {text!r}: the proxy only binds to loopback (127.0.0.1)")
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ProxyError(f"--http value {text!r}: port {port_text!r} is not a number 0-65535")
    return ("127.0.0.1" if host == "localhost" else host), int(port_text)


#: Stands for the workspace directory in an upstream's command, arguments, env values and cwd.
WORKSPACE_PLACEHOLDER = "{workspace}"


def in_workspace(upstreams: Sequence[UpstreamSpec], workspace: Path | None) -> list[UpstreamSpec]:
    """The upstreams as they start on ``workspace``: ``{workspace}`` substituted, and each
    process started in the workspace (a relative ``cwd`` resolves inside it), so a relative
    path such as ``--repository .`` means the workspace, not the caller's directory.

    Without a workspace a ``{workspace}`` placeholder is an error naming the server.
    """
    placed: list[UpstreamSpec] = []
    for upstream in upstreams:
        if not isinstance(upstream, StdioUpstream):
            placed.append(upstream)
            continue
        words = [upstream.command, *upstream.args, *upstream.env.values(), upstream.cwd or ""]
        if workspace is None:
            if any(WORKSPACE_PLACEHOLDER in word for word in words):
                raise ProxyError(
                    f"upstream {upstream.name!r}: {WORKSPACE_PLACEHOLDER} is used, but there is "
                    "no workspace (give --workspace DIR)"
                )
            placed.append(upstream)
            continue
        root = str(workspace.resolve())

        def sub(text: str, root: str = root) -> str:
            return text.replace(WORKSPACE_PLACEHOLDER, root)

        cwd = Path(sub(upstream.cwd)) if upstream.cwd else Path(root)
        placed.append(
            StdioUpstream(
                name=upstream.name,
                command=sub(upstream.command),
                args=tuple(sub(arg) for arg in upstream.args),
                env={key: sub(value) for key, value in upstream.env.items()},
                cwd=str(cwd if cwd.is_absolute() else Path(root) / cwd),
            )
        )
    return placed
