"""Audit chain throughput: appends, verification, bare hashing and peak memory.

    python -m pytest_harness_audit.bench.chain [--records N] [--quick] [--distinct] [--dir DIR]

Appends ``N`` records (default 1,000,000; ``--quick``: 100,000) through ``AuditChain.append`` with
the anchor kept current, and times the system-call floor of the same appends: one ``write`` of each
line and one ``pwrite`` of an anchor slot, the same bytes, nothing else (once more with the
append's lock and length check, and once more hashing each line as well: the link no append can
skip, so the floor of any implementation). 64 drafts are reused round and round; ``--distinct``
also times a chain in which every record has a draft of its own. Then a smaller run with
``fsync=True``; verifies the chain against its anchor (and once more parsing every line, the
targets of ``verify --full``); SHA-256-hashes every line of the same file as the floor any verifier
must pay; and measures verification's peak memory in a fresh process. Each timed write step starts
after ``os.sync()``, so that it does not pay for the writeback of the steps before it. With
``cryptography`` installed, it also times signing the session-end checkpoint: of the writer's in-
memory witness (what a session does at its end), and of a chain read from disk (verified first, as
``harness-audit audit checkpoint`` does). Each figure is given twice: by wall clock, and by the CPU
time of this process (user + system), which is what a busy shared machine distorts least. Read-only
steps take the best of ``--repeat`` runs, verification, bare hashing and full verification
alternating, on a warm page cache.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

from pytest_harness_audit.audit import AuditChain, RecordDraft, verify_chain
from pytest_harness_audit.audit.provenance_parse import parser_name
from pytest_harness_audit.bench.floors import floor_lines, hash_every_line, syscall_floor
from pytest_harness_audit.bench.timing import Timing

APPEND_TARGET = 188_000
VERIFY_TARGET = 582_000
FULL_TARGET = 282_000
RATIO_TARGET = 1.3
MEMORY_TARGET_MB = 100
_DISTINCT_BATCH = 100_000

_PEAK_SCRIPT = """
import json, resource, sys

def peak_kb():
    # VmHWM is this process image's own peak: ru_maxrss would carry over the peak of the
    # parent that forked us (it survives exec), which is not what verifying cost
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

from pytest_harness_audit.audit import verify_chain
before = peak_kb()
report = verify_chain(sys.argv[1], sys.argv[2], full=len(sys.argv) > 3)
after = peak_kb()
print(json.dumps({"valid": report.valid, "count": report.record_count,
                  "baseline_kb": before, "peak_kb": after}))
