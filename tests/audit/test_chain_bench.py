"""The chain benchmark runs end to end on a small chain and prints every figure."""

from __future__ import annotations

import re

import pytest

from pytest_harness_audit.bench import chain as chain_bench


@pytest.mark.slow
def test_chain_benchmark_prints_every_row_for_a_small_chain(tmp_path, capsys):
    options = ["--records", "2000", "--fsync-records", "5", "--repeat", "1", "--distinct"]
    status = chain_bench.main([*options, "--dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert status in (0, 1)  # 1 only when this machine misses a speed target
    for row in (
        "append, no fsync, anchor current",
        "append, distinct drafts",
        "append, fsync (line + anchor)",
        "verify against anchor",
        "bare SHA-256 of every line",
        "verify peak memory (process RSS)",
    ):
        assert re.search(rf"^  {re.escape(row)} +[\d,.]+ ", out, re.MULTILINE), row
    assert re.search(r"^  verify --full time / bare hashing +[\d.]+x wall", out, re.MULTILINE)
    assert "verification failed" not in out
    assert not (tmp_path / "store").exists()  # the first chain made room for the second
    assert not (tmp_path / "distinct").exists()


def test_drafts_of_the_benchmark_differ_and_cover_every_decision():
    drafts = [chain_bench.make_draft(index, unique=True) for index in range(8)]
    assert len({draft.target for draft in drafts}) == 8
    assert {draft.status for draft in drafts} == {"success", "error", "blocked"}
    assert {draft.constraints[0] for draft in drafts} == {
        "policy:allow",
        "policy:warn",
        "policy:deny",
    }
