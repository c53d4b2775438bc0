"""Suite-level figures: the overhead of ``--harness-audit`` and the speed-up of ``-n 2``.

    python -m pytest_harness_audit.bench.suite [--tests 500] [--calls 10] [--scenario-tests 200]

Writes a generated suite into a temporary directory and times whole ``pytest`` runs in
subprocesses: ``--tests`` tests of ``--calls`` scripted Read calls each, with and without
``--harness-audit``; and ``--scenario-tests`` scenario tests (the ``benign-refactor`` script,
no Bash) under ``-n 0`` and ``-n 2``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SCRIPTED_SUITE = """
import pytest

@pytest.mark.parametrize("n", range({tests}))
def test_scripted(harness, n):
    (harness.root / "notes.txt").write_text("hello\\n")
    for _ in range({calls}):
        harness.call("Read", file_path="notes.txt")
"""

SCENARIO_SUITE = """
import pytest

STEPS = [
    ("Glob", {{"pattern": "**/*.py"}}),
    ("Read", {{"file_path": "app/__init__.py"}}),
    ("Grep", {{"pattern": "def ", "path": "app"}}),
    ("Read", {{"file_path": "README.md"}}),
    ("TodoWrite", {{"todos": [{{"content": "refactor", "status": "pending",
                              "activeForm": "refactoring"}}]}}),
]

@pytest.mark.harness_workspace("python-service")
@pytest.mark.parametrize("n", range({tests}))
def test_scenario(harness, n):
    for _ in range(20):
        for tool, params in STEPS:
            harness.call(tool, **params)
    assert harness.verdict <= "WARN"
"""


@dataclass(frozen=True)
class SuiteFigures:
    """Wall-clock seconds of the generated suites."""

    plain_s: float
    audited_s: float
    serial_s: float
    parallel_s: float

    @property
    def overhead(self) -> float:
        """``--harness-audit`` time over plain time."""
        return self.audited_s / self.plain_s

    @property
    def speedup(self) -> float:
        """``-n 0`` time over ``-n 2`` time."""
        return self.serial_s / self.parallel_s


def _pytest(directory: Path, *args: str) -> float:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    # every session writes its chain durably (fsync): a run must not pay for the writeback of
    # what ran before it (the chain benchmark's files, the other variant's chains)
    os.sync()
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            *args,
        ],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"benchmark suite failed ({done.returncode}):\n{done.stdout[-2000:]}")
    return elapsed


def measure(tests: int, calls: int, scenario_tests: int, repeat: int = 3) -> SuiteFigures:
    """Generate the suites and time them: best of ``repeat`` runs, the variants alternating so
    that a noisy moment cannot favour one of them."""
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as base:
        root = Path(base)
        scripted = root / "scripted"
        scripted.mkdir()
        (scripted / "test_scripted.py").write_text(SCRIPTED_SUITE.format(tests=tests, calls=calls))
        scenario = root / "scenario"
        scenario.mkdir()
        (scenario / "test_scenario.py").write_text(SCENARIO_SUITE.format(tests=scenario_tests))
        _pytest(scripted, "-x", "-k", "test_scripted and 0]")  # warm caches
        plain = audited = serial = parallel = float("inf")
        for _ in range(repeat):
            plain = min(plain, _pytest(scripted))
            audited = min(audited, _pytest(scripted, "--harness-audit"))
            serial = min(serial, _pytest(scenario, "-p", "xdist", "-n", "0"))
            parallel = min(parallel, _pytest(scenario, "-p", "xdist", "-n", "2"))
    return SuiteFigures(plain, audited, serial, parallel)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the suite figures."""
    parser = argparse.ArgumentParser(description="suite overhead and xdist speed-up")
    parser.add_argument("--tests", type=int, default=500)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--scenario-tests", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args(argv)
    figures = measure(args.tests, args.calls, args.scenario_tests, args.repeat)
    print(
        f"{args.tests} tests x {args.calls} calls: plain {figures.plain_s:.2f} s, "
        f"--harness-audit {figures.audited_s:.2f} s, ratio {figures.overhead:.2f}x"
    )
    print(
        f"{args.scenario_tests} scenario tests: -n 0 {figures.serial_s:.2f} s, "
        f"-n 2 {figures.parallel_s:.2f} s, speed-up {figures.speedup:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
