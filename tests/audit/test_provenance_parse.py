"""``verify --full``'s quick parse: simdjson may accept only what orjson accepts, with the same
``provenance``; whatever it cannot vouch for goes to ``check_line``, so the verdict never moves."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_harness_audit.audit import AuditChain, StorageLayout, provenance_parse, verify_chain
from pytest_harness_audit.audit.provenance_parse import parser_name, provenance_reader

pytestmark = pytest.mark.skipif(
    provenance_parse.simdjson is None, reason="pysimdjson cannot load on this platform"
)

_LINE = (
    b'{"recordId":"audit:1","tool":"Read","n":[1,2.5,-3e2,true,null],"t":"a\\u00e9\\n",'
    b'"provenance":{"sessionId":"s1","actionIndex":5,"prevRecordHash":"ab"}}'
)
_ALPHABET = b'{}[]",:\\0123456789.eE+-truefalsn \x00\x7f\xff\xc3\xa9u'


def _orjson_view(line: bytes) -> object:
    return provenance_reader(prefer_simdjson=False)(line)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(0, len(_LINE)), st.integers(0, 2), st.sampled_from(list(_ALPHABET))),
        min_size=1,
        max_size=4,
    )
)
def test_simdjson_vouches_only_for_what_orjson_reads_alike(edits):
    line = bytearray(_LINE)
    for position, operation, byte in edits:
        position = min(position, len(line) - 1)
        if operation == 0:
            line[position] = byte
        elif operation == 1:
            del line[position]
        else:
            line.insert(position, byte)
    read = provenance_reader()
    vouched = read(bytes(line))
    if vouched is not None:
        assert vouched == _orjson_view(bytes(line))
    # and the parser is ready for the next line whatever this one was
    assert read(_LINE) == _orjson_view(_LINE)


@pytest.mark.parametrize(
    "line",
    [
        # duplicate keys: simdjson would read the first, orjson reads the last
        b'{"provenance":{"actionIndex":1},"provenance":{"actionIndex":2}}',
        b'{"provenance":{"actionIndex":1,"actionIndex":2}}',
        # beyond 64 bits: simdjson refuses what orjson reads as a float
        b'{"big":123456789012345678901234567890,"provenance":{"actionIndex":1}}',
        b'{"provenance":[1,2]}',
        b'["provenance"]',
        b'{"provenance":{"a":1}} x',
        b'{"provenance":{"a":"\\ud800"}}',
    ],
)
def test_lines_simdjson_cannot_vouch_for_are_left_to_the_full_check(line):
    read = provenance_reader()
    found = read(line)
    assert found is None or found == _orjson_view(line)
    if b'"provenance"' in line and line.count(b'"actionIndex"') == 2:
        assert found is None or found == {"actionIndex": 2}
    assert read(_LINE) == {"sessionId": "s1", "actionIndex": 5, "prevRecordHash": "ab"}


def _relinked(storage, edit):
    """Chain s1 with ``edit`` applied to the text of record 2, every link after recomputed."""
    path = StorageLayout.at(storage).paths("s1").chain
    lines = path.read_bytes().split(b"\n")[:-1]
    out, previous = [], "genesis"
    for index, line in enumerate(lines):
        record = orjson.loads(line)
        record["provenance"]["prevRecordHash"] = previous
        record["provenance"]["actionIndex"] = index
        line = json.dumps(record, separators=(",", ":")).encode()
        if index == 2:
            line = edit(line)
        out.append(line)
        previous = hashlib.sha256(line).hexdigest()
    path.write_bytes(b"".join(line + b"\n" for line in out))


def _verdict(storage, monkeypatch, prefer):
    with monkeypatch.context() as patch:
        if not prefer:
            patch.setattr(provenance_parse, "simdjson", None)
        assert parser_name() == ("simdjson" if prefer else "orjson")
        report = verify_chain(storage, "s1", full=True)
    return dataclasses.replace(report, path=None)


def _duplicate_provenance(line: bytes) -> bytes:
    return line[:-1] + b',"provenance":{"sessionId":"s1","actionIndex":7,"prevRecordHash":"x"}}'


def _big_number(line: bytes) -> bytes:
    return b'{"big":123456789012345678901234567890,' + line[1:]


def _broken_inside(line: bytes) -> bytes:
    return line.replace(b'"tool":"', b'"tool":', 1)  # the writer's tail is left intact


def _bad_escape_inside(line: bytes) -> bytes:  # simdjson and orjson refuse it, json reads it
    return line.replace(b'"tool":"', b'"tool":"\\ud800', 1)


@pytest.mark.parametrize(
    "edit",
    [_duplicate_provenance, _big_number, _broken_inside, _bad_escape_inside, lambda line: line],
)
def test_full_verification_gives_one_verdict_with_either_parser(
    storage, make_draft, monkeypatch, edit
):
    with AuditChain(storage, "s1") as chain:
        for index in range(5):
            chain.append(make_draft(index))
    _relinked(storage, edit)
    with_simdjson = _verdict(storage, monkeypatch, prefer=True)
    with_orjson = _verdict(storage, monkeypatch, prefer=False)
    assert with_simdjson == with_orjson
    assert with_simdjson.full_parse
    if edit is _broken_inside:
        assert not with_simdjson.valid
        assert with_simdjson.first_bad_index == 2
    if edit is _bad_escape_inside:
        # a lone surrogate is what the writer itself writes for a string orjson refuses: the
        # line is good, and only the relinked head no longer matches the anchor
        assert with_simdjson.first_bad_index == 4


def test_full_verification_still_finds_a_bad_line_without_simdjson(
    storage, make_draft, monkeypatch
):
    with AuditChain(storage, "s1") as chain:
        for index in range(4):
            chain.append(make_draft(index))
    path = StorageLayout.at(storage).paths("s1").chain
    monkeypatch.setattr(provenance_parse, "simdjson", None)
    assert parser_name() == "orjson"
    assert verify_chain(storage, "s1", full=True).valid
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"tool":"', b'"tool":"x', 1)
    path.write_bytes(b"\n".join(lines))
    report = verify_chain(storage, "s1", full=True)
    assert not report.valid
    assert report.first_bad_index == 2  # record 2's link no longer names record 1


def test_all_json_is_the_validators_verdict_on_every_line(monkeypatch):
    from pytest_harness_audit.audit.provenance_parse import all_json, json_validator

    good = [_LINE, b"[1,2]", b'"x"', _LINE]
    bad = [b"{oops", b'{"a":1} x', b'{"big":123456789012345678901234567890}', b'"\\ud800"']
    is_json = json_validator()
    assert is_json is not None
    assert all_json(good) and all(map(is_json, good))
    for line in bad:
        assert not is_json(line)
        for at in range(len(good) + 1):
            assert not all_json([*good[:at], line, *good[at:]])
    assert all_json([])
    monkeypatch.setattr(provenance_parse, "simdjson", None)
    assert not all_json(good)  # without simdjson nothing is vouched for
