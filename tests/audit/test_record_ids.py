"""Record ids: 8 lowercase hex digits, distinct within a chain, the same whoever appends."""

from __future__ import annotations

import multiprocessing
import re

from pytest_harness_audit.audit import AuditChain, RecordDraft, iter_records
from pytest_harness_audit.audit.record_ids import record_id_at, record_id_key

HEX8 = re.compile(r"[0-9a-f]{8}")
DRAFT = RecordDraft(tool="Read", category="file_read", target="a")


def test_the_ids_of_a_million_indexes_are_distinct():
    # 32 random bits would repeat here almost surely (about 1 - e**-116); a permutation never.
    key = record_id_key("session")
    ids = {record_id_at(index, key) for index in range(1 << 20)}
    assert len(ids) == 1 << 20
    assert all(HEX8.fullmatch(rid) for rid in list(ids)[:1000])


def test_the_permutation_holds_at_the_edges_of_the_32_bit_range():
    key = record_id_key("edges")
    low = [record_id_at(index, key) for index in range(4096)]
    high = [record_id_at(index, key) for index in range(2**32 - 4096, 2**32)]
    assert len(set(low) | set(high)) == 8192


def test_sessions_have_keys_of_their_own():
    assert record_id_key("one") != record_id_key("two")
    assert record_id_at(0, record_id_key("one")) != record_id_at(0, record_id_key("two"))


def test_a_chain_writes_the_id_of_each_records_index(tmp_path):
    with AuditChain(tmp_path, "ids") as chain:
        returned = [chain.append(DRAFT) for _ in range(1100)]
    key = record_id_key("ids")
    stored = list(iter_records(tmp_path, "ids"))
    assert stored == returned
    for index, record in enumerate(stored):
        assert record["recordId"] == "audit:" + record_id_at(index, key)
        assert record["r6RequestId"] == "r6:" + record_id_at(index, key)
    assert len({record["recordId"] for record in stored}) == 1100


def _append(storage: str, count: int) -> None:
    with AuditChain(storage, "shared") as chain:
        for _ in range(count):
            chain.append(DRAFT)


def test_processes_appending_to_one_session_never_repeat_an_id(tmp_path):
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append, args=(str(tmp_path), 300)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    ids = [record["recordId"] for record in iter_records(tmp_path, "shared")]
    assert len(ids) == 900 and len(set(ids)) == 900
