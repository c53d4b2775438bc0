"""Crash: writers killed with SIGKILL at random points lose no acknowledged record.

Each round starts a writer process on the same session, lets it acknowledge a random number of
appends, waits a random moment more, and kills it with SIGKILL. Then:

* every record the writer acknowledged (``append`` returned) is in the chain;
* the chain is valid, or at most one write is left over: an unanchored record (killed between
  the write and the anchor update) or a torn final line;
* ``harness-audit audit repair SESSION`` leaves a chain that verifies;
* appending resumes at the next action index.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from reliability_support import CHAIN_WRITER, bash_draft, run_cli

from pytest_harness_audit.audit import AuditChain, verify_chain

SESSION = "crash"
FAST_KILLS = 10
SLOW_KILLS = 100
ROUND_TIMEOUT = 30.0


def _chain_records(storage: Path) -> list[dict[str, Any]]:
    """The complete, parseable lines of the chain (a torn tail left out)."""
    data = (storage / "audit" / f"{SESSION}.jsonl").read_bytes()
    return [json.loads(line) for line in data.split(b"\n")[:-1]]


def _kill_round(storage: Path, rng: random.Random, tag: str) -> list[str]:
    """Run one writer until a random moment, SIGKILL it; return the ids it acknowledged."""
    process = subprocess.Popen(
        [sys.executable, str(CHAIN_WRITER), str(storage), SESSION, "-1", tag],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n", process.stderr.read()  # type: ignore[union-attr]
        acknowledged = [process.stdout.readline().split()[0] for _ in range(rng.randrange(0, 40))]
        time.sleep(rng.choice([0.0, 0.0, rng.uniform(0, 0.002), rng.uniform(0, 0.02)]))
        process.send_signal(signal.SIGKILL)
        # Read through the same buffered stream as readline() did.
        rest = process.stdout.read()
        process.wait(timeout=ROUND_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    assert process.returncode == -signal.SIGKILL
    return acknowledged + [line.split()[0] for line in rest.splitlines()]


def _crash_rounds(storage: Path, rounds: int, seed: int, counts: Any) -> Counter[str]:
    rng = random.Random(seed)
    acknowledged: list[str] = []
    states: Counter[str] = Counter()
    for number in range(rounds):
        acknowledged += _kill_round(storage, rng, f"r{number}")
        counts.add("crash", "kills")
        present = {record["recordId"] for record in _chain_records(storage)}
        lost = [rid for rid in acknowledged if rid not in present]
        assert not lost, f"round {number}: acknowledged but lost: {lost}"

        report = verify_chain(storage, SESSION)
        if report.valid:
            state = "valid"
        elif report.reason == "extra_records" and report.anchor_state == "behind":
            state = "unanchored record"
        else:
            assert report.reason == "torn_tail", report
            state = "torn tail"
        states[state] += 1
        counts.detail("crash", state)

        if not report.valid:
            repair = run_cli(["--storage", str(storage), "audit", "repair", SESSION])
            assert repair.code == 0, (state, repair)
            counts.add("crash", "repairs")
        after = verify_chain(storage, SESSION)
        assert after.valid, (state, report, after)

        with AuditChain(storage, SESSION) as chain:
            record = chain.append(bash_draft(f"echo resumed {number}"))
        assert record["provenance"]["actionIndex"] == after.record_count
        assert verify_chain(storage, SESSION).valid
    counts.add("crash", "acknowledged records kept", len(acknowledged))
    return states


def test_sigkilled_writers_lose_no_acknowledged_record(
    tmp_path: Path, reliability_counts: Any
) -> None:
    states = _crash_rounds(tmp_path, FAST_KILLS, seed=11, counts=reliability_counts)
    assert sum(states.values()) == FAST_KILLS


@pytest.mark.slow
def test_sigkilled_writers_many_rounds(tmp_path: Path, reliability_counts: Any) -> None:
    states = _crash_rounds(tmp_path, SLOW_KILLS, seed=29, counts=reliability_counts)
    assert sum(states.values()) == SLOW_KILLS


def _interrupted_append(storage: Path) -> None:
    """Three anchored records and a fourth whose anchor update never happened."""
    with AuditChain(storage, SESSION) as chain:
        for index in range(3):
            chain.append(bash_draft(f"echo {index}"))
        anchor_file = storage / "sessions" / f"{SESSION}.anchor"
        before = anchor_file.read_bytes()
        chain.append(bash_draft("echo 3"))
    anchor_file.write_bytes(before)


def test_repair_anchors_an_interrupted_append(tmp_path: Path) -> None:
    _interrupted_append(tmp_path)
    assert verify_chain(tmp_path, SESSION).anchor_state == "behind"
    repair = run_cli(["--storage", str(tmp_path), "audit", "repair", SESSION])
    assert repair.code == 0, repair
    assert "Anchored an interrupted append" in repair.stdout
    report = verify_chain(tmp_path, SESSION)
    assert (report.valid, report.record_count) == (True, 4)
    session = json.loads((tmp_path / "sessions" / f"{SESSION}.json").read_text())
    assert session["repairs"][-1]["action"] == "anchored an interrupted append"


def test_repair_removes_a_torn_tail_after_an_interrupted_append(tmp_path: Path) -> None:
    _interrupted_append(tmp_path)
    chain_file = tmp_path / "audit" / f"{SESSION}.jsonl"
    with chain_file.open("ab") as handle:
        handle.write(b'{"recordId":"audit:0')
    repair = run_cli(["--storage", str(tmp_path), "audit", "repair", SESSION, "--json"])
    assert repair.code == 0, repair
    result = json.loads(repair.stdout)
    assert (result["removedBytes"], result["adoptedRecords"]) == (20, 1)
    assert verify_chain(tmp_path, SESSION).valid


def test_repair_still_refuses_two_unanchored_records(tmp_path: Path) -> None:
    _interrupted_append(tmp_path)
    chain_file = tmp_path / "audit" / f"{SESSION}.jsonl"
    lines = chain_file.read_bytes().split(b"\n")[:-1]
    chain_file.write_bytes(b"".join(line + b"\n" for line in [*lines, lines[-1]]))
    repair = run_cli(["--storage", str(tmp_path), "audit", "repair", SESSION])
    assert repair.code == 1 and "Refusing to repair" in repair.stdout
    assert not verify_chain(tmp_path, SESSION).valid
