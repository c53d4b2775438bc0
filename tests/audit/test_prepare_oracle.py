"""``RecordBuilder.prepare`` builds the record the earlier, plainer builder built, for any draft.

``_reference_prepare`` is that builder as it was before the quick path (a separate screen
function, each field read where it is used): the two must give equal records with equal lines,
or refuse the draft with the same message. Drafts come from hypothesis, invalid ones included.
``AuditChain.append``, which completes records inline, must write and return what
``prepare`` + ``complete_record`` give for the same drafts, and keep the anchor on the last line.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.audit import AuditChain, AuditError, RecordDraft, records
from pytest_harness_audit.audit.anchor import Anchor, read_anchor
from pytest_harness_audit.audit.canonical import (
    ORJSON_DEFAULT,
    ORJSON_OPTIONS,
    canonical_hash,
    strict_json,
)
from pytest_harness_audit.audit.lct import BINDING_TYPE
from pytest_harness_audit.audit.records import (
    CORE_KEYS,
    DISPLAY_LIMIT,
    RecordBuilder,
    complete_record,
    display_target,
    validate_draft,
)
from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.audit.witness import Head

_STATUS_SET = frozenset(records.STATUSES)
_KIND_SET = frozenset(records.KINDS)
_OPTIONAL_TEXT = (str, type(None))
_INF = float("inf")


def _needs_full_validation(draft: Any) -> bool:
    if type(draft) is not RecordDraft or not draft.tool or draft.status not in _STATUS_SET:
        return True
    if type(draft.tool) is not str or type(draft.category) is not str:
        return True
    if (
        type(draft.target) not in _OPTIONAL_TEXT
        or type(draft.error_message) not in _OPTIONAL_TEXT
        or type(draft.agent_id) not in _OPTIONAL_TEXT
    ):
        return True
    if draft.kind not in _KIND_SET or type(draft.targets) is not tuple:
        return True
    if type(draft.constraints) is not tuple or type(draft.params) is not dict:
        return True
    "".join(draft.targets)
    "".join(draft.constraints)
    duration = draft.duration_ms
    if duration is not None and (
        type(duration) not in (int, float) or duration != duration or abs(duration) == _INF
    ):
        return True
    extra = draft.extra
    return extra is not None and (type(extra) is not dict or not CORE_KEYS.isdisjoint(extra))


def _hash(value: Any, field: str) -> str:
    try:
        return hashlib.sha256(orjson.dumps(value, ORJSON_DEFAULT, ORJSON_OPTIONS)).hexdigest()
    except TypeError:
        return canonical_hash(value, field)


def _reference_prepare(
    context: tuple[str, str, str, str | None], draft: Any, rid: str, stamp: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    session_id, lct_token, level, default_agent = context
    try:
        if _needs_full_validation(draft):
            validate_draft(draft)
        tool = draft.tool
        category = draft.category
        raw = draft.target
        if raw is None or level == "minimal":
            shown = None
            request: dict[str, Any] = {"toolName": tool, "category": category}
        else:
            shown = raw if len(raw) <= DISPLAY_LIMIT else raw[:DISPLAY_LIMIT] + "…"
            request = {"toolName": tool, "category": category, "target": shown}
        if level != "minimal":
            targets = draft.targets
            if targets and (len(targets) > 1 or targets[0] != raw):
                request["targets"] = [display_target(item) or "" for item in targets]
        request["inputHash"] = _hash(draft.params, "params")
        if level == "verbose":
            request["params"] = json.loads(strict_json(draft.params, field="params"))
        agent_id = draft.agent_id if draft.agent_id is not None else default_agent
        role: dict[str, Any] = {"sessionId": session_id}
        if agent_id is not None:
            role["agentId"] = agent_id
        role.update(actionIndex=0, bindingType=BINDING_TYPE, lct=lct_token)
        result: dict[str, Any] = {"status": draft.status}
        if draft.output is not None:
            result["outputHash"] = _hash(draft.output, "output")
        if draft.error_message is not None:
            result["errorMessage"] = draft.error_message
        if draft.duration_ms is not None:
            result["durationMs"] = draft.duration_ms
        record: dict[str, Any] = {
            "recordId": "audit:" + rid,
            "r6RequestId": "r6:" + rid,
            "timestamp": stamp,
            "kind": draft.kind,
            "tool": tool,
            "category": category,
        }
        if shown is not None:
            record["target"] = shown
        record["rules"] = {"auditLevel": level, "constraints": list(draft.constraints)}
        record["role"] = role
        record["request"] = request
        record["reference"] = None
        record["resource"] = {"approvalRequired": bool(draft.approval_required)}
        record["result"] = result
        if draft.extra:
            records._add_extra(record, draft.extra)
        return record, role
    except TypeError:
        validate_draft(draft)
        raise


texts = st.text(max_size=12)
odd = st.sampled_from([None, 3, 2.5, b"x", ["a"], ("a",), {"a": 1}, True, "", float("nan")])
json_leaf = st.none() | st.booleans() | st.integers() | st.floats() | texts
json_values = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
string_tuples = st.lists(texts, max_size=3).map(tuple)


valid_drafts = st.builds(
    RecordDraft,
    tool=st.text(min_size=1, max_size=12),
    category=texts,
    target=st.none() | st.text(max_size=100),
    targets=string_tuples,
    params=st.dictionaries(texts, json_values, max_size=3),
    constraints=string_tuples,
    status=st.sampled_from(["success", "error", "blocked"]),
    output=json_values | st.just(2**70) | st.just("\ud800"),
    error_message=st.none() | texts,
    duration_ms=st.none() | st.floats(allow_nan=False, allow_infinity=False) | st.integers(),
    agent_id=st.none() | texts,
    approval_required=st.booleans() | st.integers(-1, 1),
    kind=st.sampled_from(["call", "escalation", "custom_kind"]),
    extra=st.none() | st.dictionaries(st.sampled_from(["alerts", "decision", "zeta"]), json_values),
)
# Values of another shape, for any one field: lists for tuples, mapping views for dicts,
# reserved or odd keys, unencodable outputs, non-finite durations, words that are not kinds.
odd_values = {
    "tool": odd,
    "category": odd,
    "target": odd,
    "targets": odd | st.lists(texts, max_size=2) | st.just(("a", 1)),
    "params": odd | st.dictionaries(texts, json_values, max_size=2).map(MappingProxyType),
    "constraints": odd | st.lists(texts, max_size=2) | st.just(("a", 2)),
    "status": odd | st.just("bogus"),
    "output": st.just(object()),
    "error_message": odd,
    "duration_ms": odd | st.floats() | st.booleans(),
    "agent_id": odd,
    "approval_required": st.just("yes"),
    "kind": odd | st.just("not a word"),
    "extra": odd
    | st.just(MappingProxyType({"alerts": [1]}))
    | st.just({"tool": 1})
    | st.just({"x": object()}),
}
broken_drafts = st.tuples(valid_drafts, st.sampled_from(sorted(odd_values))).flatmap(
    lambda pair: odd_values[pair[1]].map(lambda value: replace(pair[0], **{pair[1]: value}))
)
drafts = valid_drafts | broken_drafts | st.just("not a draft")


def _outcome(build: Any) -> tuple[str, Any]:
    try:
        record, role = build()
    except AuditError as exc:
        return "refused", str(exc)
    line = complete_record(record, role, 3, "r6:00000000", "f" * 64)
    return "built", (record, line)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    draft=drafts,
    level=st.sampled_from(["minimal", "standard", "verbose"]),
    default_agent=st.none() | st.just("agent-0"),
)
def test_prepare_builds_what_the_reference_builder_builds(draft, level, default_agent):
    builder = RecordBuilder("sess", "web4:session:00000000:sess", level, default_agent)
    context = ("sess", "web4:session:00000000:sess", level, default_agent)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records, "_next_stamp", lambda: "2026-01-02T03:04:05.678Z")
        got = _outcome(lambda: builder.prepare(draft))
    want = _outcome(
        lambda: _reference_prepare(context, draft, "pending", "2026-01-02T03:04:05.678Z")
    )
    assert got[0] == want[0], (got, want)
    if got[0] == "built":
        assert got[1][1] == want[1][1]
        assert got[1][0] == want[1][0]
    else:
        assert got[1] == want[1]


def test_the_reference_builder_tells_drafts_apart():
    # The comparison means something: a different draft gives a different line.
    context = ("sess", "web4:session:00000000:sess", "standard", None)
    one = _outcome(lambda: _reference_prepare(context, RecordDraft("A", "c"), "0", "t"))
    two = _outcome(lambda: _reference_prepare(context, RecordDraft("B", "c"), "0", "t"))
    assert one[0] == two[0] == "built" and one[1][1] != two[1][1]
    refused = _outcome(lambda: _reference_prepare(context, RecordDraft("", "c"), "0", "t"))
    assert refused == ("refused", "record field 'tool' must not be empty")


@settings(max_examples=60, deadline=None)
@given(
    batch=st.lists(drafts, min_size=1, max_size=6),
    level=st.sampled_from(["minimal", "standard", "verbose"]),
    default_agent=st.none() | st.just("agent-0"),
)
def test_append_writes_and_returns_what_the_public_path_builds(batch, level, default_agent):
    # ``append`` completes the record inline (ids, links, anchor slot): for any drafts, each line
    # is what ``prepare`` + ``complete_record`` give, and a refused draft is refused alike.
    with tempfile.TemporaryDirectory() as storage:
        chain = AuditChain(storage, "sess", audit_level=level, agent_id=default_agent)
        builder = RecordBuilder("sess", str(chain.soft_lct), level, default_agent)
        prev_r6, prev_hash, index = None, "genesis", 0
        with chain:
            for draft in batch:
                got = _outcome_of_append(chain, draft)
                if got[0] == "refused":
                    assert got == _outcome(lambda d=draft: builder.prepare(d))
                    continue
                record = got[1]
                again, role = builder.prepare(draft, timestamp=record["timestamp"])
                line = complete_record(again, role, index, prev_r6, prev_hash)
                assert chain.path.read_bytes().split(b"\n")[index] == line
                assert record == again == json.loads(line)
                prev_r6, prev_hash = record["r6RequestId"], hashlib.sha256(line).hexdigest()
                index += 1
            assert chain.witness == Head(index, prev_hash)
        assert read_anchor(StorageLayout.at(storage).paths("sess").anchor) == Anchor(
            index, prev_hash, len(chain.path.read_bytes()), prev_r6
        )


def _outcome_of_append(chain: AuditChain, draft: Any) -> tuple[str, Any]:
    try:
        return "built", chain.append(draft)
    except AuditError as exc:
        return "refused", str(exc)
