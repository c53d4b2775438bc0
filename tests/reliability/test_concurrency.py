"""Concurrency: several processes append at once — to one session and to sessions of their own.

Writers (``chain_writer.py``) are started together behind a start line. Afterwards every chain
verifies, the record counts add up to what the writers acknowledged, action indexes run
0, 1, 2, … without a gap or a repeat, and each writer's own records keep its order.
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from reliability_support import CHAIN_WRITER

from pytest_harness_audit.audit import iter_records, verify_chain

WRITERS = 4
FAST_APPENDS = 150
SLOW_APPENDS = 2000
TIMEOUT = 120.0


def _run_writers(storage: Path, jobs: list[tuple[str, str]], count: int, *extra: str) -> None:
    """Start one writer per ``(session, tag)`` job, release them together, wait for all."""
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                str(CHAIN_WRITER),
                str(storage),
                session,
                str(count),
                tag,
                "--wait",
                *extra,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for session, tag in jobs
    ]
    try:
        for process in processes:
            assert process.stdout is not None and process.stdout.readline() == "ready\n"
        for process in processes:
            assert process.stdin is not None
            try:
                process.stdin.write("go\n")
                process.stdin.flush()
            except BrokenPipeError:
                process.wait()
                raise AssertionError(process.stderr.read()) from None
        for process in processes:
            # Acknowledgements stay well below a pipe's capacity: wait, then read through the
            # same buffered stream readline() used (communicate() would skip its buffer).
            process.wait(timeout=TIMEOUT)
            assert process.stdout is not None and process.stderr is not None
            out, err = process.stdout.read(), process.stderr.read()
            assert process.returncode == 0, err
            assert len(out.splitlines()) == count  # every append acknowledged
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.communicate()


def _check_chain(storage: Path, session: str, expected_calls: int) -> list[dict[str, Any]]:
    report = verify_chain(storage, session, full=True)
    assert report.valid, report.errors
    records = list(iter_records(storage, session))
    assert report.record_count == len(records)
    assert [r["provenance"]["actionIndex"] for r in records] == list(range(len(records)))
    assert len({r["recordId"] for r in records}) == len(records)
    assert sum(1 for r in records if r["kind"] == "call") == expected_calls
    return records


def _writers_keep_their_order(records: list[dict[str, Any]], key: Any) -> dict[str, int]:
    """Per writer tag, the indexes its records carry must be 0, 1, 2, … in chain order."""
    seen: dict[str, list[int]] = defaultdict(list)
    for record in records:
        found = key(record)
        if found is not None:
            tag, index = found
            seen[tag].append(index)
    for tag, indexes in seen.items():
        assert indexes == list(range(len(indexes))), tag
    return {tag: len(indexes) for tag, indexes in seen.items()}


def _bash_tag(record: dict[str, Any]) -> tuple[str, int] | None:
    _, tag, index = record["target"].split(" ")
    return tag, int(index)


def _concurrent_appends(storage: Path, count: int, counts: Any) -> None:
    shared = [("shared", f"w{n}") for n in range(WRITERS)]
    own = [(f"own{n}", f"o{n}") for n in range(WRITERS)]
    _run_writers(storage, shared + own, count)
    records = _check_chain(storage, "shared", WRITERS * count)
    per_writer = _writers_keep_their_order(records, _bash_tag)
    assert per_writer == {tag: count for _, tag in shared}
    for session, _ in own:
        _check_chain(storage, session, count)
    counts.add("concurrency", "writers", 2 * WRITERS)
    counts.add("concurrency", "appends", 2 * WRITERS * count)
    counts.add("concurrency", "chains verified", 1 + WRITERS)


def test_processes_append_to_one_session_and_to_their_own(
    tmp_path: Path, reliability_counts: Any
) -> None:
    _concurrent_appends(tmp_path, FAST_APPENDS, reliability_counts)


@pytest.mark.slow
def test_processes_append_many_records(tmp_path: Path, reliability_counts: Any) -> None:
    _concurrent_appends(tmp_path, SLOW_APPENDS, reliability_counts)


def _gate_tag(record: dict[str, Any]) -> tuple[str, int] | None:
    params = record["request"].get("params") or {}
    if record["kind"] != "call" or "tag" not in params:
        return None
    tag, index = params["tag"].split(" ")
    return tag, int(index)


def test_gates_in_several_processes_share_one_session(
    tmp_path: Path, reliability_counts: Any
) -> None:
    count = 40
    jobs = [("gated", f"g{n}") for n in range(WRITERS)]
    _run_writers(tmp_path, jobs, count, "--gate")
    records = _check_chain(tmp_path, "gated", WRITERS * count)
    assert _writers_keep_their_order(records, _gate_tag) == {tag: count for _, tag in jobs}
    calls = [r for r in records if r["kind"] == "call"]
    # every read of .env was denied, whichever process made it
    secret_reads = [r for r in calls if r["request"]["params"]["file_path"] == ".env"]
    assert secret_reads and all(r["result"]["status"] == "blocked" for r in secret_reads)
    # the immune ladder saw the denials of every process: it escalated
    assert any(r["kind"] == "escalation" for r in records)
    reliability_counts.add("concurrency", "gated calls", len(calls))
