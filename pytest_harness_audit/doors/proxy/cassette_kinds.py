"""The kinds of upstream exchange a cassette holds, and what each is matched on.

Every recorded request is keyed by its ``method``, a ``name`` (the tool name, resource URI,
prompt name or completion reference; empty for listings) and its ``arguments`` (tool or prompt
arguments, a listing's ``cursor``, a completion's ``argument`` and ``context``). In the YAML
the name is written under the key its kind calls it: ``tool``, ``uri``, ``prompt`` or ``ref``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import BaseModel


@dataclass(frozen=True)
class Kind:
    """One method a cassette records and replays."""

    method: str
    #: The YAML key of the request's name; ``None`` for listings, which have none.
    key: str | None
    result_type: type[BaseModel]


KINDS: dict[str, Kind] = {
    kind.method: kind
    for kind in (
        Kind("tools/call", "tool", types.CallToolResult),
        Kind("resources/list", None, types.ListResourcesResult),
        Kind("resources/templates/list", None, types.ListResourceTemplatesResult),
        Kind("resources/read", "uri", types.ReadResourceResult),
        Kind("prompts/list", None, types.ListPromptsResult),
        Kind("prompts/get", "prompt", types.GetPromptResult),
        Kind("completion/complete", "ref", types.CompleteResult),
    )
}
#: Requests an upstream sends to the client during a call; replay asks the client again.
CLIENT_REQUESTS: dict[str, type[BaseModel]] = {
    "sampling/createMessage": types.CreateMessageRequest,
    "elicitation/create": types.ElicitRequest,
    "roots/list": types.ListRootsRequest,
}
#: Acknowledgements a replaying upstream gives without a recording (nothing to replay).
ACKNOWLEDGED = frozenset({"resources/subscribe", "resources/unsubscribe", "logging/setLevel"})
_REF_TYPES = {"ref/prompt": "name", "ref/resource": "uri"}


def dump(model: BaseModel | None) -> dict[str, Any]:
    """A model's JSON form, by alias, without unset optional fields."""
    if model is None:
        return {}
    dumped: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def request_key(request: BaseModel) -> tuple[str, str, dict[str, Any]] | None:
    """``(method, name, arguments)`` of a non-tool request a cassette holds, else ``None``."""
    method = getattr(request, "method", None)
    if method not in KINDS or method == "tools/call":
        return None
    params: Any = getattr(request, "params", None)
    kind = KINDS[method]
    if kind.key is None:
        cursor = getattr(params, "cursor", None)
        return method, "", {"cursor": cursor} if cursor else {}
    if isinstance(params, types.ReadResourceRequestParams):
        return method, str(params.uri), {}
    if isinstance(params, types.GetPromptRequestParams):
        return method, params.name, dict(params.arguments or {})
    assert isinstance(params, types.CompleteRequestParams)
    arguments: dict[str, Any] = {"argument": dump(params.argument)}
    if params.context is not None:
        arguments["context"] = dump(params.context)
    return method, ref_name(dump(params.ref)), arguments


def ref_name(ref: dict[str, Any]) -> str:
    """A completion reference as one string: ``ref/prompt:<name>`` or ``ref/resource:<uri>``."""
    kind = str(ref.get("type", ""))
    return f"{kind}:{ref.get(_REF_TYPES.get(kind, 'name'), '')}"


def ref_mapping(name: str) -> dict[str, str]:
    """The reference mapping of :func:`ref_name`'s string."""
    kind, _, value = name.partition(":")
    return {"type": kind, _REF_TYPES.get(kind, "name"): value}


def is_ref(value: object) -> bool:
    """True for a mapping that is a completion reference (``ref/prompt`` or ``ref/resource``)."""
    if not isinstance(value, dict) or value.get("type") not in _REF_TYPES:
        return False
    return isinstance(value.get(_REF_TYPES[value["type"]]), str)
