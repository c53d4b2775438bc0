"""Audit chain throughput: appends, verification, bare hashing and peak memory.

    python -m pytest_harness_audit.bench.chain [--records N] [--quick] [--dir DIR]

Appends ``N`` records (default 1,000,000; ``--quick``: 100,000) through ``AuditChain.append`` with
the anchor kept current, then a smaller run with ``fsync=True``; verifies the chain against its
anchor (and once more parsing every line); SHA-256-hashes every line of the same file as the
floor any verifier must pay; and measures verification's peak memory in a fresh process.
Timings are wall clock, best of ``--repeat`` runs for the read-only steps, on a warm page cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path

from pytest_harness_audit.audit import AuditChain, RecordDraft, verify_chain

APPEND_TARGET = 94_000
VERIFY_TARGET = 282_000
RATIO_TARGET = 3.0
MEMORY_TARGET_MB = 100

_PEAK_SCRIPT = """
import json, resource, sys
from pytest_harness_audit.audit import verify_chain
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = verify_chain(sys.argv[1], sys.argv[2])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"valid": report.valid, "count": report.record_count,
                  "baseline_kb": before, "peak_kb": after}))
"""


def sample_drafts() -> list[RecordDraft]:
    """A mix of calls such as a test session produces (allow, warn, dry-run and enforced deny)."""
    drafts = []
    for index in range(64):
        kind = index % 4
        if kind == 0:
            command = f"git status --porcelain && pytest -q tests/test_{index}.py"
            drafts.append(
                RecordDraft(
                    tool="Bash",
                    category="command",
                    target=command,
                    targets=(command,),
                    params={"command": command, "timeout": 120},
                    constraints=("policy:allow", "rule:default"),
                    output=f" M src/module_{index}.py\n1 passed in 0.02s\n",
                    duration_ms=41.7,
                    agent_id="agent-1",
                )
            )
        elif kind == 1:
            path = f"/workspace/src/package/module_{index}.py"
            drafts.append(
                RecordDraft(
                    tool="Read",
                    category="file_read",
                    target=path,
                    targets=(path,),
                    params={"file_path": path},
                    constraints=("policy:allow", "rule:default"),
                    output={"lines": 120, "truncated": False},
                    duration_ms=0.8,
                    agent_id="agent-1",
                )
            )
        elif kind == 2:
            url = f"https://docs.example.org/page/{index}"
            drafts.append(
                RecordDraft(
                    tool="WebFetch",
                    category="network",
                    target=url,
                    targets=(url,),
                    params={"url": url, "prompt": "summarise"},
                    constraints=("policy:warn", "rule:warn-network"),
                    status="error",
                    error_message="connection timed out",
                    duration_ms=3000.0,
                    agent_id="agent-1",
                )
            )
        else:
            drafts.append(
                RecordDraft(
                    tool="Read",
                    category="file_read",
                    target="/workspace/.env",
                    targets=("/workspace/.env",),
                    params={"file_path": "/workspace/.env"},
                    constraints=("policy:deny", "rule:deny-secret-files"),
                    status="blocked",
                    error_message="[policy] Secret file access denied by safety preset",
                    agent_id="agent-1",
                )
            )
    return drafts


def time_appends(storage: Path, session: str, count: int, *, fsync: bool) -> float:
    """Append ``count`` records; return records per second (wall clock)."""
    drafts = sample_drafts()
    with AuditChain(storage, session, fsync=fsync) as chain:
        append = chain.append
        start = time.perf_counter()
        for index in range(count):
            append(drafts[index & 63])
        elapsed = time.perf_counter() - start
    return count / elapsed


def best_of(repeat: int, action: Callable[[], object]) -> float:
    """Shortest wall time of ``repeat`` runs of ``action``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def hash_every_line(path: Path) -> int:
    """SHA-256 of every line of ``path``: the floor cost of any verification."""
    sha256 = hashlib.sha256
    count = 0
    with path.open("rb") as handle:
        for line in handle:
            sha256(line).digest()
            count += 1
    return count


def peak_memory(storage: Path, session: str) -> dict[str, int]:
    """Verify in a fresh process and return its peak resident size (KiB) before and after."""
    output = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, str(storage), session],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, int] = json.loads(output)
    return result


