"""Print what finding near copies and substituted copies of secrets costs a scan.

Three secrets are registered in two registries: one as the matcher stands, one built without
the near-copy grams and substitution forms (:mod:`._near`, :mod:`._substitution`) and without
the shape check of payloads. The texts hold no secret (the common case): a 10 KB message and a
1 MB tool output, made of the project's own source (prose and code) and of random hex (the
worst case for the grams). Both registries scan each text in turn, ``rounds`` times, and the
best CPU time of each is printed. Run: python tests/inspect/bench_secret_spellings.py [rounds]
"""

from __future__ import annotations

import functools
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

from pytest_harness_audit.inspect import _near, _substitution
from pytest_harness_audit.inspect.secrets import SecretRegistry

SECRETS = (
    "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c",
    "ghp_R8x2Kq7LmN4pZ9vW3tY6bH1cD5fG0jS8aE2u",
    "whsec_9c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f",
)
ROOT = Path(__file__).resolve().parents[2]


def _corpus(size: int) -> str:
    parts: list[str] = []
    total = 0
    for path in sorted((ROOT / "pytest_harness_audit").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        parts.append(text)
        total += len(text)
        if total >= size:
            break
    return "".join(parts)[:size]


def _hex(size: int) -> str:
    rng = random.Random(7)
    lines = [f"{rng.getrandbits(160):040x}" for _ in range(size // 41 + 1)]
    return "\n".join(lines)[:size]


def _nothing(value: str) -> Iterator[tuple[str, str]]:
    return iter(())


def _registries() -> tuple[SecretRegistry, SecretRegistry]:
    before, after = SecretRegistry(), SecretRegistry()
    for value in SECRETS:
        before.add(value, "bench")
        after.add(value, "bench")
    with (
        mock.patch.object(_substitution, "substitution_forms", _nothing),
        mock.patch.object(_near, "grams", _nothing),
        mock.patch.object(_substitution, "shape_core", lambda value: None),
    ):
        before.scan("build the automata")
        before.stream().scan("and the index of payloads", runs=True)
    after.scan("build the automata")
    after.stream().scan("and the index of payloads", runs=True)
    return before, after


def _cpu(run: Callable[[], object]) -> float:
    started = time.process_time()
    run()
    return (time.process_time() - started) * 1e6


def main(rounds: int) -> None:
    before, after = _registries()
    texts = {
        "10 KB message, source text": _corpus(10_000),
        "10 KB message, random hex": _hex(10_000),
        "1 MB tool output, source text": _corpus(1_000_000),
        "1 MB tool output, random hex": _hex(1_000_000),
    }
    print(f"{'':<32}{'before us':>12}{'after us':>12}{'added':>9}")
    for label, text in texts.items():
        for kind in ("output scan", "send scan"):
            best = [float("inf"), float("inf")]
            for _ in range(rounds):
                for side, registry in enumerate((before, after)):
                    if kind == "output scan":
                        spent = _cpu(functools.partial(registry.scan, text))
                    else:
                        spent = _cpu(functools.partial(registry.stream().scan, text, runs=True))
                    best[side] = min(best[side], spent)
            added = (best[1] - best[0]) / best[0] * 100
            print(f"{label + ', ' + kind:<44}{best[0]:12.0f}{best[1]:12.0f}{added:8.1f}%")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
