"""Tool pinning: a rug pull (an upstream tool whose description or schema changes) is an alert.

At the first ``tools/list`` of a session the proxy pins each upstream tool: the SHA-256 of the
canonical JSON of its name, description and input schema. A later listing in which a tool's
description or schema differs, or a tool appears or disappears, is recorded as an ``alert``
record ``tool_changed`` (which tool, which field, old and new hashes, a short unified diff of
the description); the verdict is WARN, FAIL under the ``strict`` preset. Each change alerts
once: the listing that carried it becomes the new baseline.

A pin file (``harness-audit proxy --pin FILE``) is the committed baseline, reviewable JSON or
YAML::

    {"servers": {"<server>": {"tools": {"<tool>": {"sha256": "…", "description": "…"}}}}}

Benign look-alikes do not alert: tools listed in another order, schema keys in another order,
and descriptions that differ only in whitespace (runs of whitespace count as one space). Two
tools listed under one name are pinned together, so a second copy cannot hide behind the first.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types

from pytest_harness_audit.doors.proxy.errors import ProxyError

ALERT = "tool_changed"
_DIFF_LINES = 12


def normalized_description(text: str | None) -> str:
    """The description as hashed: whitespace runs collapsed to one space, ends stripped."""
    return " ".join((text or "").split())


def tool_digest(tool: types.Tool) -> str:
    """SHA-256 of the canonical JSON of the tool's name, description and input schema."""
    body = {
        "name": tool.name,
        "description": normalized_description(tool.description),
        "inputSchema": tool.input_schema,
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Pin:
    """One pinned tool: its digest and (for the diff) its description."""

    sha256: str
    description: str

    @classmethod
    def of(cls, tool: types.Tool) -> Pin:
        """The pin of a listed tool."""
        return cls(tool_digest(tool), normalized_description(tool.description))

    def and_then(self, other: Pin) -> Pin:
        """One pin for two tools listed under one name (each copy counts, in order)."""
        digest = hashlib.sha256(f"{self.sha256}+{other.sha256}".encode()).hexdigest()
        return Pin(digest, f"{self.description} | {other.description}")


@dataclass(frozen=True)
class ToolChange:
    """A difference between a listing and the pins: ``change`` is changed, added or removed."""

    server: str
    tool: str
    change: str
    fields: tuple[str, ...] = ()
    old_sha256: str | None = None
    new_sha256: str | None = None
    diff: str = ""

    def summary(self) -> str:
        """One line: ``tool 'search' of server 'git' changed (description)``."""
        what = f" ({', '.join(self.fields)})" if self.fields else ""
        return f"tool {self.tool!r} of server {self.server!r} {self.change}{what}"

    def to_dict(self) -> dict[str, Any]:
        """The record form (``toolChanged``)."""
        data: dict[str, Any] = {"server": self.server, "tool": self.tool, "change": self.change}
        if self.fields:
            data["fields"] = list(self.fields)
        if self.old_sha256 is not None:
            data["oldSha256"] = self.old_sha256
        if self.new_sha256 is not None:
            data["newSha256"] = self.new_sha256
        if self.diff:
            data["diff"] = self.diff
        return data


def _diff(old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.split(". "), new.split(". "), "pinned", "listed", n=1, lineterm=""
    )
    return "\n".join(list(lines)[:_DIFF_LINES])


@dataclass
class ToolPins:
    """The pinned tools per server; :meth:`check` compares a listing and moves the baseline."""

    servers: dict[str, dict[str, Pin]] = field(default_factory=dict)

    def check(self, server: str, tools: Sequence[types.Tool]) -> list[ToolChange]:
        """The changes of ``server``'s listing against its pins (none at its first listing)."""
        listed: dict[str, Pin] = {}
        for tool in tools:
            known = listed.get(tool.name)
            listed[tool.name] = Pin.of(tool) if known is None else known.and_then(Pin.of(tool))
        pinned = self.servers.get(server)
        self.servers[server] = listed
        if pinned is None:
            return []
        changes: list[ToolChange] = []
        for name in sorted(pinned.keys() - listed.keys()):
            changes.append(ToolChange(server, name, "removed", old_sha256=pinned[name].sha256))
        for name in sorted(listed.keys() - pinned.keys()):
            changes.append(ToolChange(server, name, "added", new_sha256=listed[name].sha256))
        for name in sorted(pinned.keys() & listed.keys()):
            old, new = pinned[name], listed[name]
            if old.sha256 == new.sha256:
                continue
            described = old.description != new.description
            fields = ("description",) if described else ("inputSchema",)
            diff = _diff(old.description, new.description) if described else ""
            changes.append(
                ToolChange(server, name, "changed", fields, old.sha256, new.sha256, diff)
            )
        return changes

    def to_document(self) -> dict[str, Any]:
        """The pin file's content."""
        return {
            "servers": {
                server: {
                    "tools": {
                        name: {"sha256": pin.sha256, "description": pin.description}
                        for name, pin in sorted(tools.items())
                    }
                }
                for server, tools in sorted(self.servers.items())
            }
        }

    def write(self, path: Path) -> None:
        """Write the pins as JSON (YAML when the name ends in ``.yaml``/``.yml``)."""
        document = self.to_document()
        if path.suffix in (".yaml", ".yml"):
            import yaml

            text = yaml.safe_dump(document, sort_keys=True, allow_unicode=True, width=100)
        else:
            text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> ToolPins:
        """The pins of a pin file; ProxyError (one line naming file and field) when malformed."""
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ProxyError(f"--pin {path}: cannot read: {exc.strerror or exc}") from None
        try:
            if path.suffix in (".yaml", ".yml"):
                import yaml

                data = yaml.safe_load(text)
            else:
                data = json.loads(text)
        except Exception as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ProxyError(f"--pin {path}: not valid JSON/YAML: {first}") from None
        return cls(_servers(path, data))


def _servers(path: Path, data: Any) -> dict[str, dict[str, Pin]]:
    servers = data.get("servers") if isinstance(data, Mapping) else None
    if not isinstance(servers, Mapping):
        raise ProxyError(f"--pin {path}: expected an object with a 'servers' object")
    result: dict[str, dict[str, Pin]] = {}
    for server, entry in servers.items():
        tools = entry.get("tools") if isinstance(entry, Mapping) else None
        if not isinstance(tools, Mapping):
            raise ProxyError(f"--pin {path}: servers.{server}.tools must be an object")
        pins: dict[str, Pin] = {}
        for name, pin in tools.items():
            where = f"servers.{server}.tools.{name}"
            if not isinstance(pin, Mapping) or not isinstance(pin.get("sha256"), str):
                raise ProxyError(f"--pin {path}: {where}.sha256 must be a string")
            description = pin.get("description", "")
            if not isinstance(description, str):
                raise ProxyError(f"--pin {path}: {where}.description must be a string")
            pins[str(name)] = Pin(pin["sha256"], normalized_description(description))
        result[str(server)] = pins
    return result


def check_pin_servers(path: Path, pins: ToolPins, names: Sequence[str]) -> None:
    """ProxyError when the pin file is for other servers than the proxy's upstreams."""
    pinned = sorted(pins.servers)
    if names and pinned != sorted(names):
        raise ProxyError(
            f"--pin {path}: pins servers {', '.join(pinned) or '(none)'} "
            f"but the upstreams are {', '.join(sorted(names))}"
        )
