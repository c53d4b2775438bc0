"""Build the compiled engine's wheel with profile-guided optimisation (GCC).

    python scripts/build_pgo_wheel.py [--outdir dist-pgo] [--keep WORKDIR]

Three steps, each through the project's own build backend:

1. the mypyc wheel (``HATCH_BUILD_HOOK_ENABLE_MYPYC=true python -m build --wheel``) built with
   ``-fprofile-generate``, its C compiled in a fixed folder (``HATCH_MYPYC_BUILD_DIR``);
2. that wheel installed in a throw-away virtualenv, where the policy and audit tests run on it:
   the training is the test suite (``tests/policy``, ``tests/audit``: code no test runs would
   be laid out as cold), never the benchmark corpus;
3. the wheel built again in the same folder with ``-fprofile-use``: GCC lays out and inlines
   the code by the counts of step 2, and the wheel lands in ``--outdir``.

The result decides every call as the plain mypyc wheel does (the same C, compiled with other
optimisations): ``HARNESS_AUDIT_EXPECT_COMPILED=1 pytest tests/policy`` on it says so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATE = "-fprofile-generate={profiles}"
# lib-rt's sources sit in each build's own isolated environment, so their locations differ from
# one build to the next: their functions go unprofiled (`coverage-mismatch`), the engine's not
USE = (
    "-fprofile-use={profiles} -fprofile-partial-training -fprofile-correction"
    " -Wno-missing-profile -Wno-coverage-mismatch"
)
TEST_REQUIREMENTS = ("pytest", "hypothesis", "pytest-xdist")


def run(command: Sequence[str | Path], **env: str) -> None:
    """Run ``command`` from the project root with ``env`` added; stop on failure."""
    printed = " ".join(str(part) for part in command)
    print(f"$ {printed}", flush=True)
    result = subprocess.run([str(part) for part in command], cwd=ROOT, env={**os.environ, **env})
    if result.returncode:
        raise SystemExit(f"build_pgo_wheel: failed ({result.returncode}): {printed}")


def build(outdir: Path, build_dir: Path, flags: str) -> Path:
    """One mypyc wheel built with the compiler ``flags`` (C compiled in ``build_dir``)."""
    if build_dir.exists():
        shutil.rmtree(build_dir)
    build_dir.mkdir(parents=True)
    run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", outdir],
        HATCH_BUILD_HOOK_ENABLE_MYPYC="true",
        HATCH_MYPYC_BUILD_DIR=str(build_dir),
        CFLAGS=f"{os.environ.get('CFLAGS', '')} {flags}".strip(),
        LDFLAGS=f"{os.environ.get('LDFLAGS', '')} {flags.split()[0]}".strip(),
    )
    (wheel,) = outdir.glob("*.whl")
    return wheel


def train(wheel: Path, venv: Path) -> None:
    """Install ``wheel`` in a new virtualenv and run the policy and audit tests on it."""
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    run([python, "-m", "pip", "install", "--quiet", wheel, *TEST_REQUIREMENTS])
    # the venv's own `pytest` script: `python -m pytest` from the root would import the sources
    run(
        [
            venv / "bin" / "pytest",
            *("-q", "-n", "2", "-p", "no:cacheprovider"),
            *("tests/policy", "tests/audit"),
        ],
        HARNESS_AUDIT_EXPECT_COMPILED="1",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Build, train, rebuild; print where the wheel is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--outdir", type=Path, default=ROOT / "dist-pgo")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args(argv)
    work = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="pgo-"))
    profiles, build_dir = work / "profiles", work / "mypyc"
    try:
        instrumented = build(work / "instrumented", build_dir, GENERATE.format(profiles=profiles))
        train(instrumented, work / "train")
        outdir = args.outdir.resolve()
        outdir.mkdir(parents=True, exist_ok=True)
        for old in outdir.glob("*.whl"):
            old.unlink()
        wheel = build(outdir, build_dir, USE.format(profiles=profiles))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"profile-guided wheel: {wheel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
