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
ends the line — verification relies on that. The record is built as one dict with its keys
already in this order, and orjson writes the line from it in one call (``encode_record`` says
what happens to what orjson refuses).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

import orjson

from pytest_harness_audit.audit.canonical import (
    ORJSON_DEFAULT,
    ORJSON_OPTIONS,
    canonical_hash,
    is_finite_number,
    record_line,
    strict_json,
)
from pytest_harness_audit.audit.clock import utc_timestamp
from pytest_harness_audit.audit.draft import RecordDraft as RecordDraft
from pytest_harness_audit.audit.errors import AuditError
from pytest_harness_audit.audit.lct import BINDING_TYPE
from pytest_harness_audit.audit.record_ids import (
    PENDING_R6_ID,
    PENDING_RECORD_ID,
    record_id_at,
    record_id_key,
)

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


def _require_str(value: object, name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise AuditError(f"record field {name!r} must be a string, got {value!r}")


def validate_draft(draft: RecordDraft) -> None:
    """Raise ``AuditError`` naming the first invalid field of ``draft``."""
    if not isinstance(draft, RecordDraft):
        raise AuditError(f"append() takes a RecordDraft, got {type(draft).__name__}")
    # Read as ``Any``: the compiled build would check each field against its annotation on
    # reading it, and refuse a wrong type with a bare ``TypeError`` instead of naming it.
    fields: Any = draft
    _require_str(fields.tool, "tool")
    if not fields.tool:
        raise AuditError("record field 'tool' must not be empty")
    _require_str(fields.category, "category")
    _require_str(fields.target, "target", optional=True)
    _require_str(fields.error_message, "error_message", optional=True)
    _require_str(fields.agent_id, "agent_id", optional=True)
    if fields.status not in STATUSES:
        raise AuditError(f"record field 'status' must be one of {STATUSES}, got {fields.status!r}")
    if not isinstance(fields.kind, str) or not fields.kind.isidentifier():
        raise AuditError(f"record field 'kind' must be a word such as 'call', got {fields.kind!r}")
    for name, values in (("targets", fields.targets), ("constraints", fields.constraints)):
        if not isinstance(values, (tuple, list)) or not all(isinstance(i, str) for i in values):
            raise AuditError(f"record field {name!r} must be a tuple of strings, got {values!r}")
    if not isinstance(fields.params, Mapping):
        raise AuditError(f"record field 'params' must be a mapping, got {fields.params!r}")
    if fields.duration_ms is not None and not is_finite_number(fields.duration_ms):
        raise AuditError(
            f"record field 'duration_ms' must be a finite number, got {fields.duration_ms!r}"
        )
    if fields.extra is not None:
        if not isinstance(fields.extra, Mapping):
            raise AuditError(f"record field 'extra' must be a mapping, got {fields.extra!r}")
        for key in fields.extra:
            if not isinstance(key, str) or key in CORE_KEYS:
                raise AuditError(f"record field 'extra': key {key!r} is reserved or not a string")


_STATUS_SET: Final = frozenset(STATUSES)
_KIND_SET: Final = frozenset(KINDS)
_NUMBER_TYPES: Final = (int, float)
_OPTIONAL_TEXT: Final = (str, type(None))
_INF: Final = float("inf")
_join: Final = "".join
_dumps: Final = orjson.dumps


def complete_record(
    record: dict[str, Any], role: dict[str, Any], index: int, prev_r6_id: str | None, prev_hash: str
) -> bytes:
    """Fill in a prepared record's chain position and return its line (UTF-8, no newline).

    ``index``, the previous record's r6 id and the previous line's hash are known only under the
    chain lock; afterwards ``record`` equals the parsed line. (``AuditChain.append`` does the
    same inline.)
    """
    session_id = role["sessionId"]
    role["actionIndex"] = index
    rid = record_id_at(index, record_id_key(session_id))
    record["recordId"], record["r6RequestId"] = "audit:" + rid, "r6:" + rid
    # ``prepare`` left a placeholder, which keeps ``reference`` in its place.
    if prev_r6_id:
        record["reference"] = {
            "sessionId": session_id,
            "prevR6Id": prev_r6_id,
            "chainPosition": index,
        }
    else:
        record["reference"] = {"sessionId": session_id, "chainPosition": index}
    record["provenance"] = {
        "sessionId": session_id,
        "actionIndex": index,
        "prevRecordHash": prev_hash,
    }
    return encode_record(record)


def encode_record(record: dict[str, Any]) -> bytes:
    """The line of a completed record (see ``record_line`` for what orjson refuses)."""
    try:
        return _dumps(record)
    except TypeError:  # orjson.JSONEncodeError: see ``record_line``
        pass
    line = record_line(record)
    # Strings orjson refuses can read back otherwise (two lone surrogates that form a pair read
    # back as one character): the record becomes what its line says.
    parsed = json.loads(line)
    record.clear()
    record.update(parsed)
    return line


_sha256: Final = hashlib.sha256
# Module constants of plain modules, copied as ``Final`` for the compiled build.
_BINDING_TYPE: Final = BINDING_TYPE
_DRAFT: Final = RecordDraft
# Not ``Final``: tests pin the clock through it.
_next_stamp = utc_timestamp


#: Rewrites a draft before its record is built (``RecordBuilder.scrub``).
DraftScrub = Callable[[RecordDraft], RecordDraft]


class RecordBuilder:
    """Builds records for one session (its id, Soft LCT and default agent are fixed).

    ``scrub``, when set, gets every draft first and returns what the record may hold (the
    session's known secrets redacted in each of its strings); an error in it fails the append.
    """

    __slots__ = ("_agent_id", "_audit_level", "_lct", "_session_id", "context", "scrub")

    def __init__(
        self, session_id: str, lct_token: str, audit_level: str, agent_id: str | None
    ) -> None:
        if audit_level not in AUDIT_LEVELS:
            raise AuditError(f"audit level must be one of {AUDIT_LEVELS}, got {audit_level!r}")
        self._session_id = session_id
        self._lct = lct_token
        self._audit_level = audit_level
        self._agent_id = agent_id
        #: ``(session id, Soft LCT token, audit level)`` shared by every record.
        self.context = (session_id, lct_token, audit_level)
        self.scrub: DraftScrub | None = None

    @property
    def audit_level(self) -> str:
        """The level applied to every record of this builder."""
        return self._audit_level

    def prepare(
        self, draft: RecordDraft, *, timestamp: str | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Validate ``draft`` and build the record up to its chain position.

        Returns the record and its ``role`` part, to be finished by ``complete_record``. The
        record's keys are already in their final order: the ids and ``reference`` are
        placeholders and ``provenance`` comes last.
        """
        try:
            if type(draft) is not _DRAFT:
                validate_draft(draft)
            if self.scrub is not None:
                draft = self.scrub(draft)
            # ``Any``: the screen below checks the types (see ``validate_draft``).
            fields: Any = draft
            tool = fields.tool
            category = fields.category
            raw = fields.target
            targets = fields.targets
            constraints = fields.constraints
            params = fields.params
            status = fields.status
            error = fields.error_message
            duration = fields.duration_ms
            agent_id = fields.agent_id
            kind = fields.kind
            extra = fields.extra
            # A cheap screen for what ``validate_draft`` refuses, on the fields read once; when
            # it passes, joining a tuple checks that its items are strings (``TypeError``).
            if (
                type(tool) is str
                and tool
                and type(category) is str
                and type(raw) in _OPTIONAL_TEXT
                and type(error) in _OPTIONAL_TEXT
                and type(agent_id) in _OPTIONAL_TEXT
                and status in _STATUS_SET
                and kind in _KIND_SET
                and type(targets) is tuple
                and type(constraints) is tuple
                and type(params) is dict
                and (
                    duration is None
                    or (type(duration) in _NUMBER_TYPES and duration - duration == 0)
                )
                and (extra is None or (type(extra) is dict and CORE_KEYS.isdisjoint(extra)))
            ):
                _join(targets)
                _join(constraints)
            else:
                validate_draft(draft)
            level = self._audit_level
            if raw is None or level == "minimal":
                shown = None
                request: dict[str, Any] = {"toolName": tool, "category": category}
            else:
                shown = raw if len(raw) <= DISPLAY_LIMIT else raw[:DISPLAY_LIMIT] + "…"
                request = {"toolName": tool, "category": category, "target": shown}
            if targets and level != "minimal" and (len(targets) > 1 or targets[0] != raw):
                request["targets"] = [display_target(item) or "" for item in targets]
            try:
                request["inputHash"] = _sha256(
                    _dumps(params, ORJSON_DEFAULT, ORJSON_OPTIONS)
                ).hexdigest()
            except TypeError:  # orjson.JSONEncodeError: the standard encoder decides
                request["inputHash"] = canonical_hash(params, "params")
            if level == "verbose":
                request["params"] = json.loads(strict_json(params, field="params"))
            if agent_id is None:
                agent_id = self._agent_id
            if agent_id is None:
                role = {
                    "sessionId": self._session_id,
                    "actionIndex": 0,
                    "bindingType": _BINDING_TYPE,
                    "lct": self._lct,
                }
            else:
                role = {
                    "sessionId": self._session_id,
                    "agentId": agent_id,
                    "actionIndex": 0,
                    "bindingType": _BINDING_TYPE,
                    "lct": self._lct,
                }
            output = fields.output
            if output is None:
                result: dict[str, Any] = {"status": status}
            else:
                try:
                    digest = _sha256(_dumps(output, ORJSON_DEFAULT, ORJSON_OPTIONS)).hexdigest()
                except TypeError:
                    digest = canonical_hash(output, "output")
                result = {"status": status, "outputHash": digest}
            if error is not None:
                result["errorMessage"] = error
            if duration is not None:
                result["durationMs"] = duration
            rules = {"auditLevel": level, "constraints": list(constraints)}
            resource = {"approvalRequired": not not fields.approval_required}  # noqa: SIM208
            if shown is None:
                record: dict[str, Any] = {
                    "recordId": PENDING_RECORD_ID,
                    "r6RequestId": PENDING_R6_ID,
                    "timestamp": timestamp or _next_stamp(),
                    "kind": kind,
                    "tool": tool,
                    "category": category,
                    "rules": rules,
                    "role": role,
                    "request": request,
                    "reference": None,
                    "resource": resource,
                    "result": result,
                }
            else:
                record = {
                    "recordId": PENDING_RECORD_ID,
                    "r6RequestId": PENDING_R6_ID,
                    "timestamp": timestamp or _next_stamp(),
                    "kind": kind,
                    "tool": tool,
                    "category": category,
                    "target": shown,
                    "rules": rules,
                    "role": role,
                    "request": request,
                    "reference": None,
                    "resource": resource,
                    "result": result,
                }
            if extra:
                _add_extra(record, extra)
            return record, role
        except TypeError:
            validate_draft(draft)  # names the offending field
            raise


_SCALAR_TYPES: Final = (str, int, bool, type(None))


def _add_extra(record: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Add the ``extra`` keys in sorted order, each value a canonical copy of JSON values only."""
    for key in sorted(extra):
        if type(key) is not str:
            raise AuditError(f"record field 'extra': key {key!r} is not a string")
        value = extra[key]
        kind = type(value)
        if kind in _SCALAR_TYPES or (kind is float and value - value == 0.0):
            record[key] = value
        else:
            # Sorted keys and JSON types only, and nothing the caller can still change.
            record[key] = json.loads(strict_json(value, field=f"extra.{key}"))
