#!/usr/bin/env python3
"""Optional: compile the policy engine's hot modules with mypyc (needs a C compiler).

    python scripts/build_compiled.py [--out DIR] [--shell] [--inplace | --clean]

By default the package is copied to ``DIR`` (``build/compiled``) and the modules are compiled
there, so ``PYTHONPATH=DIR`` runs the compiled engine and the working tree stays pure Python.
``--inplace`` puts the extension modules next to the sources instead (an extension module wins
over its ``.py``: rebuild after every edit, or ``--clean`` to remove them). ``--shell`` compiles
the shell reading too. Nothing here is needed to install or run the package: without a build,
the same modules run as plain Python.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "pytest_harness_audit"
#: The modules every policy decision runs through.
HOT_MODULES = (
    "policy/engine.py",
    "policy/evaluation.py",
    "policy/targets.py",
    "policy/prefilter.py",
    "policy/patterns.py",
    "policy/glob.py",
    "policy/sensitive.py",
)
#: The shell reading, which a command's decision runs through.
SHELL_MODULES = (
    "policy/shell/reading.py",
    "policy/shell/simple.py",
    "policy/shell/expand.py",
    "policy/shell/effects.py",
    "policy/shell/tools.py",
    "policy/shell/nodes.py",
    "policy/shell/syntax.py",
)
_SETUP = """\
from setuptools import setup
from mypyc.build import mypycify

setup(
    name="harness-audit-compiled",
    ext_modules=mypycify({paths!r} + ["--ignore-missing-imports"], opt_level="3"),
    script_args=["build_ext", "--inplace"],
)
"""


def compiled_files(package: Path) -> list[Path]:
    """The extension modules of a build under ``package`` (and mypyc's runtime beside it)."""
    found = [p for p in package.rglob("*.so") if p.is_file()]
    found += [p for p in package.parent.glob("*__mypyc*.so") if p.is_file()]
    return found


def build(target: Path, modules: list[str]) -> None:
    """Compile ``modules`` (paths inside the package) of the package copy at ``target``."""
    paths = [f"{PACKAGE}/{module}" for module in modules]
    with tempfile.TemporaryDirectory() as scratch:
        # a setup script of its own: the project's pyproject.toml configures no extension
        setup = Path(scratch) / "setup_compiled.py"
        setup.write_text(_SETUP.format(paths=paths), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(target)}
        subprocess.run([sys.executable, str(setup)], cwd=target, env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    """Build (or clean) the compiled modules."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "compiled")
    parser.add_argument("--shell", action="store_true", help="compile the shell reading too")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--inplace", action="store_true", help="build next to the sources")
    group.add_argument("--clean", action="store_true", help="remove in-place builds")
    args = parser.parse_args(argv)
    if args.clean:
        for path in compiled_files(ROOT / PACKAGE):
            path.unlink()
            print(f"removed {path.relative_to(ROOT)}")
        return 0
    modules = list(HOT_MODULES) + (list(SHELL_MODULES) if args.shell else [])
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        print("no C compiler found: the pure-Python modules stay in use", file=sys.stderr)
        return 1
    # built in a copy of the package either way: the project's pyproject.toml is no setup script
    target = args.out.resolve()
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(
        ROOT / PACKAGE, target / PACKAGE, ignore=shutil.ignore_patterns("__pycache__", "*.so")
    )
    for data in ("rules", "fixtures"):
        shutil.copytree(ROOT / data, target / data)
    build(target, modules)
    for path in compiled_files(target / PACKAGE):
        relative = path.relative_to(target)
        if args.inplace:
            shutil.copy2(path, ROOT / relative)
        print(f"built {relative}")
    if args.inplace:
        print("the extension modules are next to the sources: --clean removes them")
    else:
        print(f"run the compiled engine with PYTHONPATH={target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
