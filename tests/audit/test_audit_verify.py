"""Verification: every reason code, legacy chains, anchors, streaming memory."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest

from pytest_harness_audit.audit import (
    REASONS,
    Anchor,
    AuditChain,
    SessionNotFoundError,
    verify_chain,
    verify_file,
)
from pytest_harness_audit.audit.storage import StorageLayout


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_lines(path: Path, lines: list[bytes], *, final_newline: bool = True) -> None:
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    path.write_bytes(data)


def _hand_chain(count: int, *, legacy: bool, indices: list[int] | None = None) -> list[bytes]:
    """Lines in the reference plugin's record format, linked over the exact previous line."""
    lines: list[bytes] = []
    prev = "genesis"
    for position in range(count):
        index = position if indices is None else indices[position]
        record = {
            "recordId": f"audit:{position:08x}",
            "r6RequestId": f"r6:{position:08x}",
            "timestamp": f"2026-02-01T10:00:{position:02d}.000Z",
            "tool": "Read",
            "category": "file_read",
            "target": f"/project/src/file{position}.ts",
            "result": {"status": "success", "outputHash": "0123456789abcdef"},
            "provenance": {"sessionId": "legacy", "actionIndex": index, "prevRecordHash": prev},
        }
        line = json.dumps(record, separators=(",", ":")).encode()
        lines.append(line)
        digest = _sha(line)
        prev = digest[:16] if legacy else digest
    return lines


@pytest.fixture
def five(make_chain, read_lines):
    """A closed five-record chain: (storage, session id, chain path, lines)."""
    chain = make_chain("five", 5)
    chain.close()
    return chain.storage_dir, "five", chain.path, read_lines(chain.path)


def _check(report, reason, index, *, record_id=None):
    assert not report.valid
    assert report.reason == reason, report.errors
    assert report.first_bad_index == index, report.errors
    if record_id is not None:
        assert report.first_bad_record_id == record_id
    assert report.errors and reason in report.errors[0]


def test_valid_chain_reports_count_head_and_current_anchor(five):
    storage, session, _, lines = five
    report = verify_chain(storage, session)
    assert report.valid and report.reason is None and report.errors == ()
    assert report.record_count == 5
    assert report.head == _sha(lines[-1])
    assert report.anchor_state == "current" and report.anchored
    assert not report.legacy_links
    full = verify_chain(storage, session, full=True)
    assert full.valid and full.head == report.head and full.full_parse


def test_empty_chain_is_valid(storage):
    AuditChain(storage, "empty").close()
    report = verify_chain(storage, "empty")
    assert report.valid and report.record_count == 0 and report.head == "genesis"


def test_parse_error(five):
    storage, session, path, lines = five
    lines[2] = lines[2][:-5] + b"#oops"
    _write_lines(path, lines)
    _check(verify_chain(storage, session), "parse_error", 2)


def test_parse_error_for_json_that_is_not_a_record(five):
    storage, session, path, lines = five
    lines[1] = b'["not", "a record"]'
    _write_lines(path, lines)
    _check(verify_chain(storage, session), "parse_error", 1)


def test_link_mismatch_names_expected_and_found_hash(five):
    storage, session, path, lines = five
    original = lines[1]
    lines[1] = original.replace(b'"echo step 1"', b'"echo step X"')
    _write_lines(path, lines)
    report = verify_chain(storage, session)
    record_id = json.loads(lines[2])["recordId"]
    _check(report, "link_mismatch", 2, record_id=record_id)
    assert report.expected == _sha(lines[1])
    assert report.found == _sha(original)


def test_editing_the_last_record_is_an_anchor_mismatch(five):
    storage, session, path, lines = five
    lines[4] = lines[4].replace(b'"status":"success"', b'"status":"blocked"')
    _write_lines(path, lines)
    report = verify_chain(storage, session)
    _check(report, "anchor_mismatch", 4)
    assert report.found == _sha(lines[4])
    assert report.anchor_state == "mismatch"


def test_deleting_the_last_record_is_truncated(five):
    storage, session, path, lines = five
    _write_lines(path, lines[:-1])
    report = verify_chain(storage, session)
    _check(report, "truncated", 4)
    assert report.record_count == 4 and report.expected == _sha(lines[4])


def test_records_beyond_the_anchor_are_extra_records(five, make_draft):
    storage, session, _, _ = five
    paths = StorageLayout.at(storage).paths(session)
    anchor_bytes = paths.anchor.read_bytes()
    with AuditChain(storage, session) as chain:
        extra = [chain.append(make_draft(9)), chain.append(make_draft(10))]
    paths.anchor.write_bytes(anchor_bytes)
    report = verify_chain(storage, session)
    _check(report, "extra_records", 5, record_id=extra[0]["recordId"])
    assert report.anchor_state == "mismatch"  # two beyond: not one interrupted append
    assert "2 record(s)" in report.errors[0]


def test_torn_tail(five):
    storage, session, path, _ = five
    path.write_bytes(path.read_bytes() + b'{"recordId":"audit:0badf00d","r6Req')
    report = verify_chain(storage, session)
    _check(report, "torn_tail", 5, record_id="audit:0badf00d")
    assert report.record_count == 5


