"""Cost of inspection: output scanning per KB, and effect checks per call.

    python -m pytest_harness_audit.bench.inspect [--quick]

* Output scanning: µs per KB of a secret-free text (source-like lines with words, numbers and
  ``%XX`` escapes), with 10 and with 1,000 known secrets of 32 characters (about 7 patterns
  each). The automaton is built before timing (its build time is shown); each timed pass scans
  the whole text again, nothing carried between passes.
* Effect checks: µs per call of ``Inspector.before`` + ``Inspector.after`` (and the diff) on a
  git workspace of 5,000 files in 100 directories, when nothing changed and when one file
  changed between the two; with the workspace watched (inotify: each pass reads the kernel's
  event queue and re-stats what it names) and walked (each pass stats every file twice).
  Only ``git ls-files`` is reused while the index is unchanged, as in a session.
"""

from __future__ import annotations

import argparse
import os
import random
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_harness_audit.inspect import Inspector
from pytest_harness_audit.inspect.effects import RACY_NS
from pytest_harness_audit.inspect.secrets import SecretRegistry

_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def _best(passes: int, run: Callable[[], object]) -> float:
    """The best wall time of ``passes`` runs, in seconds."""
    best = float("inf")
    for _ in range(passes):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def sample_text(size: int, seed: int = 5) -> str:
    """``size`` characters of secret-free, source-like text."""
    rng = random.Random(seed)
    words = ["def", "return", "self", "value", "config", "request", "=", "(", ")", "{", "}"]
    lines: list[str] = []
    total = 0
    while total < size:
        parts = [rng.choice(words) for _ in range(rng.randrange(3, 12))]
        parts.append(str(rng.randrange(10**6)))
        if rng.random() < 0.05:
            parts.append("/search?q=a%20b%2Fc")
        line = " ".join(parts)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def registry_of(count: int, seed: int = 9) -> SecretRegistry:
    """A registry of ``count`` random 32-character secrets."""
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits
    registry = SecretRegistry()
    for index in range(count):
        registry.add("".join(rng.choice(alphabet) for _ in range(32)), f"secret {index}")
    return registry


def scan_rows(size: int, passes: int) -> list[tuple[str, str, str]]:
    """µs per KB of output scanned, with 10 and with 1,000 secrets."""
    text = sample_text(size)
    rows: list[tuple[str, str, str]] = []
    first = 0.0
    for count in (10, 1_000):
        registry = registry_of(count)
        build = _best(1, lambda: registry.scan("warm-up"))  # builds the automaton  # noqa: B023
        seconds = _best(passes, lambda: registry.scan(text))  # noqa: B023
        assert not registry.scan(text).findings
        first = first or seconds
        rows.append(
            (
                f"output scan, {count:,} secrets ({size // 1024:,} KB text)",
                f"{seconds * 1e6 / (size / 1024):,.1f} us/KB",
                f"automaton build {build * 1000:,.0f} ms; {seconds / first:.1f}x the 10-secret"
                " cost",
            )
        )
    return rows


def make_workspace(root: Path, files: int = 5_000, per_dir: int = 50) -> None:
    """A committed git workspace of ``files`` small files."""
    for index in range(files):
        directory = root / f"pkg{index // per_dir:03}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"module_{index:05}.py").write_text(f"VALUE = {index}\n")
    env = {**os.environ, **_GIT_ENV}
    for command in (
        ["git", "init", "-q", "--template="],
        ["git", "add", "--all"],
        ["git", "-c", "gc.auto=0", "-c", "maintenance.auto=false", "commit", "-q", "-m", "bench"],
    ):
        subprocess.run(command, cwd=root, env=env, check=True)


def _effect_check(root: Path, live: bool, passes: int) -> tuple[float, float]:
    """Best seconds per call of before + after: nothing changed, and one file changed."""
    with Inspector(root, learn=False, live=live) as inspector:
        if live and not inspector.live:
            return float("nan"), float("nan")
        params = {"command": "true"}

        def unchanged() -> None:
            token = inspector.before("Bash", "command", params)
            found = inspector.after(token, "Bash", "command", params, "")
            assert not found.effects

        inspector.before("Bash", "command", params)  # git ls-files once for this index
        quiet = _best(passes, unchanged)
        target = root / "pkg000" / "module_00000.py"
        changed = float("inf")
        for number in range(passes):
            started = time.perf_counter()
            token = inspector.before("Bash", "command", params)
            before = time.perf_counter() - started
            target.write_text(f"VALUE = {number + 10}\n")  # the act: not timed
            started = time.perf_counter()
            found = inspector.after(token, "Bash", "command", params, "")
            changed = min(changed, before + time.perf_counter() - started)
            assert found.effects == {"modified": ["pkg000/module_00000.py"]}, found.effects
        return quiet, changed


def effect_rows(passes: int) -> list[tuple[str, str, str]]:
    """µs per call of an effect check on a 5,000-file workspace, watched and walked."""
    rows = []
    with tempfile.TemporaryDirectory(
        prefix="harness-audit-bench-ws-", ignore_cleanup_errors=True
    ) as directory:
        root = Path(directory)
        make_workspace(root)
        time.sleep(RACY_NS / 1e9)
        for live, how in ((True, "inotify"), (False, "stat walks")):
            quiet, changed = _effect_check(root, live, passes)
            if quiet != quiet:  # NaN: no inotify here
                rows.append((f"effect check, 5,000 files, {how}", "n/a", "inotify unavailable"))
                continue
            rows.append(
                (
                    f"effect check, 5,000 files, {how}, nothing changed",
                    f"{quiet * 1e6:,.0f} us/call",
                    "before + after + diff",
                )
            )
            rows.append(
                (
                    f"effect check, 5,000 files, {how}, one file changed",
                    f"{changed * 1e6:,.0f} us/call",
                    "the act itself not timed",
                )
            )
    return rows


def rows(quick: bool = False) -> list[tuple[str, str, str]]:
    """Every inspection row: ``(name, value, note)``."""
    size = (256 if quick else 2048) * 1024
    passes = 3 if quick else 7
    return scan_rows(size, passes) + effect_rows(passes)


def main(argv: list[str] | None = None) -> int:
    """Print the inspection rows."""
    parser = argparse.ArgumentParser(prog="python -m pytest_harness_audit.bench.inspect")
    parser.add_argument("--quick", action="store_true", help="small sizes")
    args = parser.parse_args(argv)
    table = rows(args.quick)
    width = max(len(name) for name, _, _ in table)
    value_width = max(len(value) for _, value, _ in table)
    print(f"inspection cost ({os.cpu_count()} CPUs, Python {sys.version.split()[0]})")
    for name, value, note in table:
        print(f"  {name:<{width}}  {value:<{value_width}}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
