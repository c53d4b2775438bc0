"""Policy decisions per second over a corpus of tool calls.

    python -m pytest_harness_audit.bench.policy --calls CALLS.jsonl [--policy FILE] [--rounds N]
        [--full-path]

Evaluates every call of the corpus (lines of ``{"tool": …, "params": {…}}``) after one warm-up
pass, single-threaded, and prints decisions per second for the ``safety`` preset and for each
``--policy`` file. Every pass evaluates every call afresh: nothing is remembered between calls.
``--full-path`` prints each policy a second time with the prefilter off (every call derives its
targets), so the prefilter's share shows. The first line says whether the engine runs compiled
(the wheel built with ``HATCH_BUILD_HOOK_ENABLE_MYPYC=true``) or as plain Python. The floor
line is the least work any evaluation does per call in this interpreter (one call, one look-up,
one automaton scan of the raw text: :func:`~pytest_harness_audit.bench.floors.decision_floor`),
and each policy's line says how many times that its decisions take.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_harness_audit.bench.floors import decision_floor
from pytest_harness_audit.policy import Policy, SlidingWindowCounter
from pytest_harness_audit.policy import engine as policy_engine


def engine_build() -> str:
    """How the policy engine runs here: ``compiled (mypyc)`` or ``plain Python``."""
    compiled = str(getattr(policy_engine.__spec__, "origin", "")).endswith(".so")
    return "compiled (mypyc)" if compiled else "plain Python"


def load_calls(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Read a JSONL corpus of tool calls."""
    calls = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item = json.loads(line)
                calls.append((item["tool"], item["params"]))
    return calls


def decisions_per_second(
    policy: Policy, calls: Sequence[tuple[str, dict[str, Any]]], rounds: int = 5
) -> tuple[float, Counter[str]]:
    """Best-of-``rounds`` decisions/s over ``calls`` (after a warm-up pass) and the tally."""
    evaluate = policy.evaluate
    tally: Counter[str] = Counter()
    counter = SlidingWindowCounter()
    for tool, params in calls:  # warm-up; also builds the per-tool rule index
        tally[evaluate(tool, params, rate_counter=counter).decision] += 1
    best = 0.0
    for _ in range(rounds):
        start = time.perf_counter()
        for tool, params in calls:
            evaluate(tool, params, rate_counter=counter)
        elapsed = time.perf_counter() - start
        best = max(best, len(calls) / elapsed)
    return best, tally


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print one line per policy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=Path, required=True, help="JSONL corpus of calls")
    parser.add_argument(
        "--policy", type=Path, action="append", default=[], help="extra policy file (repeatable)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--full-path", action="store_true", help="also run each policy with the prefilter off"
    )
    args = parser.parse_args(argv)
    calls = load_calls(args.calls)
    policies = [("preset safety", Policy.preset("safety"))]
    policies += [(str(p.name), Policy.load(p)) for p in args.policy]
    if args.full_path:
        for label, policy in list(policies):
            full = Policy(policy.spec, name=policy.name, source=policy.source)
            full.prefilter_enabled = False
            policies.append((f"{label} (full path)", full))
    print(f"engine: {engine_build()}")
    print(f"{len(calls):,} calls, best of {args.rounds} rounds after warm-up")
    floor = decision_floor(calls, args.rounds)
    print(f"  {'floor: one scan per call':<36} {floor:>12,.0f} decisions/s   (see floors.py)")
    for label, policy in policies:
        rate, tally = decisions_per_second(policy, calls, args.rounds)
        mix = ", ".join(f"{k} {v}" for k, v in sorted(tally.items()))
        print(f"  {label:<36} {rate:>12,.0f} decisions/s   ({mix}; {floor / rate:.1f}x the floor)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
