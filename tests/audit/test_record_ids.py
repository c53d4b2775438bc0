"""Record ids: 8 random lowercase hex digits, never repeated within a batch or across a fork."""

from __future__ import annotations

import os
import re

import pytest

from pytest_harness_audit.audit import AuditChain, RecordDraft, records

HEX8 = re.compile(r"[0-9a-f]{8}")


def test_a_batch_is_512_distinct_ids_cut_from_the_random_bytes(monkeypatch):
    data = bytes(range(256)) * 8
    monkeypatch.setattr(records.os, "urandom", lambda size: data[:size])
    take = records._id_batch()
    ids = [take() for _ in range(512)]
    assert ids == [data[i : i + 4].hex() for i in range(0, 2048, 4)]
    with pytest.raises(StopIteration):
        take()


def test_ids_stay_distinct_past_a_refill(tmp_path):
    with AuditChain(tmp_path, "ids") as chain:
        draft = RecordDraft(tool="Read", category="file_read", target="a")
        ids = [chain.append(draft)["recordId"] for _ in range(1100)]
    assert len(set(ids)) == len(ids)
    assert all(rid.startswith("audit:") and HEX8.fullmatch(rid[6:]) for rid in ids)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_draws_ids_of_its_own():
    records._next_id()  # the parent holds a batch
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        os.write(write, " ".join(_draw(8)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = pipe.read().split()
    os.waitpid(pid, 0)
    parent = _draw(8)
    assert len(child) == 8 and not set(child) & set(parent)


def _draw(count: int) -> list[str]:
    out = []
    for _ in range(count):
        try:
            out.append(records._next_id())
        except StopIteration:
            out.append(records._refill_ids())
    return out
