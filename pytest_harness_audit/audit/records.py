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
from collections.abc import Callable, Mapping
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


def _id_batch() -> Callable[[], str]:
    """The ``__next__`` of 512 random 8-hex ids cut from one ``os.urandom`` call."""
    text = os.urandom(2048).hex()
    return iter([text[start : start + 8] for start in range(0, len(text), 8)]).__next__


_EXHAUSTED: Final[Callable[[], str]] = iter(()).__next__
_next_id = _EXHAUSTED


def _refill_ids() -> str:
    global _next_id
    _next_id = _id_batch()
    return _next_id()


def _forget_ids() -> None:
    # A forked child must not hand out the ids its parent is also handing out.
    global _next_id
    _next_id = _EXHAUSTED


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_ids)


def new_record_hex() -> str:
    """A fresh random 8-hex id (``audit:<id>`` / ``r6:<id>``)."""
    try:
        return _next_id()
    except StopIteration:
        return _refill_ids()


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

    ``complete()`` fills those in for a given index, previous r6 id and previous line hash (known
    only under the chain lock) and returns the line; ``record`` is then the same record as a dict.
    """

    __slots__ = ("_body_a", "_body_b", "_body_c", "_role", "_session_id", "r6_id", "record")

    def __init__(
        self,
        r6_id: str,
        bodies: tuple[str, str, str],
        record: dict[str, Any],
        role: dict[str, Any],
        session_id: str,
    ) -> None:
        self.r6_id = r6_id
        self._body_a, self._body_b, self._body_c = bodies
        #: The record as a dict, equal to the parsed line once ``complete()`` has run.
        self.record = record
        self._role = role
        self._session_id = session_id

    def complete(self, index: int, prev_r6_id: str | None, prev_hash: str) -> bytes:
        """Fill in the chain position and return the line as UTF-8 bytes, without its newline."""
        session_id = self._session_id
        record = self.record
        self._role["actionIndex"] = index
        # The placeholders set by ``prepare`` keep these keys in their places.
        if prev_r6_id:
            record["reference"] = {
                "sessionId": session_id,
                "prevR6Id": prev_r6_id,
                "chainPosition": index,
            }
            text = (
                f'{self._body_a}{index}{self._body_b},"prevR6Id":"{prev_r6_id}",'
                f'"chainPosition":{index}{self._body_c}{index},"prevRecordHash":"{prev_hash}"}}}}'
            )
        else:
            record["reference"] = {"sessionId": session_id, "chainPosition": index}
            text = (
                f'{self._body_a}{index}{self._body_b},"chainPosition":{index}'
                f'{self._body_c}{index},"prevRecordHash":"{prev_hash}"}}}}'
            )
        record["provenance"] = {
            "sessionId": session_id,
            "actionIndex": index,
            "prevRecordHash": prev_hash,
        }
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates can only occur inside JSON strings; ``\\udXXX`` is their escape.
            return text.encode("utf-8", "backslashreplace")


class RecordBuilder:
    """Builds records for one session (its id, Soft LCT and default agent are fixed)."""

    __slots__ = (
        "_agent_id",
        "_audit_level",
        "_lct",
        "_role_tail",
        "_rules_head",
        "_session_id",
        "_sid_json",
        "context",
    )

    def __init__(
        self, session_id: str, lct_token: str, audit_level: str, agent_id: str | None
    ) -> None:
        if audit_level not in AUDIT_LEVELS:
            raise AuditError(f"audit level must be one of {AUDIT_LEVELS}, got {audit_level!r}")
        self._session_id = session_id
        self._lct = lct_token
        self._sid_json = json_string(session_id)
        self._role_tail = f',"bindingType":"{BINDING_TYPE}","lct":{json_string(lct_token)}}},'
        self._rules_head = f',"rules":{{"auditLevel":"{audit_level}","constraints":['
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
            enc = json_string
            level = self._audit_level
            try:
                rid = _next_id()
            except StopIteration:
                rid = _refill_ids()
            r6_id = "r6:" + rid
            stamp = timestamp or utc_timestamp()
            tool = draft.tool
            category = draft.category
            tool_j = enc(tool)
            category_j = enc(category)
            kind = draft.kind
            record: dict[str, Any] = {
                "recordId": "audit:" + rid,
                "r6RequestId": r6_id,
                "timestamp": stamp,
                "kind": kind,
                "tool": tool,
                "category": category,
            }
            request: dict[str, Any] = {"toolName": tool, "category": category}
            target_j = targets_j = ""
            if level != "minimal":
                raw = draft.target
                if raw is not None:
                    target = raw if len(raw) <= DISPLAY_LIMIT else raw[:DISPLAY_LIMIT] + "…"
                    record["target"] = request["target"] = target
                    target_j = ',"target":' + enc(target)
                targets = draft.targets
                if targets and (len(targets) > 1 or targets[0] != raw):
                    shown = [display_target(item) or "" for item in targets]
                    request["targets"] = shown
                    targets_j = ',"targets":[' + ",".join(map(enc, shown)) + "]"
            params = draft.params
            in_hash = input_hash(params)
            request["inputHash"] = in_hash
            params_j = ""
            if level == "verbose":
                params_j = strict_json(params, field="params")
                request["params"] = json.loads(params_j)
                params_j = ',"params":' + params_j
            constraints = draft.constraints
            record["rules"] = {"auditLevel": level, "constraints": list(constraints)}
            agent_id = draft.agent_id
            if agent_id is None:
                agent_id = self._agent_id
            session_id = self._session_id
            if agent_id is None:
                agent_j = ""
                role = {
                    "sessionId": session_id,
                    "actionIndex": 0,
                    "bindingType": BINDING_TYPE,
                    "lct": self._lct,
                }
            else:
                agent_j = ',"agentId":' + enc(agent_id)
                role = {
                    "sessionId": session_id,
                    "agentId": agent_id,
                    "actionIndex": 0,
                    "bindingType": BINDING_TYPE,
                    "lct": self._lct,
                }
            record["role"] = role
            record["request"] = request
            record["reference"] = None
            approval = bool(draft.approval_required)
            record["resource"] = {"approvalRequired": approval}
            status = draft.status
            result: dict[str, Any] = {"status": status}
            result_j = f'"result":{{"status":"{status}"'
            output = draft.output
            if output is not None:
                out_hash = output_hash(output)
                result["outputHash"] = out_hash
                result_j += f',"outputHash":"{out_hash}"'
            error = draft.error_message
            if error is not None:
                result["errorMessage"] = error
                result_j += ',"errorMessage":' + enc(error)
            duration = draft.duration_ms
            if duration is not None:
                result["durationMs"] = duration
                result_j += ',"durationMs":' + repr(duration)
            record["result"] = result
            extra = draft.extra
            if extra:
                extra_j = ""
                for key in sorted(extra):
                    value_j = strict_json(extra[key], field=f"extra.{key}")
                    record[key] = json.loads(value_j)
                    extra_j += f",{enc(key)}:{value_j}"
                result_j += "}" + extra_j
            else:
                result_j += "}"
            record["provenance"] = None
            kind_j = _KIND_JSON.get(kind) or enc(kind)
            sid_j = self._sid_json
            body_a = (
                f'{{"recordId":"audit:{rid}","r6RequestId":"{r6_id}","timestamp":"{stamp}",'
                f'"kind":{kind_j},"tool":{tool_j},"category":{category_j}{target_j}'
                f"{self._rules_head}{','.join(map(enc, constraints))}]}},"
                f'"role":{{"sessionId":{sid_j}{agent_j},"actionIndex":'
            )
            body_b = (
                f'{self._role_tail}"request":{{"toolName":{tool_j},"category":{category_j}'
                f'{target_j}{targets_j},"inputHash":"{in_hash}"{params_j}}},'
                f'"reference":{{"sessionId":{sid_j}'
            )
            body_c = (
                f'}},"resource":{{"approvalRequired":{"true" if approval else "false"}}},'
                f'{result_j},"provenance":{{"sessionId":{sid_j},"actionIndex":'
            )
            return PreparedRecord(r6_id, (body_a, body_b, body_c), record, role, session_id)
        except TypeError:
            validate_draft(draft)  # names the offending field
            raise
