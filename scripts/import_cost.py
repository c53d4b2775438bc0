#!/usr/bin/env python3
"""What the pytest plugin costs a test run that does not use it.

Prints two figures:

1. the project modules (``pytest_harness_audit.*``) a fresh interpreter loads for
   ``import pytest_harness_audit.plugin`` (read from ``python -X importtime``), their list, and
   which heavy dependencies came along (GitPython, syrupy, mcp, the social harness, the policy
   engine …; there should be none);
2. the median wall time of ``pytest`` on a trivial test file (one ``def test_x(): assert True``
   in a temporary directory) with the plugin loaded and with ``-p no:harness_audit``, both
   figures and their difference in milliseconds, as wall time and as the CPU time (user +
   system) of the pytest process, which a busy machine disturbs far less. The two kinds of run
   alternate, after one warm-up each, so a machine that slows down mid-way slows both. Bytecode
   is cached (in a temporary ``PYTHONPYCACHEPREFIX``), as it is for an installed package.

::

    python scripts/import_cost.py                  # both figures, 10 runs each
    python scripts/import_cost.py --runs 20        # more runs
    python scripts/import_cost.py --modules-only   # only the module count (fast)
    python scripts/import_cost.py --check          # exit 1 over 15 modules or over 50 ms
    python scripts/import_cost.py --source DIR     # measure another checkout (prepended to the
                                                   # import path), e.g. an older commit

Run it with the project's interpreter (``.venv/bin/python``), where the package is installed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "pytest_harness_audit"
PLUGIN = f"{PACKAGE}.plugin"
PLUGIN_NAME = "harness_audit"
MAX_MODULES = 15
MAX_OVERHEAD_MS = 50.0
#: Modules the plugin must not load on import: (prefix, what it is).
HEAVY = (
    ("git", "GitPython"),
    ("gitdb", "GitPython"),
    ("syrupy", "syrupy"),
    ("mcp", "the MCP SDK"),
    ("yaml", "PyYAML"),
    ("re2", "google-re2"),
    ("regex", "regex"),
    ("orjson", "orjson"),
    (f"{PACKAGE}.social", "the social harness"),
    (f"{PACKAGE}.session", "the harness"),
    (f"{PACKAGE}.doors", "the doors"),
    (f"{PACKAGE}.gate", "the gate"),
    (f"{PACKAGE}.policy", "the policy engine"),
    (f"{PACKAGE}.immune", "the immune ladder"),
    (f"{PACKAGE}.audit", "the audit chain"),
    (f"{PACKAGE}.readers", "the readers"),
)
TRIVIAL_TEST = "def test_x():\n    assert True\n"


def _environment(source: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_PLUGINS", None)
    if source is not None:
        path = env.get("PYTHONPATH")
        env["PYTHONPATH"] = str(source) + (os.pathsep + path if path else "")
    return env


def loaded_modules(python: str, module: str, source: Path | None = None) -> list[str]:
    """Every module a fresh ``python`` loads for ``import module``, in import order."""
    result = subprocess.run(
        [python, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env=_environment(source),
        cwd=source,  # ``-c`` puts the working directory first on the import path
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"import {module} failed:\n{result.stderr[-2000:]}")
    names = []
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header line
                names.append(name)
    return names


def project_modules(modules: Sequence[str]) -> list[str]:
    """The modules of this package among ``modules``."""
    return [m for m in modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]


def heavy_modules(modules: Sequence[str]) -> dict[str, list[str]]:
    """The heavy dependencies among ``modules``: what it is → the modules found."""
    found: dict[str, list[str]] = {}
    for name in modules:
        for prefix, label in HEAVY:
            if name == prefix or name.startswith(prefix + "."):
                found.setdefault(label, []).append(name)
    return found


@dataclass(frozen=True)
class Timing:
    """Medians of one kind of run, in milliseconds."""

    wall: float
    cpu: float


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_pytest(
    python: str, directory: Path, extra: Sequence[str], env: dict[str, str]
) -> tuple[float, float]:
    """One ``pytest`` run: (wall ms, CPU ms of the process, user + system)."""
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, "test_trivial.py"]
    cpu = _cpu_of_children()
    start = time.perf_counter()
    result = subprocess.run(command, cwd=directory, capture_output=True, text=True, env=env)
    wall = (time.perf_counter() - start) * 1000
    cpu = (_cpu_of_children() - cpu) * 1000
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stdout[-2000:]}")
    return wall, cpu


def pytest_medians(python: str, runs: int, source: Path | None = None) -> tuple[Timing, Timing]:
    """Medians of ``pytest`` on a trivial file: (plugin loaded, ``-p no:harness_audit``).

    Compiled bytecode is kept, as in an installed package, but under a temporary
    ``PYTHONPYCACHEPREFIX`` (so the checkout gets no ``__pycache__``): without it, every run
    would compile the plugin, and pytest would rewrite its asserts, from source.
    """
    env = _environment(source)
    with tempfile.TemporaryDirectory(prefix="import-cost-") as tmp:
        directory = Path(tmp)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(directory / "pycache")
        (directory / "pytest.ini").write_text("[pytest]\n")
        (directory / "test_trivial.py").write_text(TRIVIAL_TEST)
        without = ["-p", f"no:{PLUGIN_NAME}"]
        _run_pytest(python, directory, [], env)  # warm the file system caches
        _run_pytest(python, directory, without, env)
        loaded: list[tuple[float, float]] = []
        unloaded: list[tuple[float, float]] = []
        for _ in range(runs):
            loaded.append(_run_pytest(python, directory, [], env))
            unloaded.append(_run_pytest(python, directory, without, env))

    def medians(samples: list[tuple[float, float]]) -> Timing:
        return Timing(
            wall=statistics.median(w for w, _ in samples),
            cpu=statistics.median(c for _, c in samples),
        )

    return medians(loaded), medians(unloaded)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures; with ``--check``, exit 1 when a bound is exceeded."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="pytest runs of each kind (10)")
    parser.add_argument("--modules-only", action="store_true", help="skip the pytest timing")
    parser.add_argument("--check", action="store_true", help="exit 1 when a bound is exceeded")
    parser.add_argument("--python", default=sys.executable, help="interpreter to measure")
    parser.add_argument("--source", type=Path, help="checkout to measure instead of the installed")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    modules = loaded_modules(args.python, PLUGIN, args.source)
    ours = project_modules(modules)
    heavy = heavy_modules(modules)
    failed = False
    print(f"import {PLUGIN}: {len(ours)} project modules (bound {MAX_MODULES})")
    for name in ours:
        print(f"  {name}")
    if heavy:
        print("heavy modules loaded:")
        for label, names in heavy.items():
            print(
                f"  {label}: {len(names)} ({', '.join(names[:3])}{', …' if len(names) > 3 else ''})"
            )
    else:
        print("heavy modules loaded: none")
    print(f"all modules loaded (stdlib and third party included): {len(modules)}")
    failed = len(ours) > MAX_MODULES or bool(heavy)

    if not args.modules_only:
        loaded, unloaded = pytest_medians(args.python, args.runs, args.source)
        overhead = loaded.wall - unloaded.wall
        print(f"pytest on a trivial test file, median of {args.runs} runs:")
        print(f"  {'':22}  {'wall':>9}  {'CPU':>9}")
        print(f"  {'plugin loaded':22}  {loaded.wall:6.0f} ms  {loaded.cpu:6.0f} ms")
        print(f"  {'-p no:' + PLUGIN_NAME:22}  {unloaded.wall:6.0f} ms  {unloaded.cpu:6.0f} ms")
        print(
            f"  {'difference':22}  {overhead:+6.0f} ms  {loaded.cpu - unloaded.cpu:+6.0f} ms"
            f"  (bound {MAX_OVERHEAD_MS:.0f} ms on wall time)"
        )
        if os.getloadavg()[0] > (os.cpu_count() or 1):
            print(
                f"  note: load average {os.getloadavg()[0]:.1f}: wall times are noisy; "
                "CPU time is the steadier figure"
            )
        failed = failed or overhead > MAX_OVERHEAD_MS
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
