"""One benchmark command, one table: ``python -m pytest_harness_audit.bench [--quick]``.

    python -m pytest_harness_audit.bench --corpus DIR          # calls.jsonl, policy-50.json
    python -m pytest_harness_audit.bench --corpus DIR --quick  # about 30 seconds
    python -m pytest_harness_audit.bench --vs-reference DIR    # also: decisions vs the reference
    python -m pytest_harness_audit.bench --only policy,chain   # some steps only

Rows: policy decisions/s (``safety`` and ``policy-50``), full-pipeline scripted calls/s, chain
append/s (fsync off and on) against its system-call floor (``write`` + ``pwrite``; and with the
lock and the SHA-256 of the line, which no append can skip), verify and
``verify --full`` records/s and peak memory (against the floor of bare SHA-256 over the same
lines), proxy added latency p50/p95, suite overhead of ``--harness-audit`` and the speed-up of
``-n 2`` over ``-n 0`` (best of three runs each). Each figure stands next to its target, its floor
and the reference engine's figure, read from ``timings.json`` in ``--reference DIR`` (default
``../shared/bench/reference``) or in the ``--vs-reference`` directory. ``--vs-reference DIR`` also
compares this project's decision on every corpus call with the reference's (see ``reference``);
the corpus defaults to the directory above ``DIR``.
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
from pytest_harness_audit.bench import floors, pipeline, reference, suite
from pytest_harness_audit.bench import inspect as inspect_bench
from pytest_harness_audit.bench import policy as policy_bench
from pytest_harness_audit.bench import proxy as proxy_bench
from pytest_harness_audit.bench.reference import Timings, load_timings
from pytest_harness_audit.bench.timing import Timing
from pytest_harness_audit.errors import UsageError
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
    pipeline_bash_calls: int
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
            return cls(2, 2_000, 50, 100_000, 200, 300, 1_000, 100, 40)
        return cls(5, 10_000, 300, 1_000_000, 2_000, 2_000, 10_000, 500, 200)


def _against(rate: float, reference: float | None, target: str) -> str:
    """``target …; reference …/s (ratio×)`` or ``no reference figure``."""
    if reference is None:
        return f"{target}; no reference figure"
    return f"{target}; reference {reference:,.0f} ({rate / reference:.2f}x)"


def policy_rows(corpus: Path | None, rounds: int, timings: Timings | None) -> list[Row]:
    """Decisions per second over the corpus, safety and policy-50."""
    if corpus is None or not (corpus / "calls.jsonl").is_file():
        return [Row("policy decisions/s", "skipped: pass --corpus DIR with calls.jsonl")]
    calls = policy_bench.load_calls(corpus / "calls.jsonl")
    policies = [("safety", Policy.preset("safety"), 1_100_000)]
    policy_file = corpus / "policy-50.json"
    if policy_file.is_file():
        policies.append(("policy-50", Policy.load(policy_file), 220_000))
    floor = floors.decision_floor(calls, rounds)
    rows = [Row("policy floor: one scan per call", f"{floor:,.0f}", "the interpreter's least")]
    for name, policy, target in policies:
        rate, _ = policy_bench.decisions_per_second(policy, calls, rounds)
        reference = timings.decisions(name) if timings else None
        against = _against(rate, reference, f"target {target:,}")
        rows.append(
            Row(
                f"policy decisions/s, {name}",
                f"{rate:,.0f}",
                f"{against}; {floor / rate:.1f}x the floor",
            )
        )
    return rows


def chain_rows(
    records: int, fsync_records: int, directory: Path, timings: Timings | None
) -> list[Row]:
    """Append (fsync off/on) and its system-call floor; verify, --full, bare hashing; memory."""
    storage = directory / "chain"
    chain_bench.settle()
    appends = chain_bench.time_appends(storage, "bench", records, fsync=False)
    path = storage / "audit" / "bench.jsonl"
    lines = floors.floor_lines(path)
    chain_bench.settle()
    floor = floors.syscall_floor(lines, records, directory / "floor")
    chain_bench.settle()
    linked = floors.syscall_floor(lines, records, directory / "floor", locked=True, hashed=True)
    chain_bench.settle()
    synced = chain_bench.time_appends(storage, "bench-fsync", fsync_records, fsync=True)
    verify, bare, full = Timing(), Timing(), Timing()
    for _ in range(3):
        verify.measure(lambda: verify_chain(storage, "bench"))
        bare.measure(lambda: floors.hash_every_line(path))
    full.measure(lambda: verify_chain(storage, "bench", full=True))
    memory = chain_bench.peak_memory(storage, "bench")
    full_memory = chain_bench.peak_memory(storage, "bench", full=True)
    append_rate = appends.rates(records)[0]
    verify_rate = verify.rates(records)[0]
    full_rate = full.rates(records)[0]
    append_ref = timings.append_per_s if timings else None
    verify_ref = timings.verify_per_s if timings else None
    return [
        Row(
            "chain append/s, no fsync",
            f"{append_rate:,.0f}",
            _against(append_rate, append_ref, f"target {chain_bench.APPEND_TARGET:,}")
            + f"; floor (write + pwrite) {floor.rates(records)[0]:,.0f}/s, "
            f"append takes {appends.wall / floor.wall:.2f}x; with lock and the line's "
            f"SHA-256 {linked.rates(records)[0]:,.0f}/s",
        ),
        Row(
            "chain append/s, fsync",
            f"{synced.rates(fsync_records)[0]:,.0f}",
            "durable against power loss",
        ),
        Row(
            f"verify records/s ({records:,} records)",
            f"{verify_rate:,.0f}",
            _against(verify_rate, verify_ref, f"target {chain_bench.VERIFY_TARGET:,}")
            + f"; floor: bare SHA-256 {bare.rates(records)[0]:,.0f} lines/s, verify takes "
            f"{verify.wall / bare.wall:.2f}x (target <= {chain_bench.RATIO_TARGET}x)",
        ),
        Row(
            "verify --full records/s",
            f"{full_rate:,.0f}",
            _against(full_rate, verify_ref, f"target {chain_bench.FULL_TARGET:,}")
            + f"; takes {full.wall / bare.wall:.2f}x the floor",
        ),
        Row(
            "verify peak memory",
            f"{memory['peak_kb'] / 1024:.1f} MB, --full {full_memory['peak_kb'] / 1024:.1f} MB",
            "target < 100 MB",
        ),
    ]


def reference_rows(corpus: Path | None, directory: Path | None) -> list[str]:
    """The per-call decision differences against the reference, by class."""
    if directory is None:
        return []
    if corpus is None or not (corpus / "calls.jsonl").is_file():
        return [f"decisions against the reference: skipped, no calls.jsonl in {corpus}"]
    calls = policy_bench.load_calls(corpus / "calls.jsonl")
    policies: list[tuple[str, Policy]] = [("safety", Policy.preset("safety"))]
    if (corpus / "policy-50.json").is_file():
        policies.append(("policy-50", Policy.load(corpus / "policy-50.json")))
    out = []
    for name, policy in policies:
        path = directory / reference.DECISION_FILES[name]
        if not path.is_file():
            out.append(f"decisions against the reference, {name}: skipped, no {path}")
            continue
        decisions = reference.load_decisions(path)
        rules = Policy.load(reference.REFERENCE_SAFETY) if name == "safety" else None
        result = reference.compare(name, policy, calls, decisions, rules)
        out.append(reference.format_comparison(result))
    return out


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


STEPS = ("policy", "pipeline", "chain", "proxy", "suite", "inspect")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every benchmark and print the table."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_harness_audit.bench", description="every benchmark, one table"
    )
    parser.add_argument(
        "--corpus", type=Path, default=None, help="directory with calls.jsonl and policy-50.json"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (about 30 s)")
    parser.add_argument(
        "--reference",
        type=Path,
        default=reference.DEFAULT_DIR,
        help="directory with the reference engine's timings.json",
    )
    parser.add_argument(
        "--vs-reference",
        type=Path,
        default=None,
        metavar="DIR",
        help="also compare every corpus call's decision with the reference's decisions in DIR",
    )
    parser.add_argument(
        "--only",
        default=",".join(STEPS),
        help=f"comma-separated steps to run (of {', '.join(STEPS)})",
    )
    args = parser.parse_args(argv)
    steps = [step.strip() for step in args.only.split(",") if step.strip()]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"--only: unknown step {unknown[0]!r} (steps: {', '.join(STEPS)})")
    try:
        return _run(args, steps)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, steps: list[str]) -> int:
    sizes = Sizes.for_run(args.quick)
    reference_dir = args.vs_reference or args.reference
    timings = load_timings(reference_dir)
    corpus = args.corpus
    if corpus is None and args.vs_reference is not None:
        corpus = args.vs_reference.parent  # the reference folder sits in the corpus folder
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="harness-audit-bench-") as directory:
        work: dict[str, Callable[[], list[Row]]] = {
            "policy": lambda: policy_rows(corpus, sizes.policy_rounds, timings),
            "pipeline": lambda: [
                Row(
                    "full pipeline scripted calls/s (gate, Read, record)",
                    f"{pipeline.scripted_calls_per_second(sizes.pipeline_calls):,.0f}",
                    "target 5,000",
                ),
                Row(
                    "full pipeline scripted Bash calls/s (gate, contained `true`, record)",
                    f"{pipeline.bash_calls_per_second(sizes.pipeline_bash_calls):,.1f}",
                    "a supervisor process per command",
                ),
            ],
            "chain": lambda: chain_rows(
                sizes.chain_records, sizes.fsync_records, Path(directory), timings
            ),
            "proxy": lambda: proxy_rows(sizes.proxy_calls, sizes.proxy_memory_calls),
            "suite": lambda: suite_rows(
                sizes.suite_tests, sizes.scenario_tests, 1 if args.quick else 3
            ),
            "inspect": lambda: [Row(*row) for row in inspect_bench.rows(args.quick)],
        }
        for step in steps:
            rows.extend(work[step]())
            print(".", end="", file=sys.stderr, flush=True)
    differences = reference_rows(corpus, args.vs_reference)
    print(file=sys.stderr)
    print(
        f"pytest-harness-audit benchmarks ({'quick' if args.quick else 'full'} run, "
        f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]})"
    )
    if timings is None:
        print(f"  (no reference figures: {reference_dir / 'timings.json'} not found)")
    else:
        print(f"  reference: {timings.engine} ({timings.source})")
    if rows:
        width = max(len(row.name) for row in rows)
        value_width = max(len(row.value) for row in rows)
        for row in rows:
            print(f"  {row.name:<{width}}  {row.value:<{value_width}}  {row.target}".rstrip())
    for block in differences:
        print(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
