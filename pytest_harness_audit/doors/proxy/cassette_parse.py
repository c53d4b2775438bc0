"""Reading a cassette's YAML document: every problem is one line naming the entry and field."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ValidationError

from pytest_harness_audit.doors.proxy.cassette_kinds import (
    CLIENT_REQUESTS,
    KINDS,
    Kind,
    is_ref,
    ref_name,
)
from pytest_harness_audit.doors.proxy.cassette_model import (
    CASSETTE_VERSION,
    Cassette,
    CassetteError,
    Interaction,
    RecordedUpstream,
)

Bad = Callable[[str], CassetteError]
_UPSTREAM_FIELDS = frozenset({"name", "server_info", "capabilities", "instructions", "tools"})
_COMMON_FIELDS = frozenset(
    {"method", "upstream", "arguments", "result", "error", "client_requests"}
)


def parse_cassette(data: object, path: Path) -> Cassette:
    """The cassette in ``data`` (the loaded YAML of ``path``); ``CassetteError`` otherwise."""

    def bad(what: str) -> CassetteError:
        return CassetteError(f"cassette {path}: {what}")

    if not isinstance(data, Mapping):
        raise bad("expected a mapping with 'version', 'upstreams' and 'interactions'")
    if data.get("version") != CASSETTE_VERSION:
        raise bad(f"version must be {CASSETTE_VERSION}, got {data.get('version')!r}")
    cassette = Cassette()
    for index, entry in enumerate(_list(data, "upstreams", bad)):
        recorded = _upstream(entry, f"upstreams[{index}]", bad)
        cassette.upstreams[recorded.name] = recorded
    for index, entry in enumerate(_list(data, "interactions", bad)):
        where = f"interactions[{index}]"
        cassette.interactions.append(_interaction(entry, where, bad, cassette.upstreams))
    return cassette


def _upstream(entry: object, where: str, bad: Bad) -> RecordedUpstream:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
        raise bad(f"{where} needs a 'name' string")
    unknown = sorted(str(key) for key in entry if key not in _UPSTREAM_FIELDS)
    if unknown:
        raise bad(
            f"{where}.{unknown[0]}: not a field of an upstream "
            f"(expected {', '.join(sorted(_UPSTREAM_FIELDS))})"
        )
    caps, tools = entry.get("capabilities") or {}, entry.get("tools") or []
    if not isinstance(caps, Mapping) or not isinstance(tools, list):
        raise bad(f"{where}: 'capabilities' must be a mapping, 'tools' a list")
    _valid(types.ServerCapabilities, dict(caps), f"{where}.capabilities", bad)
    info = entry.get("server_info")
    if info is not None:
        _valid(types.Implementation, info, f"{where}.server_info", bad)
    instructions = entry.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise bad(f"{where}.instructions must be a string, got {instructions!r}")
    for position, tool in enumerate(tools):
        _valid(types.Tool, tool, f"{where}.tools[{position}]", bad)
    return RecordedUpstream(
        name=entry["name"],
        server_info=dict(info) if info is not None else None,
        capabilities=dict(caps),
        instructions=instructions,
        tools=list(tools),
    )


def _interaction(
    entry: object, where: str, bad: Bad, upstreams: Mapping[str, RecordedUpstream]
) -> Interaction:
    if not isinstance(entry, Mapping):
        raise bad(f"{where} must be a mapping")
    method = entry.get("method", "tools/call")
    kind = KINDS.get(method) if isinstance(method, str) else None
    if kind is None:
        raise bad(
            f"{where}.method {method!r} is not a kind a cassette holds "
            f"(expected one of {', '.join(KINDS)})"
        )
    allowed = _COMMON_FIELDS | ({kind.key} if kind.key else set())
    unknown = sorted(str(key) for key in entry if key not in allowed)
    if unknown:
        raise bad(
            f"{where}.{unknown[0]}: not a field of a {kind.method} entry "
            f"(expected {', '.join(sorted(allowed))})"
        )
    upstream = entry.get("upstream")
    if not isinstance(upstream, str):
        raise bad(f"{where}.upstream must be a string, got {upstream!r}")
    if upstream not in upstreams:
        raise bad(f"{where}.upstream {upstream!r} is not among 'upstreams'")
    name = _name(entry, kind, where, bad)
    arguments = entry.get("arguments") or {}
    if not isinstance(arguments, Mapping):
        raise bad(f"{where}.arguments must be a mapping")
    result, error = entry.get("result"), entry.get("error")
    if not isinstance(result, Mapping) and not isinstance(error, Mapping):
        raise bad(f"{where} needs a 'result' or an 'error' mapping")
    if isinstance(error, Mapping):
        _valid(types.ErrorData, dict(error), f"{where}.error", bad)
    else:
        _valid(kind.result_type, dict(result or {}), f"{where}.result", bad)
    return Interaction(
        upstream=upstream,
        name=name,
        arguments=dict(arguments),
        result=dict(result) if isinstance(result, Mapping) else None,
        error=dict(error) if isinstance(error, Mapping) else None,
        method=kind.method,
        client_requests=_client_requests(entry.get("client_requests"), where, bad),
    )


def _name(entry: Mapping[str, Any], kind: Kind, where: str, bad: Bad) -> str:
    if kind.key is None:
        return ""
    value = entry.get(kind.key)
    if kind.key == "ref":
        if not isinstance(value, dict) or not is_ref(value):
            raise bad(
                f"{where}.ref must be {{type: ref/prompt, name: …}} or "
                f"{{type: ref/resource, uri: …}}, got {value!r}"
            )
        return ref_name(dict(value))
    if not isinstance(value, str):
        raise bad(f"{where}.{kind.key} must be a string, got {value!r}")
    return value


def _client_requests(value: object, where: str, bad: Bad) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad(f"{where}.client_requests must be a list")
    requests: list[dict[str, Any]] = []
    for index, item in enumerate(value):
        at = f"{where}.client_requests[{index}]"
        method = item.get("method") if isinstance(item, Mapping) else None
        if not isinstance(item, Mapping) or method not in CLIENT_REQUESTS:
            raise bad(
                f"{at}.method {method!r} is not a request an upstream sends the client "
                f"(expected one of {', '.join(CLIENT_REQUESTS)})"
            )
        request = {"method": method, "params": item.get("params")}
        if request["params"] is None:
            request.pop("params")
        _valid(CLIENT_REQUESTS[method], request, f"{at}.params", bad)
        requests.append(dict(item))
    return requests


def _valid(model: type[BaseModel], value: object, where: str, bad: Bad) -> None:
    try:
        model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise bad(f"{where}{'.' + field if field else ''}: {first['msg']}") from None


def _list(data: Mapping[str, Any], key: str, bad: Bad) -> list[Any]:
    value = data.get(key) or []
    if not isinstance(value, list):
        raise bad(f"'{key}' must be a list, got {type(value).__name__}")
    return value
