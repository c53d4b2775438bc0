"""R6 record shape, hashes, audit levels, display targets and draft validation."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_harness_audit.audit import (
    AuditChain,
    AuditError,
    RecordDraft,
    display_target,
    input_hash,
    output_hash,
    verify_chain,
)

R6_PARTS = ("rules", "role", "request", "reference", "resource", "result")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_record_has_r6_parts_ids_and_provenance(storage, make_draft, read_lines):
    chain = AuditChain(storage, "shape", agent_id="agent-7")
    first = chain.append(make_draft(0))
    second = chain.append(make_draft(1))
    assert list(second) == [
        "recordId",
        "r6RequestId",
        "timestamp",
        "kind",
        "tool",
        "category",
        "target",
        *R6_PARTS,
        "provenance",
    ]
    hex_id = second["recordId"].removeprefix("audit:")
    assert re.fullmatch(r"[0-9a-f]{8}", hex_id)
    assert second["r6RequestId"] == f"r6:{hex_id}"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", second["timestamp"])
    assert second["kind"] == "call"
    assert second["rules"] == {
        "auditLevel": "standard",
        "constraints": ["policy:allow", "rule:default"],
    }
    assert second["role"] == {
        "sessionId": "shape",
        "agentId": "agent-7",
        "actionIndex": 1,
        "bindingType": "software",
        "lct": chain.soft_lct.token_id,
    }
    assert second["reference"] == {
        "sessionId": "shape",
        "prevR6Id": first["r6RequestId"],
        "chainPosition": 1,
    }
    assert "prevR6Id" not in first["reference"]
    assert second["resource"] == {"approvalRequired": False}
    assert second["result"]["status"] == "success"
    assert second["result"]["durationMs"] == 1.5
    lines = read_lines(chain.path)
    assert second["provenance"] == {
        "sessionId": "shape",
        "actionIndex": 1,
        "prevRecordHash": hashlib.sha256(lines[0]).hexdigest(),
    }
    assert first["provenance"]["prevRecordHash"] == "genesis"
    chain.close()


def test_written_line_is_compact_and_parses_to_the_returned_record(storage, make_draft):
    chain = AuditChain(storage, "compact")
    records = [chain.append(make_draft(i)) for i in range(3)]
    text = chain.path.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) == 3 and text.endswith("\n")
    for line, record in zip(lines, records, strict=True):
        assert json.loads(line) == record
        assert line == json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    assert [r["recordId"] for r in chain.records()] == [r["recordId"] for r in records]
    chain.close()


def test_input_hash_is_sha256_of_canonical_json_independent_of_key_order():
    params = {"b": [1, 2, {"z": None, "a": True}], "a": "ünï", "c": 1.5}
    expected = _sha(json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    assert input_hash(params) == expected
    assert input_hash(dict(reversed(list(params.items())))) == expected
    assert input_hash({}) == _sha("{}")


def test_output_hash_hashes_strings_as_json_strings_and_values_canonically():
    assert output_hash("hi\n") == _sha('"hi\\n"')
    assert output_hash({"y": 1, "x": [True]}) == _sha('{"x":[true],"y":1}')
    assert output_hash(("a", 2)) == _sha('["a",2]')


def test_output_and_input_hashes_reach_the_record(storage, make_draft):
    chain = AuditChain(storage, "hashes")
    record = chain.append(make_draft(3, output={"files": ["a.py"]}))
    assert record["request"]["inputHash"] == _sha('{"command":"echo step 3"}')
    assert record["result"]["outputHash"] == _sha('{"files":["a.py"]}')
    assert "outputHash" not in chain.append(make_draft(4, output=None))["result"]
    chain.close()


def test_unhashable_output_is_a_clear_error(storage, make_draft):
    chain = AuditChain(storage, "bad-output")
    with pytest.raises(AuditError, match=r"output.*object"):
        chain.append(make_draft(0, output=object()))
    assert chain.record_count == 0
    chain.close()


def test_display_target_truncates_after_80_characters():
    assert display_target("x" * 80) == "x" * 80
    assert display_target("x" * 81) == "x" * 80 + "…"
    assert display_target(None) is None


def test_record_keeps_display_target_and_lists_multiple_targets(storage, make_draft):
    long_command = "cat " + "/very/long/path/" * 10
    chain = AuditChain(storage, "targets")
    record = chain.append(make_draft(0, target=long_command, targets=(long_command, "/etc/passwd")))
    shown = long_command[:80] + "…"
    assert record["target"] == record["request"]["target"] == shown
    assert record["request"]["targets"] == [shown, "/etc/passwd"]
    single = chain.append(make_draft(1))
    assert "targets" not in single["request"]
    chain.close()


def test_audit_levels_keep_hashes_targets_or_full_parameters(storage, make_draft):
    params = {"command": "ls -la", "timeout": 5}
    minimal = AuditChain(storage, "lvl-min", audit_level="minimal").append(
        make_draft(0, params=params)
    )
    standard = AuditChain(storage, "lvl-std").append(make_draft(0, params=params))
    verbose = AuditChain(storage, "lvl-verbose", audit_level="verbose").append(
        make_draft(0, params=params)
    )
    assert "target" not in minimal and "target" not in minimal["request"]
    assert minimal["rules"]["auditLevel"] == "minimal"
    assert standard["request"]["target"] == "echo step 0"
    assert "params" not in standard["request"]
    assert verbose["request"]["params"] == params
    hashes = {r["request"]["inputHash"] for r in (minimal, standard, verbose)}
    assert hashes == {input_hash(params)}


def test_extra_keys_are_part_of_the_hashed_line(storage, make_draft, read_lines):
    chain = AuditChain(storage, "extra")
    record = chain.append(
        make_draft(0, extra={"decision": {"rule": "r1"}, "alerts": ["credential_access"]})
    )
    assert record["alerts"] == ["credential_access"]
    assert record["decision"] == {"rule": "r1"}
    line = read_lines(chain.path)[0]
    assert b'"alerts":["credential_access"],"decision":{"rule":"r1"},"provenance"' in line
    chain.close()


def test_policy_decisions_of_every_kind_reach_the_constraints(storage, make_draft):
    chain = AuditChain(storage, "decisions")
    cases = [
        ("policy:allow", "rule:default"),
        ("policy:warn", "rule:warn-network"),
        ("policy:deny", "rule:deny-secret-files", "enforced:false"),
        ("policy:deny", "rule:deny-destructive-commands"),
    ]
    records = [
        chain.append(make_draft(i, constraints=c, status="blocked" if i == 3 else "success"))
        for i, c in enumerate(cases)
    ]
    assert [tuple(r["rules"]["constraints"]) for r in records] == cases
    chain.close()


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"status": "denied"}, "status"),
        ({"tool": ""}, "tool"),
        ({"tool": 3}, "tool"),
        ({"targets": "ls"}, "targets"),
        ({"constraints": ("ok", 1)}, "constraints"),
        ({"duration_ms": float("nan")}, "duration_ms"),
        ({"duration_ms": True}, "duration_ms"),
        ({"extra": {"provenance": 1}}, "extra"),
        ({"kind": "not a word"}, "kind"),
        ({"error_message": 5}, "error_message"),
        ({"params": ["a"]}, "params"),
    ],
)
def test_invalid_drafts_are_refused_naming_the_field(storage, make_draft, overrides, field):
    chain = AuditChain(storage, "invalid")
    with pytest.raises(AuditError, match=field):
        chain.append(make_draft(0, **overrides))
    assert chain.path.read_bytes() == b""
    chain.close()


def test_unknown_audit_level_is_refused(storage):
    with pytest.raises(AuditError, match="audit level"):
        AuditChain(storage, "x", audit_level="loud")


def test_lone_surrogates_are_escaped_and_the_line_stays_valid(storage, make_draft):
    chain = AuditChain(storage, "surrogate")
    record = chain.append(make_draft(0, target="bad \udc80 byte", error_message="\ud800"))
    line = chain.path.read_bytes().rstrip(b"\n")
    assert json.loads(line.decode("utf-8")) == record
    # Two lone surrogates that form a pair read back as one character; the record says so too.
    paired = chain.append(
        make_draft(1, target="a\ud800\udc00b", extra={"alerts": ["\udbff\udfff"]})
    )
    line = chain.path.read_bytes().splitlines()[-1]
    assert json.loads(line.decode("utf-8")) == paired
    assert paired["target"] == "a\U00010000b" and paired["alerts"] == ["\U0010ffff"]
    assert verify_chain(storage, "surrogate").valid
    chain.close()


def test_canonical_numbers_are_shortest_round_trip_and_non_finite_is_null():
    assert input_hash({"b": 1e-7, "a": 0.00001}) == _sha('{"a":0.00001,"b":1e-7}')
    assert input_hash({"x": 1e16, "y": -0.0}) == _sha('{"x":1e+16,"y":-0.0}')
    assert output_hash(float("nan")) == output_hash(None) == _sha("null")
    assert output_hash([float("inf")]) == _sha("[null]")


def test_values_beyond_the_fast_encoder_hash_and_record_alike(storage, make_draft):
    big = 2**70
    assert input_hash({"n": big}) == _sha(f'{{"n":{big}}}')
    assert output_hash({2: "two", 1: "one"}) == _sha('{"1":"one","2":"two"}')
    chain = AuditChain(storage, "big-values")
    record = chain.append(make_draft(0, duration_ms=big, extra={"alerts": [big, "\ud800"]}))
    line = chain.path.read_bytes().rstrip(b"\n")
    assert json.loads(line.decode("utf-8")) == record
    assert record["result"]["durationMs"] == big and record["alerts"] == [big, "\ud800"]
    assert verify_chain(storage, "big-values").valid
    chain.close()


def test_extra_values_are_checked_and_copied(storage, make_draft):
    chain = AuditChain(storage, "extra-copy")
    alerts = [{"b": 1, "a": 2}]
    record = chain.append(make_draft(0, extra={"alerts": alerts, "decision": "warn"}))
    alerts[0]["c"] = 3
    assert record["alerts"] == [{"a": 2, "b": 1}] and list(record["alerts"][0]) == ["a", "b"]
    assert record["decision"] == "warn" and list(record)[-1] == "provenance"
    for bad in (float("inf"), [float("nan")]):
        with pytest.raises(AuditError, match=r"extra\.immune"):
            chain.append(make_draft(1, extra={"immune": bad}))
    with pytest.raises(AuditError, match="extra"):
        chain.append(make_draft(1, extra={1: "x"}))
    assert chain.record_count == 1
    chain.close()


texts = st.text(max_size=40)
# Strings as agents send them, lone surrogates included (they reach the chain escaped).
any_texts = st.text(
    st.characters(categories=("Cs", "Ll", "Lu", "Nd", "Po", "Cc", "So")), max_size=20
)
json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.integers(-(2**80), 2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
    | any_texts
)
json_values = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
drafts = st.builds(
    RecordDraft,
    tool=st.text(min_size=1, max_size=20),
    category=texts,
    target=st.none() | st.text(max_size=120) | any_texts,
    targets=st.lists(texts, max_size=3).map(tuple),
    params=st.dictionaries(texts, json_values, max_size=4),
    constraints=st.lists(texts, max_size=3).map(tuple),
    status=st.sampled_from(["success", "error", "blocked"]),
    output=json_values,
    error_message=st.none() | texts,
    duration_ms=st.none() | st.floats(allow_nan=False, allow_infinity=False) | st.integers(),
    agent_id=st.none() | texts,
    approval_required=st.booleans(),
    kind=st.sampled_from(["call", "escalation", "lift", "alert", "note", "message"]),
    extra=st.none()
    | st.dictionaries(st.sampled_from(["alerts", "decision", "immune"]), json_values),
)


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batch=st.lists(drafts, min_size=1, max_size=4),
    level=st.sampled_from(["minimal", "standard", "verbose"]),
)
def test_any_draft_becomes_one_valid_line_equal_to_the_returned_record(tmp_path, batch, level):
    storage = tmp_path / "prop"
    chain = AuditChain(storage, "p", audit_level=level)
    start = chain.record_count
    written = [chain.append(draft) for draft in batch]
    lines = Path(chain.path).read_bytes().split(b"\n")[start:-1]
    assert len(lines) == len(batch)
    for line, record in zip(lines, written, strict=True):
        assert json.loads(line.decode("utf-8")) == record
    chain.close()
    assert verify_chain(storage, "p").valid