def test_sequence_gap(tmp_path):
    lines = _hand_chain(4, legacy=False, indices=[0, 1, 3, 4])
    path = tmp_path / "gap.jsonl"
    _write_lines(path, lines)
    report = verify_file(path, Anchor(4, _sha(lines[-1])))
    _check(report, "sequence_gap", 2)
    assert (report.expected, report.found) == ("2", "3")


def test_missing_anchor_of_an_existing_session(five):
    storage, session, _, _ = five
    StorageLayout.at(storage).paths(session).anchor.unlink()
    report = verify_chain(storage, session)
    _check(report, "anchor_missing", 5)
    assert report.anchor_state == "missing"


def test_corrupt_anchor_is_reported_not_raised(five):
    storage, session, _, _ = five
    StorageLayout.at(storage).paths(session).anchor.write_bytes(b"garbage" * 50)
    report = verify_chain(storage, session)
    assert report.reason == "anchor_missing" and "no intact slot" in report.errors[-1]


def test_unknown_session_is_an_error(storage):
    with pytest.raises(SessionNotFoundError, match="nope"):
        verify_chain(storage, "nope")


def test_every_reason_code_is_documented():
    assert set(REASONS) >= {
        "parse_error",
        "link_mismatch",
        "anchor_mismatch",
        "truncated",
        "extra_records",
        "torn_tail",
        "sequence_gap",
    }


def test_hand_built_reference_chain_verifies_with_legacy_links(tmp_path):
    lines = _hand_chain(6, legacy=True)
    path = tmp_path / "legacy.jsonl"
    _write_lines(path, lines)
    report = verify_file(path)
    assert report.valid, report.errors
    assert report.legacy_links
    assert report.record_count == 6 and report.head == _sha(lines[-1])
    assert report.anchor_state == "none" and not report.anchored


def test_reference_chain_with_a_wrong_short_link_fails(tmp_path):
    lines = _hand_chain(4, legacy=True)
    lines[2] = lines[2].replace(b'"prevRecordHash":"', b'"prevRecordHash":"f', 1)[:-19] + (
        b'0123456789abcde"}}'
    )
    path = tmp_path / "legacy.jsonl"
    _write_lines(path, lines)
    report = verify_file(path)
    _check(report, "link_mismatch", 2)


def test_reference_chain_in_storage_is_verified_and_can_be_continued(storage, make_draft):
    layout = StorageLayout.at(storage)
    layout.ensure_dirs()
    lines = _hand_chain(3, legacy=True)
    _write_lines(layout.paths("legacy").chain, lines)
    assert verify_chain(storage, "legacy").valid  # no session file: verified without anchor
    with AuditChain(storage, "legacy") as chain:  # adopts it, anchors it, continues it
        record = chain.append(make_draft(3))
    assert record["provenance"]["prevRecordHash"] == _sha(lines[-1])
    report = verify_chain(storage, "legacy")
    assert report.valid and report.legacy_links and report.anchor_state == "current"
    adopted = json.loads(layout.paths("legacy").session_file.read_text())["adopted"]
    assert adopted["recordCount"] == 3 and adopted["legacyLinks"] is True


def test_an_invalid_unanchored_chain_is_not_adopted(storage):
    layout = StorageLayout.at(storage)
    layout.ensure_dirs()
    lines = _hand_chain(3, legacy=True)
    lines[1] = b"{broken"
    _write_lines(layout.paths("bad").chain, lines)
    with pytest.raises(Exception, match="does not verify"):
        AuditChain(storage, "bad")


def test_verify_file_accepts_a_mapping_anchor(five):
    _, _, path, lines = five
    assert verify_file(path, {"recordCount": 5, "head": _sha(lines[-1])}).valid
    report = verify_file(path, {"count": 6, "head": _sha(lines[-1])})
    _check(report, "truncated", 5)
    assert verify_file(path, Anchor(5, _sha(lines[-1]))).valid


def test_verification_memory_stays_flat(storage, make_draft):
    chain = AuditChain(storage, "big")
    for index in range(20000):
        chain.append(make_draft(index))
    chain.close()
    assert chain.path.stat().st_size > 10_000_000
    tracemalloc.start()
    try:
        report = verify_chain(storage, "big")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.valid and report.record_count == 20000
    assert peak < 8_000_000, peak


def test_fast_and_full_verification_list_the_same_failures_after_a_gap(tmp_path):
    lines = _hand_chain(5, legacy=False, indices=[0, 1, 3, 4, 5])
    anchor = Anchor(5, _sha(lines[-1]))
    lines[3] = lines[3].replace(b"file3", b"fileX")
    path = tmp_path / "gap-edit.jsonl"
    _write_lines(path, lines)
    fast, full = verify_file(path, anchor), verify_file(path, anchor, full=True)
    assert (fast.reason, fast.first_bad_index) == ("sequence_gap", 2)
    assert fast.errors == full.errors
    assert [error.split(": ")[1] for error in fast.errors] == [
        "sequence_gap",
        "link_mismatch",
    ]
