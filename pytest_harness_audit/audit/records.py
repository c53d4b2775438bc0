"""R6 records: the draft a caller hands in, and the exact line and dict the chain stores.

A record is one compact JSON object per line, in this key order::

    recordId, r6RequestId, timestamp, kind, tool, category, target?,
    rules {auditLevel, constraints},
    role {sessionId, agentId?, actionIndex, bindingType, lct},
    request {toolName, category, target?, targets?, inputHash, params?},
    reference {sessionId, prevR6Id?, chainPosition},
    resource {approvalRequired},
    result {status, outputHash?, errorMessage?, durationMs?},
    <extra keys, sorted>,
    provenance {sessionId, actionIndex, prevRecordHash}

Keys marked ``?`` are left out when there is nothing to say. ``provenance`` is always last and
ends the line — verification relies on that. The line is assembled from pre-encoded pieces
rather than by a generic JSON encoder: appends are on the hot path of every tool call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_harness_audit.audit.canonical import (
    input_hash,
    is_finite_number,
    json_string,
    output_hash,
    strict_json,
)
from pytest_harness_audit.audit.clock import utc_timestamp
from pytest_harness_audit.audit.errors import AuditError
from pytest_harness_audit.audit.lct import BINDING_TYPE

AUDIT_LEVELS: Final = ("minimal", "standard", "verbose")
STATUSES: Final = ("success", "error", "blocked")
KINDS: Final = ("call", "escalation", "lift", "alert", "note", "message")
DISPLAY_LIMIT: Final = 80

#: Top-level keys of a record; ``extra`` may not reuse them.
CORE_KEYS: Final = frozenset(
    {
        "recordId",
        "r6RequestId",
        "timestamp",
        "kind",
        "tool",
        "category",
        "target",
        "rules",
        "role",
        "request",
        "reference",
        "resource",
        "result",
        "provenance",
    }
)


def display_target(target: str | None) -> str | None:
    """The display form of a target: the first 80 characters and ``…`` when longer."""
    if target is None or len(target) <= DISPLAY_LIMIT:
        return target
    return target[:DISPLAY_LIMIT] + "…"


@dataclass(frozen=True)
class RecordDraft:
    """Everything about one call (or event) that goes into its R6 record.

    ``target`` is the full primary target (the record keeps its display form), ``targets`` all
    targets, ``params`` the call parameters (hashed into ``inputHash``; kept whole at audit level
    ``verbose``), ``constraints`` the policy decision tags (``policy:deny``, ``rule:<id>``,
    ``enforced:false`` …), ``output`` the call's output (hashed into ``outputHash``; ``None`` means
    no output), and ``extra`` additional top-level keys (``alerts``, ``decision``, ``immune`` …).
    """

    tool: str
    category: str
    target: str | None = None
    targets: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    constraints: tuple[str, ...] = ()
    status: str = "success"
    output: Any = None
    error_message: str | None = None
    duration_ms: float | None = None
    agent_id: str | None = None
    approval_required: bool = False
    kind: str = "call"
    extra: Mapping[str, Any] | None = None


class _IdSource:
    """Random 8-hex ids drawn from a buffer of ``os.urandom`` bytes (refreshed after fork)."""

    __slots__ = ("_buffer", "_position")

    def __init__(self) -> None:
        self._buffer = ""
        self._position = 0

    def reset(self) -> None:
        self._buffer = ""
        self._position = 0

    def next_hex8(self) -> str:
        position = self._position
        if position >= len(self._buffer):
            self._buffer = os.urandom(2048).hex()
            position = 0
        self._position = position + 8
        return self._buffer[position : position + 8]


_ids = _IdSource()
_next_hex8 = _ids.next_hex8
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_ids.reset)


def new_record_hex() -> str:
    """A fresh random 8-hex id (``audit:<id>`` / ``r6:<id>``)."""
    return _ids.next_hex8()


def _require_str(value: object, name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise AuditError(f"record field {name!r} must be a string, got {value!r}")


def validate_draft(draft: RecordDraft) -> None:
    """Raise ``AuditError`` naming the first invalid field of ``draft``."""
    if not isinstance(draft, RecordDraft):
        raise AuditError(f"append() takes a RecordDraft, got {type(draft).__name__}")
    _require_str(draft.tool, "tool")
    if not draft.tool:
        raise AuditError("record field 'tool' must not be empty")
    _require_str(draft.category, "category")
    _require_str(draft.target, "target", optional=True)
    _require_str(draft.error_message, "error_message", optional=True)
    _require_str(draft.agent_id, "agent_id", optional=True)
    if draft.status not in STATUSES:
        raise AuditError(f"record field 'status' must be one of {STATUSES}, got {draft.status!r}")
    if not isinstance(draft.kind, str) or not draft.kind.isidentifier():
        raise AuditError(f"record field 'kind' must be a word such as 'call', got {draft.kind!r}")
    for name, values in (("targets", draft.targets), ("constraints", draft.constraints)):
        if not isinstance(values, (tuple, list)) or not all(isinstance(i, str) for i in values):
            raise AuditError(f"record field {name!r} must be a tuple of strings, got {values!r}")
    if not isinstance(draft.params, Mapping):
        raise AuditError(f"record field 'params' must be a mapping, got {draft.params!r}")
    if draft.duration_ms is not None and not is_finite_number(draft.duration_ms):
        raise AuditError(
            f"record field 'duration_ms' must be a finite number, got {draft.duration_ms!r}"
        )
    if draft.extra is not None:
        if not isinstance(draft.extra, Mapping):
            raise AuditError(f"record field 'extra' must be a mapping, got {draft.extra!r}")
        for key in draft.extra:
            if not isinstance(key, str) or key in CORE_KEYS:
                raise AuditError(f"record field 'extra': key {key!r} is reserved or not a string")


_STATUS_SET: Final = frozenset(STATUSES)
_KIND_JSON: Final = {kind: f'"{kind}"' for kind in KINDS}
_NUMBER_TYPES: Final = (int, float)
_INF: Final = float("inf")


def _needs_full_validation(draft: RecordDraft) -> bool:
    """Cheap screen of what JSON encoding would not catch by itself (wrong types raise there)."""
    if type(draft) is not RecordDraft or not draft.tool or draft.status not in _STATUS_SET:
        return True
    if draft.kind not in _KIND_JSON or type(draft.targets) is not tuple:
        return True
    if type(draft.constraints) is not tuple or type(draft.params) is not dict:
        return True
    duration = draft.duration_ms
    if duration is not None and (
        type(duration) not in _NUMBER_TYPES or duration != duration or abs(duration) == _INF
    ):
        return True
    extra = draft.extra
    return extra is not None and (type(extra) is not dict or not CORE_KEYS.isdisjoint(extra))


class PreparedRecord:
    """A record built up to the parts that depend on the chain position.

    ``line()`` completes it for a given index, previous r6 id and previous line hash (known only
    under the chain lock); ``record()`` returns the same record as a dict.
    """

    __slots__ = ("_body_a", "_body_b", "_body_c", "_builder", "_draft", "_fields", "r6_id")

    def __init__(
        self,
        builder: RecordBuilder,
        draft: RecordDraft,
        r6_id: str,
        bodies: tuple[str, str, str],
        fields: tuple[Any, ...],
    ) -> None:
        self._builder = builder
        self._draft = draft
        self.r6_id = r6_id
        self._body_a, self._body_b, self._body_c = bodies
        self._fields = fields

    def line(self, index: int, prev_r6_id: str | None, prev_hash: str) -> bytes:
        """The complete line as UTF-8 bytes, without its newline."""
        prev_ref = f',"prevR6Id":"{prev_r6_id}"' if prev_r6_id else ""
        text = (
            f'{self._body_a}{index}{self._body_b}{prev_ref},"chainPosition":{index}'
            f'{self._body_c}{index},"prevRecordHash":"{prev_hash}"}}}}'
        )
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates can only occur inside JSON strings; ``\\udXXX`` is their escape.
            return text.encode("utf-8", "backslashreplace")

    def record(self, index: int, prev_r6_id: str | None, prev_hash: str) -> dict[str, Any]:
        """The record as a dict, equal to the parsed line (same keys, same order)."""
        draft = self._draft
        stamp, target, shown, in_hash, out_hash, duration, agent_id, params, extra = self._fields
        session_id, lct, level = self._builder.context
        r6_id = self.r6_id
        tool = draft.tool
        category = draft.category
        record: dict[str, Any] = {
            "recordId": "audit:" + r6_id[3:],
            "r6RequestId": r6_id,
            "timestamp": stamp,
            "kind": draft.kind,
            "tool": tool,
            "category": category,
        }
        request: dict[str, Any] = {"toolName": tool, "category": category}
        if target is not None:
            record["target"] = target
            request["target"] = target
        if shown is not None:
            request["targets"] = shown
        request["inputHash"] = in_hash
        if params is not None:
            request["params"] = params
        record["rules"] = {"auditLevel": level, "constraints": list(draft.constraints)}
        if agent_id is None:
            record["role"] = {
                "sessionId": session_id,
                "actionIndex": index,
                "bindingType": BINDING_TYPE,
                "lct": lct,
            }
        else:
            record["role"] = {
                "sessionId": session_id,
                "agentId": agent_id,
                "actionIndex": index,
                "bindingType": BINDING_TYPE,
                "lct": lct,
            }
        record["request"] = request
        if prev_r6_id:
            record["reference"] = {
                "sessionId": session_id,
                "prevR6Id": prev_r6_id,
                "chainPosition": index,
            }
        else:
            record["reference"] = {"sessionId": session_id, "chainPosition": index}
        record["resource"] = {"approvalRequired": bool(draft.approval_required)}
        result: dict[str, Any] = {"status": draft.status}
        if out_hash is not None:
            result["outputHash"] = out_hash
        if draft.error_message is not None:
            result["errorMessage"] = draft.error_message
        if duration is not None:
            result["durationMs"] = duration
        record["result"] = result
        if extra:
            record.update(extra)
        record["provenance"] = {
            "sessionId": session_id,
            "actionIndex": index,
            "prevRecordHash": prev_hash,
        }
        return record


class RecordBuilder:
    """Builds records for one session (its id, Soft LCT and default agent are fixed)."""

    __slots__ = ("_agent_id", "_audit_level", "_role_tail", "_sid_json", "context")

    def __init__(
        self, session_id: str, lct_token: str, audit_level: str, agent_id: str | None
    ) -> None:
        if audit_level not in AUDIT_LEVELS:
            raise AuditError(f"audit level must be one of {AUDIT_LEVELS}, got {audit_level!r}")
        self._sid_json = json_string(session_id)
        self._role_tail = f',"bindingType":"{BINDING_TYPE}","lct":{json_string(lct_token)}}},'
        self._audit_level = audit_level
        self._agent_id = agent_id
        #: ``(session id, Soft LCT token, audit level)`` shared by every record.
        self.context = (session_id, lct_token, audit_level)

    @property
    def audit_level(self) -> str:
        """The level applied to every record of this builder."""
        return self._audit_level

    def prepare(self, draft: RecordDraft, *, timestamp: str | None = None) -> PreparedRecord:
        """Validate ``draft`` and build everything that does not depend on the chain position."""
        if _needs_full_validation(draft):
            validate_draft(draft)
        try:
            return self._prepare(draft, timestamp)
        except TypeError:
            validate_draft(draft)  # names the offending field
            raise

    def _prepare(self, draft: RecordDraft, timestamp: str | None) -> PreparedRecord:
        enc = json_string
        level = self._audit_level
        rid = _next_hex8()
        stamp = timestamp or utc_timestamp()
        tool_j = enc(draft.tool)
        category_j = enc(draft.category)
        agent_id = draft.agent_id
        if agent_id is None:
            agent_id = self._agent_id

        target = shown = None
        target_j = targets_j = ""
        if level != "minimal":
            raw = draft.target
            if raw is not None:
                target = raw if len(raw) <= DISPLAY_LIMIT else raw[:DISPLAY_LIMIT] + "…"
                target_j = ',"target":' + enc(target)
            targets = draft.targets
            if targets and (len(targets) > 1 or targets[0] != raw):
                shown = [display_target(item) or "" for item in targets]
                targets_j = ',"targets":[' + ",".join(map(enc, shown)) + "]"
        in_hash = input_hash(draft.params)
        params = None
        params_j = ""
        if level == "verbose":
            params_j = strict_json(draft.params, field="params")
            params = json.loads(params_j)
            params_j = ',"params":' + params_j
        out_hash = None
        out_j = ""
        if draft.output is not None:
            out_hash = output_hash(draft.output)
            out_j = ',"outputHash":"' + out_hash + '"'
        error = draft.error_message
        error_j = "" if error is None else ',"errorMessage":' + enc(error)
        duration = draft.duration_ms
        duration_j = ""
        if duration is not None:
            duration_j = ',"durationMs":' + repr(duration)
        extra = None
        extra_j = ""
        if draft.extra:
            extra = {}
            for key in sorted(draft.extra):
                value_j = strict_json(draft.extra[key], field=f"extra.{key}")
                extra[key] = json.loads(value_j)
                extra_j += f",{enc(key)}:{value_j}"
        agent_j = "" if agent_id is None else ',"agentId":' + enc(agent_id)
        kind_j = _KIND_JSON.get(draft.kind) or enc(draft.kind)
        sid_j = self._sid_json
        body_a = (
            f'{{"recordId":"audit:{rid}","r6RequestId":"r6:{rid}","timestamp":"{stamp}",'
            f'"kind":{kind_j},"tool":{tool_j},"category":{category_j}{target_j},'
            f'"rules":{{"auditLevel":"{level}","constraints":['
            f"{','.join(map(enc, draft.constraints))}]}},"
            f'"role":{{"sessionId":{sid_j}{agent_j},"actionIndex":'
        )
        body_b = (
            f'{self._role_tail}"request":{{"toolName":{tool_j},"category":{category_j}'
            f'{target_j}{targets_j},"inputHash":"{in_hash}"{params_j}}},'
            f'"reference":{{"sessionId":{sid_j}'
        )
        approval_j = "true" if draft.approval_required else "false"
        body_c = (
            f'}},"resource":{{"approvalRequired":{approval_j}}},'
            f'"result":{{"status":"{draft.status}"{out_j}{error_j}{duration_j}}}{extra_j},'
            f'"provenance":{{"sessionId":{sid_j},"actionIndex":'
        )
        fields = (stamp, target, shown, in_hash, out_hash, duration, agent_id, params, extra)
        return PreparedRecord(self, draft, "r6:" + rid, (body_a, body_b, body_c), fields)
