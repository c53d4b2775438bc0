"""Cassettes: the upstream exchanges of a proxy session as a reviewable YAML file.

A cassette holds, per upstream, what its handshake announced (server info, capabilities,
instructions) and its tool listing, then every ``tools/call`` in order with its arguments and
its result or MCP error. The workspace path is written as ``{workspace}`` and noted secrets as
``[secret:<fingerprint>]``, so a cassette can be committed and replayed in another checkout.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pytest_harness_audit.doors.proxy.errors import ProxyError

CASSETTE_VERSION = 1
#: What a recorded call is matched on by default.
DEFAULT_MATCH_ON = ("method", "tool", "arguments")
MATCH_FIELDS = frozenset({"method", "upstream", "tool", "arguments"})
#: How the workspace directory is written in a cassette.
WORKSPACE_TOKEN = "{workspace}"

Redactor = Callable[[object], object]


class CassetteError(ProxyError):
    """A cassette that is missing, does not parse or has the wrong shape (one line)."""


@dataclass
class Interaction:
    """One recorded ``tools/call``: the request and its result or MCP error."""

    upstream: str
    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    method: str = "tools/call"

    def to_dict(self) -> dict[str, Any]:
        """The YAML form."""
        data: dict[str, Any] = {
            "method": self.method,
            "upstream": self.upstream,
            "tool": self.tool,
            "arguments": self.arguments,
        }
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

    def save(self, path: Path, *, redact: Redactor, workspace: Path | None) -> None:
        """Write the cassette to ``path`` atomically, workspace and secrets replaced."""
        data = to_cassette_text(redact(self.to_dict()), workspace)
        text = yaml.dump(
            data, Dumper=_ReviewableDumper, sort_keys=False, allow_unicode=True, width=100
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)


class _ReviewableDumper(yaml.SafeDumper):
    """Writes multi-line strings (tool output) as literal blocks, line for line."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    if "\n" in value and all(line == line.rstrip() for line in value.split("\n")):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_ReviewableDumper.add_representer(str, _represent_text)


def load_cassette(path: Path) -> Cassette:
    """Read ``path``; ``CassetteError`` names the file and the problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CassetteError(f"cassette {path}: not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cassette {path}: cannot be read ({exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise CassetteError(f"cassette {path}: not valid YAML{line} ({problem})") from None
    return _parse(data, path)


def _parse(data: object, path: Path) -> Cassette:
    def bad(what: str) -> CassetteError:
        return CassetteError(f"cassette {path}: {what}")

    if not isinstance(data, Mapping):
        raise bad("expected a mapping with 'version', 'upstreams' and 'interactions'")
    if data.get("version") != CASSETTE_VERSION:
        raise bad(f"version must be {CASSETTE_VERSION}, got {data.get('version')!r}")
    cassette = Cassette()
    for index, entry in enumerate(_list(data, "upstreams", bad)):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise bad(f"upstreams[{index}] needs a 'name' string")
        caps, tools = entry.get("capabilities") or {}, entry.get("tools") or []
        if not isinstance(caps, Mapping) or not isinstance(tools, list):
            raise bad(f"upstreams[{index}]: 'capabilities' must be a mapping, 'tools' a list")
        cassette.upstreams[entry["name"]] = RecordedUpstream(
            name=entry["name"],
            server_info=entry.get("server_info"),
            capabilities=dict(caps),
            instructions=entry.get("instructions"),
            tools=list(tools),
        )
    for index, entry in enumerate(_list(data, "interactions", bad)):
        where = f"interactions[{index}]"
        if not isinstance(entry, Mapping):
            raise bad(f"{where} must be a mapping")
        for key in ("upstream", "tool"):
            if not isinstance(entry.get(key), str):
                raise bad(f"{where}.{key} must be a string, got {entry.get(key)!r}")
        if entry["upstream"] not in cassette.upstreams:
            raise bad(f"{where}.upstream {entry['upstream']!r} is not among 'upstreams'")
        arguments = entry.get("arguments") or {}
        result, error = entry.get("result"), entry.get("error")
        if not isinstance(arguments, Mapping):
            raise bad(f"{where}.arguments must be a mapping")
        if not isinstance(result, Mapping) and not isinstance(error, Mapping):
            raise bad(f"{where} needs a 'result' or an 'error' mapping")
        cassette.interactions.append(
            Interaction(
                upstream=entry["upstream"],
                tool=entry["tool"],
                arguments=dict(arguments),
                result=dict(result) if isinstance(result, Mapping) else None,
                error=dict(error) if isinstance(error, Mapping) else None,
                method=str(entry.get("method", "tools/call")),
            )
        )
    return cassette


def _list(data: Mapping[str, Any], key: str, bad: Callable[[str], CassetteError]) -> list[Any]:
    value = data.get(key) or []
    if not isinstance(value, list):
        raise bad(f"'{key}' must be a list, got {type(value).__name__}")
    return value


def map_strings(value: object, change: Callable[[str], str]) -> object:
    """``value`` (strings, lists, mappings, recursively) with ``change`` applied to each
    string value (mapping keys are kept)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, Mapping):
        return {key: map_strings(item, change) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [map_strings(item, change) for item in value]
    return value


def _replace_strings(value: object, old: Sequence[str], new: str) -> object:
    def replace(text: str) -> str:
        for part in old:
            text = text.replace(part, new)
        return text

    return map_strings(value, replace)


def _workspace_forms(workspace: Path) -> list[str]:
    forms = {str(workspace), str(workspace.resolve())}
    return sorted(forms, key=len, reverse=True)


def to_cassette_text(value: Any, workspace: Path | None) -> Any:
    """``value`` with the workspace path written as ``{workspace}``."""
    if workspace is None:
        return value
    return _replace_strings(value, _workspace_forms(workspace), WORKSPACE_TOKEN)


def from_cassette_text(value: Any, workspace: Path | None) -> Any:
    """``value`` with ``{workspace}`` written as the workspace path."""
    if workspace is None:
        return value
    return _replace_strings(value, [WORKSPACE_TOKEN], str(workspace))


#: A matcher: ``(recorded, call) -> bool``; ``call`` has the fields of an ``Interaction``.
Matcher = Callable[[Interaction, Interaction], bool]


def make_matcher(match_on: Sequence[str] | Matcher) -> Matcher:
    """A matcher from field names (``method``, ``upstream``, ``tool``, ``arguments``) or a
    callable ``(recorded, call) -> bool`` used as it is."""
    if callable(match_on):
        return match_on
    fields = tuple(match_on)
    unknown = sorted(set(fields) - MATCH_FIELDS)
    if isinstance(match_on, str) or unknown:
        raise ProxyError(
            f"match_on {match_on!r}: expected field names among {sorted(MATCH_FIELDS)} "
            "or a callable (recorded, call) -> bool"
        )

    def matches(recorded: Interaction, call: Interaction) -> bool:
        return all(getattr(recorded, name) == getattr(call, name) for name in fields)

    return matches
