"""One benchmark command, one table: ``python -m pytest_harness_audit.bench [--quick]``.

    python -m pytest_harness_audit.bench --corpus DIR          # calls.jsonl, policy-50.json
    python -m pytest_harness_audit.bench --corpus DIR --quick  # about 30 seconds

Rows: policy decisions/s (``safety`` and ``policy-50``), full-pipeline scripted calls/s, chain
append/s (fsync off and on), verify records/s and peak memory (against the floor of bare SHA-256
over the same lines), proxy added latency p50/p95, suite overhead of ``--harness-audit`` and the
speed-up of ``-n 2`` over ``-n 0`` (best of three runs each). Each figure stands next to its
target or floor.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from pytest_harness_audit.audit.verify import verify_chain
from pytest_harness_audit.bench import chain as chain_bench
from pytest_harness_audit.bench import inspect as inspect_bench
from pytest_harness_audit.bench import pipeline, suite
from pytest_harness_audit.bench import policy as policy_bench
from pytest_harness_audit.bench import proxy as proxy_bench
from pytest_harness_audit.policy import Policy


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    name: str
    value: str
    target: str = ""


@dataclass(frozen=True)
class Sizes:
    """How much work each measurement does."""

    policy_rounds: int
    pipeline_calls: int
    chain_records: int
    fsync_records: int
    proxy_calls: int
    proxy_memory_calls: int
    suite_tests: int
    scenario_tests: int

    @classmethod
    def for_run(cls, quick: bool) -> Sizes:
        """Full sizes, or the ``--quick`` ones."""
        if quick:
            return cls(2, 2_000, 100_000, 200, 300, 1_000, 100, 40)
        return cls(5, 10_000, 1_000_000, 2_000, 2_000, 10_000, 500, 200)


def policy_rows(corpus: Path | None, rounds: int) -> list[Row]:
    """Decisions per second over the corpus, safety and policy-50."""
    if corpus is None or not (corpus / "calls.jsonl").is_file():
        return [Row("policy decisions/s", "skipped: pass --corpus DIR with calls.jsonl")]
    calls = policy_bench.load_calls(corpus / "calls.jsonl")
    rows = []
    rate, _ = policy_bench.decisions_per_second(Policy.preset("safety"), calls, rounds)
    rows.append(
        Row(
            "policy decisions/s, safety",
            f"{rate:,.0f}",
            "target 1,100,000 (reference engine 554,000)",
        )
    )
    policy_file = corpus / "policy-50.json"
    if policy_file.is_file():
        rate, _ = policy_bench.decisions_per_second(Policy.load(policy_file), calls, rounds)
        rows.append(
            Row(
                "policy decisions/s, policy-50",
                f"{rate:,.0f}",
                "target 220,000 (reference engine 109,000)",
            )
        )
    return rows


def chain_rows(records: int, fsync_records: int, directory: Path) -> list[Row]:
    """Append (fsync off/on), verify vs bare hashing, peak memory."""
    storage = directory / "chain"
    chain_bench.settle()
    appends = chain_bench.time_appends(storage, "bench", records, fsync=False)
    chain_bench.settle()
    synced = chain_bench.time_appends(storage, "bench-fsync", fsync_records, fsync=True)
    path = storage / "audit" / "bench.jsonl"
    verify, bare = chain_bench.Timing(), chain_bench.Timing()
    for _ in range(3):
        verify.measure(lambda: verify_chain(storage, "bench"))
        bare.measure(lambda: chain_bench.hash_every_line(path))
    memory = chain_bench.peak_memory(storage, "bench")
    return [
        Row(
            "chain append/s, no fsync",
            f"{appends.rates(records)[0]:,.0f}",
            "target 94,000 (reference, without an anchor)",
        ),
        Row(
            "chain append/s, fsync",
            f"{synced.rates(fsync_records)[0]:,.0f}",
            "durable against power loss",
        ),
        Row(
            f"verify records/s ({records:,} records)",
            f"{verify.rates(records)[0]:,.0f}",
            f"target 282,000; floor: bare SHA-256 {bare.rates(records)[0]:,.0f} lines/s, "
            f"verify takes {verify.wall / bare.wall:.2f}x (target <= 3x)",
        ),
        Row("verify peak memory", f"{memory['peak_kb'] / 1024:.1f} MB", "target < 100 MB"),
    ]


def proxy_rows(calls: int, memory_calls: int) -> list[Row]:
    """Added latency of the proxy and memory growth."""
    result = anyio.run(proxy_bench.run_benchmark, calls, memory_calls)
    growth = "n/a"
    if result.rss_before_kib is not None and result.rss_after_kib is not None:
        growth = f"{(result.rss_after_kib - result.rss_before_kib) / 1024:+.1f} MiB"
    return [
        Row(
            "proxy tools/call p50/p95, direct",
            f"{result.direct.p50:.3f} / {result.direct.p95:.3f} ms",
        ),
        Row(
            "proxy tools/call p50/p95, proxied",
            f"{result.proxied.p50:.3f} / {result.proxied.p95:.3f} ms",
            f"added p50 {result.added_p50_ms:.3f} ms (target <= 1 ms), ratio {result.ratio:.2f}x",
        ),
        Row(f"proxy memory over {memory_calls:,} calls", growth, "target: no growth"),
    ]


def suite_rows(tests: int, scenario_tests: int, repeat: int) -> list[Row]:
    """Suite overhead of --harness-audit and the -n 2 speed-up."""
    figures = suite.measure(tests, 10, scenario_tests, repeat=repeat)
    return [
        Row(
            f"suite of {tests} tests x 10 calls",
            f"{figures.plain_s:.2f} s plain, {figures.audited_s:.2f} s --harness-audit",
            f"overhead {figures.overhead:.2f}x (target <= 1.3x)",
        ),
        Row(
            f"{scenario_tests} scenario tests, -n 2 vs -n 0",
            f"{figures.serial_s:.2f} s -> {figures.parallel_s:.2f} s",
            f"speed-up {figures.speedup:.2f}x on {os.cpu_count()} cores",
        ),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Run every benchmark and print the table."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_harness_audit.bench", description="every benchmark, one table"
    )
    parser.add_argument(
        "--corpus", type=Path, default=None, help="directory with calls.jsonl and policy-50.json"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (about 30 s)")
    args = parser.parse_args(argv)
    sizes = Sizes.for_run(args.quick)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="harness-audit-bench-") as directory:
        steps: tuple[Callable[[], list[Row]], ...] = (
            lambda: policy_rows(args.corpus, sizes.policy_rounds),
            lambda: [
                Row(
                    "full pipeline scripted calls/s (gate, Read, record)",
                    f"{pipeline.scripted_calls_per_second(sizes.pipeline_calls):,.0f}",
                    "target 5,000",
                )
            ],
            lambda: chain_rows(sizes.chain_records, sizes.fsync_records, Path(directory)),
            lambda: proxy_rows(sizes.proxy_calls, sizes.proxy_memory_calls),
            lambda: suite_rows(sizes.suite_tests, sizes.scenario_tests, 1 if args.quick else 3),
            lambda: [Row(*row) for row in inspect_bench.rows(args.quick)],
        )
        for step in steps:
            rows.extend(step())
            print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    width = max(len(row.name) for row in rows)
    value_width = max(len(row.value) for row in rows)
    print(
        f"pytest-harness-audit benchmarks ({'quick' if args.quick else 'full'} run, "
        f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]})"
    )
    for row in rows:
        print(f"  {row.name:<{width}}  {row.value:<{value_width}}  {row.target}".rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