"""


def make_draft(index: int, *, unique: bool = False) -> RecordDraft:
    """One call of the mix a test session produces (allow, warn, dry-run and enforced deny).

    Drafts of different ``index`` differ in target and parameters, except that every fourth one
    is a denied read of the same secret file unless ``unique`` gives each its own file.
    """
    kind = index % 4
    if kind == 0:
        command = f"git status --porcelain && pytest -q tests/test_{index}.py"
        return RecordDraft(
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
    if kind == 1:
        path = f"/workspace/src/package/module_{index}.py"
        return RecordDraft(
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
    if kind == 2:
        url = f"https://docs.example.org/page/{index}"
        return RecordDraft(
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
    secret = f"/workspace/.env.{index}" if unique else "/workspace/.env"
    return RecordDraft(
        tool="Read",
        category="file_read",
        target=secret,
        targets=(secret,),
        params={"file_path": secret},
        constraints=("policy:deny", "rule:deny-secret-files"),
        status="blocked",
        error_message="[policy] Secret file access denied by safety preset",
        agent_id="agent-1",
    )


def sample_drafts() -> list[RecordDraft]:
    """64 drafts, appended round and round by the main append measurement."""
    return [make_draft(index) for index in range(64)]


def time_appends(storage: Path, session: str, count: int, *, fsync: bool) -> Timing:
    """Append ``count`` records (the anchor kept current) and time it."""
    drafts = sample_drafts()
    timing = Timing()
    with AuditChain(storage, session, fsync=fsync) as chain:
        append = chain.append

        def appends() -> None:
            for index in range(count):
                append(drafts[index & 63])

        timing.measure(appends)
    return timing


def time_distinct_appends(storage: Path, session: str, count: int) -> Timing:
    """Like ``time_appends``, but every record from a draft of its own, built before timing.

    Drafts are built in batches (keeping memory bounded); only the appends are timed.
    """
    total = Timing()
    total.wall = total.cpu = 0.0
    with AuditChain(storage, session) as chain:
        append = chain.append
        for start in range(0, count, _DISTINCT_BATCH):
            drafts = [
                make_draft(index, unique=True)
                for index in range(start, min(count, start + _DISTINCT_BATCH))
            ]

            def appends(batch: list[RecordDraft] = drafts) -> None:
                for draft in batch:
                    append(draft)

            batch_timing = Timing()
            batch_timing.measure(appends)
            total.wall += batch_timing.wall
            total.cpu += batch_timing.cpu
    return total


def time_checkpoint(storage: Path, session: str, repeat: int) -> tuple[Timing, Timing] | None:
    """Sign the session's head: from the witness, then after verifying the chain from disk.

    ``None`` when ``cryptography`` (the ``sign`` extra) is not installed.
    """
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        return None
    from pytest_harness_audit.audit.checkpoint import sign_checkpoint, sign_session_end

    key = ed25519.Ed25519PrivateKey.generate()
    with AuditChain(storage, session) as chain:
        witness = chain.witness
    from_witness, from_disk = Timing(), Timing()
    for _ in range(repeat):
        from_witness.measure(lambda: sign_session_end(storage, session, key, witness=witness))
        from_disk.measure(lambda: sign_checkpoint(storage, session, key))
    return from_witness, from_disk


def peak_memory(storage: Path, session: str, *, full: bool = False) -> dict[str, int]:
    """Verify in a fresh process and return its peak resident size (KiB) before and after."""
    output = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, str(storage), session, *(["full"] if full else [])],
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


def settle() -> None:
    """Before a timed write: collect earlier steps' garbage and write back their page cache.

    Otherwise the kernel's writeback of one step's gigabyte competes with the next step's
    appends, and that step is charged for work that is not its own.
    """
    gc.collect()
    if hasattr(os, "sync"):
        os.sync()


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def _append_row(name: str, timing: Timing, records: int) -> tuple[str, str, str]:
    wall, cpu = timing.rates(records)
    target = f"target >= {APPEND_TARGET:,}: {_verdict(wall >= APPEND_TARGET)}"
    return name, f"{wall:,.0f} wall, {cpu:,.0f} cpu records/s", target


def run(
    records: int, fsync_records: int, repeat: int, directory: Path, *, distinct: bool = False
) -> int:
    """Run every measurement and print the table; return 0 if every target is met."""
    storage = directory / "store"
    print(
        f"audit chain benchmark: {records:,} records, {os.cpu_count()} CPUs, Python "
        f"{sys.version.split()[0]}, storage {storage}"
    )
    settle()
    appends = time_appends(storage, "bench", records, fsync=False)
    chain_path = storage / "audit" / "bench.jsonl"
    size_mb = chain_path.stat().st_size / 1e6
    lines = floor_lines(chain_path)
    settle()
    floor = syscall_floor(lines, records, directory / "floor")
    settle()
    protocol = syscall_floor(lines, records, directory / "floor", locked=True)
    settle()
    linked = syscall_floor(lines, records, directory / "floor", locked=True, hashed=True)
    settle()
    synced = time_appends(storage, "bench-fsync", fsync_records, fsync=True)

    report = verify_chain(storage, "bench")
    if not report.valid or report.record_count != records:
        print(f"verification failed: {report}")
        return 1
    verify, bare, full = Timing(), Timing(), Timing()
    for _ in range(repeat):
        verify.measure(lambda: verify_chain(storage, "bench"))
        bare.measure(lambda: hash_every_line(chain_path))
        full.measure(lambda: verify_chain(storage, "bench", full=True))
    memory = peak_memory(storage, "bench")
    full_memory = peak_memory(storage, "bench", full=True)
    traced = traced_peak(storage, "bench")
    signing = time_checkpoint(storage, "bench", repeat)
    unique = None
    if distinct:
        # The first chain goes first, so that the second writes into the page cache it used
        # rather than into memory never touched before, which is slower on a virtual machine.
        shutil.rmtree(storage, ignore_errors=True)
        settle()
        unique = time_distinct_appends(directory / "distinct", "bench-distinct", records)
        shutil.rmtree(directory / "distinct", ignore_errors=True)

    append_wall = appends.rates(records)[0]
    verify_wall, verify_cpu = verify.rates(records)
    ratio_wall, ratio_cpu = verify.wall / bare.wall, verify.cpu / max(bare.cpu, 1e-9)
    peak_mb = memory["peak_kb"] / 1024

    def pair(rates: tuple[float, float], unit: str = "records/s") -> str:
        return f"{rates[0]:,.0f} wall, {rates[1]:,.0f} cpu {unit}"

    rows = [
        ("chain file", f"{size_mb:,.0f} MB ({size_mb * 1e6 / records:.0f} bytes/record)", ""),
        _append_row("append, no fsync, anchor current", appends, records),
        *(() if unique is None else [_append_row("append, distinct drafts", unique, records)]),
        (
            "floor: write + pwrite per record",
            pair(floor.rates(records)),
            f"append takes {appends.wall / floor.wall:.2f}x wall, "
            f"{appends.cpu / max(floor.cpu, 1e-9):.2f}x cpu",
        ),
        (
            "floor: + flock, lseek, unlock",
            pair(protocol.rates(records)),
            f"append takes {appends.wall / protocol.wall:.2f}x wall, "
            f"{appends.cpu / max(protocol.cpu, 1e-9):.2f}x cpu",
        ),
        (
            "floor: + SHA-256 of the line",
            pair(linked.rates(records)),
            f"append takes {appends.wall / linked.wall:.2f}x wall; this floor "
            f"{'meets' if linked.rates(records)[0] >= APPEND_TARGET else 'misses'} "
            f"{APPEND_TARGET:,}/s",
        ),
        (
            "append, fsync (line + anchor)",
            pair(synced.rates(fsync_records)),
            f"{fsync_records:,} records",
        ),
        (
            "verify against anchor",
            pair((verify_wall, verify_cpu)),
            f"target >= {VERIFY_TARGET:,}: {_verdict(verify_wall >= VERIFY_TARGET)}",
        ),
        (
            f"verify --full ({parser_name()} parse)",
            pair(full.rates(records)),
            f"target >= {FULL_TARGET:,}: {_verdict(full.rates(records)[0] >= FULL_TARGET)}",
        ),
        ("bare SHA-256 of every line", pair(bare.rates(records), "lines/s"), ""),
        (
            "verify --full time / bare hashing",
            f"{full.wall / bare.wall:.2f}x wall, {full.cpu / max(bare.cpu, 1e-9):.2f}x cpu",
            f"{FULL_TARGET:,}/s needs <= {bare.rates(records)[0] / FULL_TARGET:.2f}x here",
        ),
        (
            "verify time / bare hashing time",
            f"{ratio_wall:.2f}x wall, {ratio_cpu:.2f}x cpu",
            f"target <= {RATIO_TARGET:.1f}x: {_verdict(ratio_wall <= RATIO_TARGET)}",
        ),
        (
            "verify peak memory (process RSS)",
            f"{peak_mb:.1f} MB (after imports {memory['baseline_kb'] / 1024:.1f} MB)",
            f"target < {MEMORY_TARGET_MB} MB: {_verdict(peak_mb < MEMORY_TARGET_MB)}",
        ),
        (
            "verify --full peak memory",
            f"{full_memory['peak_kb'] / 1024:.1f} MB",
            f"target < {MEMORY_TARGET_MB} MB: "
            f"{_verdict(full_memory['peak_kb'] / 1024 < MEMORY_TARGET_MB)}",
        ),
        ("verify peak Python allocations", f"{traced / 1e6:.1f} MB (tracemalloc)", ""),
    ]
    if signing is None:
        rows.append(("checkpoint signing", "skipped: pip install 'pytest-harness-audit[sign]'", ""))
    else:
        rows += [
            (
                "checkpoint at session end (witness)",
                f"{signing[0].wall * 1e3:.2f} ms wall, {signing[0].cpu * 1e3:.2f} ms cpu",
                "sign + append + fsync",
            ),
            (
                "checkpoint of a stored chain",
                f"{signing[1].wall * 1e3:,.0f} ms wall, {signing[1].cpu * 1e3:,.0f} ms cpu",
                f"verify {records:,} records + sign",
            ),
        ]
    width = max(len(name) for name, _, _ in rows)
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:<44} {note}".rstrip())
    met = (
        append_wall >= APPEND_TARGET
        and verify_wall >= VERIFY_TARGET
        and full.rates(records)[0] >= FULL_TARGET
        and ratio_wall <= RATIO_TARGET
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
    parser.add_argument(
        "--distinct",
        action="store_true",
        help="also time appends of a distinct draft (own parameters) for every record",
    )
    args = parser.parse_args(argv)
    records = args.records or (100_000 if args.quick else 1_000_000)
    fsync_records = args.fsync_records or (300 if args.quick else 2_000)
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        return run(records, fsync_records, args.repeat, args.dir, distinct=args.distinct)
    directory = Path(tempfile.mkdtemp(prefix="harness-audit-bench-"))
    try:
        return run(records, fsync_records, args.repeat, directory, distinct=args.distinct)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
