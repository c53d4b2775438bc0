"""Full-pipeline scripted calls per second: gate, act (a real Read, a real Bash), record.

    python -m pytest_harness_audit.bench.pipeline [--calls N] [--bash-calls N]

Each call is classified, evaluated against the ``safety`` preset, checked by the immune ladder,
runs a real ``Read`` of a workspace file and appends its R6 record to the chain (anchor kept
current). The figure is calls per second, single-threaded. The ``Bash`` figure runs ``true``
the way every command runs: contained under its own supervisor process, the workspace
compared before and after.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pytest_harness_audit.session.harness import Harness


def scripted_calls_per_second(calls: int, *, audit_level: str = "standard") -> float:
    """Run ``calls`` Read calls through a fresh harness; return calls per second."""
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as base:
        harness = Harness.create(
            Path(base), template="python-service", policy="safety", audit_level=audit_level
        )
        paths = ["app/__init__.py", "README.md", "pyproject.toml", "tests/test_orders.py"]
        existing = [p for p in paths if (harness.root / p).is_file()] or ["README.md"]
        for index in range(50):  # warm-up
            harness.call("Read", file_path=existing[index % len(existing)])
        start = time.perf_counter()
        for index in range(calls):
            harness.call("Read", file_path=existing[index % len(existing)])
        elapsed = time.perf_counter() - start
        harness.chain.close()
    return calls / elapsed


def bash_calls_per_second(calls: int) -> float:
    """Run ``calls`` ``Bash`` calls of ``true`` through a fresh harness; return calls per
    second."""
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as base:
        harness = Harness.create(Path(base), template="python-service", policy="safety")
        for _ in range(5):  # warm-up
            harness.call("Bash", command="true")
        start = time.perf_counter()
        for _ in range(calls):
            harness.call("Bash", command="true")
        elapsed = time.perf_counter() - start
        harness.chain.close()
    return calls / elapsed


def main(argv: Sequence[str] | None = None) -> int:
    """Print full-pipeline calls per second."""
    parser = argparse.ArgumentParser(description="full-pipeline scripted calls per second")
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--bash-calls", type=int, default=200)
    args = parser.parse_args(argv)
    rate = scripted_calls_per_second(args.calls)
    print(f"full pipeline (gate, Read, record): {rate:,.0f} calls/s over {args.calls:,} calls")
    if args.bash_calls > 0:
        rate = bash_calls_per_second(args.bash_calls)
        print(
            f"full pipeline (gate, Bash `true`, record): {rate:,.1f} calls/s"
            f" over {args.bash_calls:,} calls"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
