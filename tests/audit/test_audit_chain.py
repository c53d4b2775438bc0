"""Appending, resuming, the anchor, session files, Soft LCT, ids and multi-process safety."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import socket
import threading
import time
from collections import Counter

import pytest

from pytest_harness_audit.audit import (
    AuditChain,
    ChainError,
    iter_records,
    read_anchor,
    repair_chain,
    sanitize_session_id,
    verify_chain,
)
from pytest_harness_audit.audit.anchor import SLOT_SIZE
from pytest_harness_audit.audit.lct import current_username, make_soft_lct
from pytest_harness_audit.audit.storage import StorageLayout


def test_links_are_sha256_of_the_previous_line_and_indices_consecutive(make_chain, read_lines):
    chain = make_chain(count=6)
    lines = read_lines(chain.path)
    records = [json.loads(line) for line in lines]
    assert records[0]["provenance"]["prevRecordHash"] == "genesis"
    for index in range(1, 6):
        expected = hashlib.sha256(lines[index - 1]).hexdigest()
        assert records[index]["provenance"]["prevRecordHash"] == expected
    assert [r["provenance"]["actionIndex"] for r in records] == list(range(6))
    assert [r["reference"]["chainPosition"] for r in records] == list(range(6))
    assert chain.head_hash == hashlib.sha256(lines[-1]).hexdigest()


def test_anchor_is_current_after_every_append(storage, make_draft, read_lines):
    chain = AuditChain(storage, "anchored")
    paths = StorageLayout.at(storage).paths("anchored")
    assert read_anchor(paths.anchor).count == 0
    for index in range(4):
        record = chain.append(make_draft(index))
        anchor = read_anchor(paths.anchor)
        lines = read_lines(chain.path)
        assert anchor.count == index + 1 == len(lines)
        assert anchor.head == hashlib.sha256(lines[-1]).hexdigest()
        assert anchor.size == chain.path.stat().st_size
        assert anchor.last_r6_id == record["r6RequestId"]
    chain.close()


def test_reopening_resumes_count_head_and_action_index(storage, make_draft):
    first = AuditChain(storage, "resume")
    last = [first.append(make_draft(i)) for i in range(3)][-1]
    first.close()
    second = AuditChain(storage, "resume")
    assert second.record_count == 3
    record = second.append(make_draft(3))
    assert record["provenance"]["actionIndex"] == 3
    assert record["reference"]["prevR6Id"] == last["r6RequestId"]
    assert verify_chain(storage, "resume").valid
    second.close()


def test_resume_across_processes(storage, make_draft, start_writer):
    chain = AuditChain(storage, "cross")
    chain.append(make_draft(0))
    process = start_writer(storage, "cross", 5, "child")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    # This object notices the child's appends and continues the chain after them.
    record = chain.append(make_draft(1))
    assert record["provenance"]["actionIndex"] == 6
    assert chain.record_count == 7
    report = verify_chain(storage, "cross")
    assert report.valid and report.record_count == 7
    ids = [r["recordId"] for r in chain.records()]
    assert ids[1:6] == out.split()[1:]
    chain.close()


def test_two_processes_appending_concurrently_lose_and_corrupt_nothing(storage, start_writer):
    per_writer = 150
    writers = [start_writer(storage, "shared", per_writer, tag) for tag in ("A", "B")]
    outputs = [process.communicate(timeout=120) for process in writers]
    for process, (_, err) in zip(writers, outputs, strict=True):
        assert process.returncode == 0, err
    acknowledged = [out.split()[1:] for out, _ in outputs]
    report = verify_chain(storage, "shared")
    assert report.valid, report.errors
    assert report.record_count == 2 * per_writer
    chain = AuditChain(storage, "shared")
    records = list(chain.records())
    assert sorted(r["recordId"] for r in records) == sorted(acknowledged[0] + acknowledged[1])
    for tag in ("A", "B"):
        mine = [int(r["target"].split()[-1]) for r in records if r["target"].split()[1] == tag]
        assert mine == list(range(per_writer))
    chain.close()


def test_threads_sharing_one_chain_object(storage, make_draft):
    chain = AuditChain(storage, "threads")

    def work(offset: int) -> None:
        for index in range(50):
            chain.append(make_draft(offset + index))

    threads = [threading.Thread(target=work, args=(n * 100,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report = verify_chain(storage, "threads")
    assert report.valid and report.record_count == 200
    chain.close()


def test_two_objects_in_one_process_interleave(storage, make_draft):
    one, two = AuditChain(storage, "pair"), AuditChain(storage, "pair")
    for index in range(5):
        one.append(make_draft(index))
        two.append(make_draft(index))
    assert verify_chain(storage, "pair").record_count == 10
    assert verify_chain(storage, "pair").valid
    one.close()
    two.close()


def _kill_writer_loop(storage, start_writer, rounds: int) -> Counter[str]:
    """Kill a writer at random moments; return how the chain looked after each kill."""
    rng = random.Random(7)
    acknowledged: list[str] = []
    states: Counter[str] = Counter()
    for round_number in range(rounds):
        process = start_writer(storage, "killed", -1, f"r{round_number}")
        assert process.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.0, 0.03))
        process.send_signal(signal.SIGKILL)
        # Read through the same buffered stream as readline() (communicate() would skip its
        # read-ahead buffer and lose ids).
        rest = process.stdout.read()
        process.wait(timeout=30)
        acknowledged += rest.split()
        present = {record["recordId"] for record in iter_records(storage, "killed")}
        missing = [rid for rid in acknowledged if rid not in present]
        assert not missing, f"round {round_number}: acknowledged but lost: {missing}"
        report = verify_chain(storage, "killed")
        if report.valid:
            states["current"] += 1
        elif report.reason == "extra_records" and report.anchor_state == "behind":
            states["behind"] += 1  # written, not yet anchored: the next opener adopts it
        else:
            assert report.reason == "torn_tail", report
            states["torn"] += 1  # a write cut short at a page boundary: repair removes it
            assert repair_chain(storage, "killed").repaired
        AuditChain(storage, "killed").close()
        after = verify_chain(storage, "killed")
        assert after.valid, (report, after)
    return states


def test_kill_minus_nine_loses_no_acknowledged_record(storage, start_writer):
    states = _kill_writer_loop(storage, start_writer, rounds=4)
    assert sum(states.values()) == 4


@pytest.mark.slow
def test_kill_minus_nine_many_rounds(storage, start_writer):
    states = _kill_writer_loop(storage, start_writer, rounds=60)
    assert states["current"] > 0, states


def test_interrupted_append_is_reported_then_adopted_on_reopen(storage, make_draft):
    chain = AuditChain(storage, "interrupted")
    for index in range(3):
        chain.append(make_draft(index))
    paths = StorageLayout.at(storage).paths("interrupted")
    before = paths.anchor.read_bytes()
    chain.append(make_draft(3))
    chain.close()
    paths.anchor.write_bytes(before)  # as if killed between the write and the anchor update
    report = verify_chain(storage, "interrupted")
    assert not report.valid
    assert (report.reason, report.anchor_state, report.first_bad_index) == (
        "extra_records",
        "behind",
        3,
    )
    reopened = AuditChain(storage, "interrupted")
    assert reopened.record_count == 4
    assert reopened.append(make_draft(4))["provenance"]["actionIndex"] == 4
    assert verify_chain(storage, "interrupted").valid
    reopened.close()


def test_torn_anchor_slot_falls_back_one_append(storage, make_draft):
    chain = AuditChain(storage, "torn-anchor")
    for index in range(5):
        chain.append(make_draft(index))
    chain.close()
    paths = StorageLayout.at(storage).paths("torn-anchor")
    data = bytearray(paths.anchor.read_bytes())
    data[SLOT_SIZE + 30] ^= 0x01  # the slot of count 5 (odd) is the second one
    paths.anchor.write_bytes(bytes(data))
    assert read_anchor(paths.anchor).count == 4
    report = verify_chain(storage, "torn-anchor")
    assert report.anchor_state == "behind"


def test_opening_removes_a_torn_tail_past_the_anchor_and_records_it(
    storage, make_draft, list_dead_writer
):
    chain = AuditChain(storage, "torn")
    for index in range(3):
        chain.append(make_draft(index))
    chain.close()
    intact = chain.path.read_bytes()
    fragment = b'{"recordId":"audit:dead'
    chain.path.write_bytes(intact + fragment)
    list_dead_writer(chain.session_file)  # the writer killed mid-write
    assert verify_chain(storage, "torn").reason == "torn_tail"
    with AuditChain(storage, "torn") as reopened:
        assert reopened.record_count == 3
        reopened.append(make_draft(3))
    assert chain.path.read_bytes().startswith(intact + b'{"recordId":"audit:')
    assert verify_chain(storage, "torn").valid
    repairs = json.loads(chain.session_file.read_text())["repairs"]
    assert repairs[0]["by"] == "writer"
    assert repairs[0]["removedBytes"] == len(fragment)
    assert repairs[0]["offset"] == len(intact)


def test_a_live_chain_object_also_removes_a_dead_writers_torn_tail(
    storage, make_draft, list_dead_writer
):
    chain = AuditChain(storage, "live")
    chain.append(make_draft(0))
    with open(chain.path, "ab") as handle:  # another writer died mid-write
        handle.write(b'{"recordId":"audit:0')
    list_dead_writer(chain.session_file)
    record = chain.append(make_draft(1))
    assert record["provenance"]["actionIndex"] == 1
    assert verify_chain(storage, "live").valid
    chain.close()


def test_an_incomplete_line_no_writer_left_is_refused_not_removed(storage, make_draft):
    # bytes appended behind the writers' backs (a call's own process writing to the chain):
    # removing them as a dead writer's torn tail would erase the evidence of the attempt
    chain = AuditChain(storage, "behind")
    chain.append(make_draft(0))
    with open(chain.path, "ab") as handle:
        handle.write(b"x")
    with pytest.raises(ChainError, match="no writer of this session died mid-write"):
        chain.append(make_draft(1))
    chain.close()
    assert chain.path.read_bytes().endswith(b"\nx")  # kept for whoever verifies
    assert verify_chain(storage, "behind").reason == "torn_tail"
    with pytest.raises(ChainError, match="no writer of this session died mid-write"):
        AuditChain(storage, "behind")


def test_opening_refuses_a_truncated_chain(storage, make_draft):
    chain = AuditChain(storage, "refuse")
    for index in range(3):
        chain.append(make_draft(index))
    chain.close()
    original = chain.path.read_bytes()
    chain.path.write_bytes(original[: original.rfind(b"\n", 0, -1) + 1])
    with pytest.raises(ChainError, match="truncated"):
        AuditChain(storage, "refuse")
    chain.path.write_bytes(original[:-10])  # a torn line inside the anchored range
    with pytest.raises(ChainError, match="truncated"):
        AuditChain(storage, "refuse")


def test_opening_refuses_several_unanchored_records(storage, make_draft):
    chain = AuditChain(storage, "several")
    chain.append(make_draft(0))
    paths = StorageLayout.at(storage).paths("several")
    anchor = paths.anchor.read_bytes()
    chain.append(make_draft(1))
    chain.append(make_draft(2))
    chain.close()
    paths.anchor.write_bytes(anchor)
    with pytest.raises(ChainError, match="2 unanchored records"):
        AuditChain(storage, "several")


def test_opening_refuses_an_existing_session_without_anchor(storage, make_draft):
    AuditChain(storage, "no-anchor").append(make_draft(0))
    StorageLayout.at(storage).paths("no-anchor").anchor.unlink()
    with pytest.raises(ChainError, match="anchor missing"):
        AuditChain(storage, "no-anchor")


def test_append_after_close_is_refused(storage, make_draft):
    chain = AuditChain(storage, "closed")
    chain.close()
    with pytest.raises(ChainError, match="closed"):
        chain.append(make_draft(0))


def test_fsync_mode_appends_valid_records(storage, make_draft):
    with AuditChain(storage, "durable", fsync=True) as chain:
        for index in range(3):
            chain.append(make_draft(index))
    assert verify_chain(storage, "durable").valid


def test_session_file_keeps_lct_metadata_and_anchor_snapshot(storage, make_draft):
    chain = AuditChain(storage, "meta", audit_level="verbose", agent_id="bot")
    chain.append(make_draft(0))
    chain.close()
    data = json.loads(chain.session_file.read_text(encoding="utf-8"))
    assert data["sessionId"] == "meta"
    assert data["auditLevel"] == "verbose"
    assert data["agentId"] == "bot"
    assert data["lct"]["tokenId"] == chain.soft_lct.token_id
    assert data["lct"]["bindingType"] == "software"
    assert data["anchor"]["recordCount"] == 1
    assert data["anchor"]["head"] == chain.head_hash


def test_soft_lct_format():
    lct = make_soft_lct("session-abcdef-123", hostname="box", username="ann")
    machine = hashlib.sha256(b"box:ann").hexdigest()[:8]
    assert lct.token_id == f"web4:session:{machine}:session-"
    assert str(lct) == lct.token_id
    assert lct.binding_type == "software"
    here = make_soft_lct("xy")
    local = hashlib.sha256(f"{socket.gethostname()}:{current_username()}".encode()).hexdigest()
    assert here.token_id == f"web4:session:{local[:8]}:xy"


def test_soft_lct_is_stable_across_reopen(storage):
    first = AuditChain(storage, "stable").soft_lct
    assert AuditChain(storage, "stable").soft_lct == first


@pytest.mark.parametrize(
    "raw", ["../../etc/passwd", "a/b", "..", ".hidden", "sp ace", "ünïcode", "x" * 300, "a\0b"]
)
def test_session_ids_are_sanitised_into_the_storage_directory(storage, make_draft, raw):
    chain = AuditChain(storage, raw)
    chain.append(make_draft(0))
    safe = chain.session_id
    assert safe == sanitize_session_id(raw)
    assert chain.path.parent == storage / "audit"
    assert chain.path.name == f"{safe}.jsonl"
    assert not safe.startswith(".") and "/" not in safe and len(safe) <= 110
    assert verify_chain(storage, raw).valid
    chain.close()


def test_sanitised_ids_do_not_collide():
    assert sanitize_session_id("a/b") != sanitize_session_id("a_b")
    assert sanitize_session_id("plain-id_1.2") == "plain-id_1.2"
    with pytest.raises(Exception, match="non-empty"):
        sanitize_session_id("")


def test_forked_child_and_parent_exclude_each_other(storage, make_draft):
    chain = AuditChain(storage, "forked")
    chain.append(make_draft(0))
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child appends through the object it inherited
        os.close(read_end)
        try:
            for index in range(1500):
                chain.append(make_draft(10000 + index))
            os.write(write_end, b"ok")
        finally:
            os._exit(0)
    os.close(write_end)
    for index in range(1500):
        chain.append(make_draft(index))
    os.waitpid(pid, 0)
    assert os.read(read_end, 2) == b"ok"
    os.close(read_end)
    report = verify_chain(storage, "forked")
    assert report.valid, report.errors
    assert report.record_count == 3001
    chain.close()
