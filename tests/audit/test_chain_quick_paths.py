"""The quick paths of append and verify give the files and verdicts of the plain paths.

* append writes the line ``complete_record`` would write, and updates the anchor with ``pwrite``
  (a truncated anchor file no longer kills the writer);
* a full parse (``verify --full``) checks plainly good lines with orjson: every defect still gets
  the reason, index and values of the standard-library check of every line.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from pytest_harness_audit.audit import (
    AuditChain,
    line_check,
    read_anchor,
    verify_chain,
    verify_file,
)
from pytest_harness_audit.audit.records import RecordBuilder, complete_record
from pytest_harness_audit.audit.storage import StorageLayout


def _plain_verify(monkeypatch: pytest.MonkeyPatch, path: Path, **kwargs: object) -> dict:
    """``verify_file`` with the orjson quick path switched off (every line via ``check_line``)."""
    with monkeypatch.context() as patch:
        patch.setattr(line_check, "NESTING_BYTES", -1)
        patch.setattr(line_check, "NESTING_BRACKETS", -1)
        return verify_file(path, **kwargs).to_dict()  # type: ignore[arg-type]


def _relink(lines: list[bytes], start: int) -> list[bytes]:
    """Re-link lines from ``start`` on, so a defect stays the only one."""
    out = lines[:start]
    prev = hashlib.sha256(out[-1]).hexdigest() if out else "genesis"
    for line in lines[start:]:
        record = json.loads(line)
        record["provenance"]["prevRecordHash"] = prev
        line = orjson.dumps(record)
        out.append(line)
        prev = hashlib.sha256(line).hexdigest()
    return out


def _edit(lines: list[bytes], at: int, change: object) -> list[bytes]:
    record = json.loads(lines[at])
    change(record)  # type: ignore[operator]
    line = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
    edited = [*lines[:at], line, *lines[at + 1 :]]
    return _relink(edited, at + 1)


def _raw(lines: list[bytes], at: int, text: bytes) -> list[bytes]:
    return [*lines[:at], text, *lines[at + 1 :]]


@pytest.fixture
def written(make_chain, read_lines):
    chain = make_chain("quick", 12)
    chain.close()
    return chain.path, read_lines(chain.path)


def _prov(**values: object):
    def change(record: dict) -> None:
        record["provenance"].update(values)

    return change


MUTATIONS = {
    "untouched": lambda lines: lines,
    "bool index": lambda lines: _edit(lines, 4, _prov(actionIndex=True)),
    "float index": lambda lines: _edit(lines, 4, _prov(actionIndex=4.0)),
    "gap": lambda lines: _edit(lines, 5, _prov(actionIndex=7)),
    "other session": lambda lines: _edit(lines, 6, _prov(sessionId="other")),
    "legacy link": lambda lines: _edit(
        lines, 3, _prov(prevRecordHash=hashlib.sha256(lines[2]).hexdigest()[:16])
    ),
    "wrong link": lambda lines: _edit(lines, 3, _prov(prevRecordHash="0" * 64)),
    "no provenance": lambda lines: _edit(lines, 2, lambda r: r.pop("provenance")),
    "not an object": lambda lines: _raw(lines, 2, b"[1,2,3]"),
    "not json": lambda lines: _raw(lines, 2, b"{oops"),
    "NaN": lambda lines: _raw(lines, 2, lines[2][:-1] + b',"x":NaN}'),
    "big int": lambda lines: _edit(lines, 2, lambda r: r.update(x=1 << 80)),
    "lone surrogate": lambda lines: _relink(_raw(lines, 2, lines[2][:-1] + b',"x":"\\ud800"}'), 3),
    "deep nesting": lambda lines: _relink(
        _raw(lines, 2, lines[2][:-1] + b',"x":' + b"[" * 995 + b"]" * 995 + b"}"), 3
    ),
    "deep nesting, writer's tail kept": lambda lines: _relink(
        _raw(lines, 2, b'{"x":' + b"[" * 995 + b"]" * 995 + b"," + lines[2][1:]), 3
    ),
    "bad utf-8": lambda lines: _raw(lines, 2, lines[2].replace(b'"Bash"', b'"B\xffsh"')),
    "duplicate provenance": lambda lines: _raw(
        lines, 2, lines[2][:-1] + b',"provenance":{"actionIndex":2}}'
    ),
    "swap": lambda lines: [*lines[:3], lines[4], lines[3], *lines[5:]],
    "deleted": lambda lines: [*lines[:3], *lines[4:]],
    "duplicated": lambda lines: [*lines[:3], lines[3], *lines[3:]],
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
@pytest.mark.parametrize("anchored", [False, True])
def test_full_parse_quick_path_gives_the_plain_verdict(
    monkeypatch, tmp_path, written, name, anchored
):
    path, lines = written
    target = tmp_path / "quick.jsonl"
    target.write_bytes(b"".join(line + b"\n" for line in MUTATIONS[name](lines)))
    anchor = read_anchor(path.parent.parent / "sessions" / "quick.anchor") if anchored else None
    kwargs = {"anchor": anchor, "full": True, "session_id": "quick"}
    quick = verify_file(target, **kwargs).to_dict()  # type: ignore[arg-type]
    assert quick == _plain_verify(monkeypatch, target, **kwargs)
    # Valid JSON, well linked: a good chain, unless an anchor holds the head it had before.
    if name == "untouched" or (
        not anchored and name in ("big int", "lone surrogate", "legacy link")
    ):
        assert quick["valid"] and quick["record_count"] == len(lines)
    elif not name.startswith("deep nesting"):  # the verdict depends on the recursion limit
        assert not quick["valid"]


@pytest.mark.parametrize("anchored", [False, True])
def test_a_deep_line_ending_in_the_writers_tail_gets_the_standard_librarys_verdict(
    tmp_path, written, anchored
):
    # Nesting simdjson validates (it allows 1024 levels) and the standard library may not: the
    # line must not be accepted on its tail and a validating parse alone.
    path, lines = written
    lines = MUTATIONS["deep nesting, writer's tail kept"](lines)
    target = tmp_path / "deep.jsonl"
    target.write_bytes(b"".join(line + b"\n" for line in lines))
    expected = line_check.check_line(lines[2], hashlib.sha256(lines[1]).digest().hex(), 2, "quick")
    anchor = read_anchor(path.parent.parent / "sessions" / "quick.anchor") if anchored else None
    report = verify_file(target, anchor, full=True, session_id="quick")
    assert not expected.ok  # nesting beyond the recursion limit: the line does not parse
    assert report.first_bad_index == 2 and report.reason == expected.reason == "parse_error"


def test_full_parse_quick_path_keeps_watched_heads(make_chain, make_draft):
    chain = make_chain("watched", 9)
    witness = chain.witness
    for index in range(3):
        chain.append(make_draft(index))
    chain.close()
    report = verify_chain(chain.storage_dir, "watched", full=True, witness=witness)
    assert report.valid and report.witness_state == "extended"
    forged = type(witness)(witness.count, "f" * 64)
    report = verify_chain(chain.storage_dir, "watched", full=True, witness=forged)
    assert report.reason == "witness_mismatch"


def test_append_writes_the_line_complete_record_would(storage, make_draft, read_lines):
    chain = AuditChain(storage, "same-bytes", agent_id="agent-x")
    records = [chain.append(make_draft(index)) for index in range(6)]
    lines = read_lines(chain.path)
    builder = RecordBuilder(chain.session_id, str(chain.soft_lct), "standard", "agent-x")
    prev_r6, prev_hash = None, "genesis"
    for index, (record, line) in enumerate(zip(records, lines, strict=True)):
        again, role = builder.prepare(make_draft(index), timestamp=record["timestamp"])
        assert complete_record(again, role, index, prev_r6, prev_hash) == line
        assert json.loads(line) == record
        prev_r6, prev_hash = record["r6RequestId"], hashlib.sha256(line).hexdigest()
    chain.close()


TRUNCATE_ANCHOR = r"""
import os, sys
from pytest_harness_audit.audit import AuditChain, RecordDraft
chain = AuditChain(sys.argv[1], "cut")
draft = RecordDraft(tool="Read", category="file_read", target="a", params={"file_path": "a"})
chain.append(draft)
os.truncate(sys.argv[2], 0)
chain.append(draft)
chain.append(draft)
chain.close()
print("alive")
"""


def test_a_truncated_anchor_file_does_not_kill_the_writer(tmp_path):
    storage = tmp_path / "store"
    anchor = StorageLayout.at(storage).paths("cut").anchor
    done = subprocess.run(
        [sys.executable, "-c", TRUNCATE_ANCHOR, str(storage), str(anchor)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alive"
    # The next update rewrote the slots: the anchor is current again.
    assert read_anchor(anchor).count == 3
    assert verify_chain(storage, "cut").anchor_state == "current"


CHUNK_CASES = {
    "untouched": lambda data: data,
    "torn tail": lambda data: data + b'{"recordId":"audit:torn"',
    "empty line": lambda data: data.replace(b"\n", b"\n\n", 3).replace(b"\n\n", b"\n", 2),
    "carriage return": lambda data: data.replace(b'"Bash"', b'"Ba\rsh"', 1),
    "no newline at all": lambda data: data.replace(b"\n", b" "),
    "swap": lambda data: b"\n".join(_swapped(data.split(b"\n"))),
}


def _swapped(lines: list[bytes]) -> list[bytes]:
    return [*lines[:5], lines[6], lines[5], *lines[7:]]


@pytest.mark.parametrize("name", sorted(CHUNK_CASES))
@pytest.mark.parametrize("chunk", [5, 300, 1_000])
def test_verdicts_do_not_depend_on_where_reads_cut_the_file(
    monkeypatch, tmp_path, written, name, chunk
):
    from pytest_harness_audit.audit import scan

    path, lines = written
    target = tmp_path / "cut.jsonl"
    target.write_bytes(CHUNK_CASES[name](b"".join(line + b"\n" for line in lines)))
    anchor = read_anchor(path.parent.parent / "sessions" / "quick.anchor")
    runs = [
        {"anchor": anchor, "session_id": "quick"},
        {"anchor": anchor, "session_id": "quick", "full": True},
        {"anchor": None, "session_id": "quick"},
        {"anchor": anchor, "size_limit": len(b"".join(lines[:7])) + 7 + 3},
    ]
    whole = [verify_file(target, **kwargs).to_dict() for kwargs in runs]  # type: ignore[arg-type]
    monkeypatch.setattr(scan, "_CHUNK", chunk)
    cut = [verify_file(target, **kwargs).to_dict() for kwargs in runs]  # type: ignore[arg-type]
    assert cut == whole
    assert whole[0]["valid"] is (name == "untouched")
    assert not whole[3]["valid"]  # a cut in the middle of a line is a torn tail