def traced_peak(storage: Path, session: str) -> int:
    """Peak bytes allocated by Python during one verification (tracemalloc)."""
    tracemalloc.start()
    try:
        verify_chain(storage, session)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def run(records: int, fsync_records: int, repeat: int, directory: Path) -> int:
    """Run every measurement and print the table; return 0 if every target is met."""
    storage = directory / "store"
    print(
        f"audit chain benchmark: {records:,} records, {os.cpu_count()} CPUs, Python "
        f"{sys.version.split()[0]}, storage {storage}"
    )
    appends = time_appends(storage, "bench", records, fsync=False)
    chain_path = storage / "audit" / "bench.jsonl"
    size_mb = chain_path.stat().st_size / 1e6
    synced = time_appends(storage, "bench-fsync", fsync_records, fsync=True)

    report = verify_chain(storage, "bench")
    if not report.valid or report.record_count != records:
        print(f"verification failed: {report}")
        return 1
    verify_seconds = best_of(repeat, lambda: verify_chain(storage, "bench"))
    full_seconds = best_of(1, lambda: verify_chain(storage, "bench", full=True))
    hash_seconds = best_of(repeat, lambda: hash_every_line(chain_path))
    memory = peak_memory(storage, "bench")
    traced = traced_peak(storage, "bench")

    verify_rate = records / verify_seconds
    ratio = verify_seconds / hash_seconds
    peak_mb = memory["peak_kb"] / 1024
    rows = [
        ("chain file", f"{size_mb:,.0f} MB ({size_mb * 1e6 / records:.0f} bytes/record)", ""),
        (
            "append, no fsync, anchor current",
            f"{appends:,.0f} records/s",
            f"target >= {APPEND_TARGET:,}: {_verdict(appends >= APPEND_TARGET)}",
        ),
        ("append, fsync (line + anchor)", f"{synced:,.0f} records/s", f"{fsync_records:,} records"),
        (
            "verify against anchor",
            f"{verify_rate:,.0f} records/s",
            f"target >= {VERIFY_TARGET:,}: {_verdict(verify_rate >= VERIFY_TARGET)}",
        ),
        ("verify, every line parsed (--full)", f"{records / full_seconds:,.0f} records/s", ""),
        ("bare SHA-256 of every line", f"{records / hash_seconds:,.0f} lines/s", ""),
        (
            "verify time / bare hashing time",
            f"{ratio:.2f}x",
            f"target <= {RATIO_TARGET:.0f}x: {_verdict(ratio <= RATIO_TARGET)}",
        ),
        (
            "verify peak memory (process RSS)",
            f"{peak_mb:.1f} MB (after imports {memory['baseline_kb'] / 1024:.1f} MB)",
            f"target < {MEMORY_TARGET_MB} MB: {_verdict(peak_mb < MEMORY_TARGET_MB)}",
        ),
        ("verify peak Python allocations", f"{traced / 1e6:.1f} MB (tracemalloc)", ""),
    ]
    width = max(len(name) for name, _, _ in rows)
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:<40} {note}".rstrip())
    met = (
        appends >= APPEND_TARGET
        and verify_rate >= VERIFY_TARGET
        and ratio <= RATIO_TARGET
        and peak_mb < MEMORY_TARGET_MB
    )
    return 0 if met else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run in a temporary directory (or ``--dir``), print the figures."""
    parser = argparse.ArgumentParser(prog="python -m pytest_harness_audit.bench.chain")
    parser.add_argument("--records", type=int, help="records to append and verify")
    parser.add_argument("--quick", action="store_true", help="100,000 records")
    parser.add_argument("--fsync-records", type=int, default=None, help="records with fsync")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each read-only step")
    parser.add_argument("--dir", type=Path, help="work here (kept) instead of a temporary dir")
    args = parser.parse_args(argv)
    records = args.records or (100_000 if args.quick else 1_000_000)
    fsync_records = args.fsync_records or (300 if args.quick else 2_000)
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        return run(records, fsync_records, args.repeat, args.dir)
    directory = Path(tempfile.mkdtemp(prefix="harness-audit-bench-"))
    try:
        return run(records, fsync_records, args.repeat, directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
