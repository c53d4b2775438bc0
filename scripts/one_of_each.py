#!/usr/bin/env python3
"""One implementation of each concept: the copies issue 13 lists, counted in the source.

The concepts (each must exist once; a re-export ``from x import y`` is not a copy):

* by name: ``display_target``, ``SessionSummary``, ``build_report``, ``Step`` and
  ``canonical_json`` defined at the top of at most one module; at most one ``clock.py`` and one
  ``report.py``;
* by shape: code that *reads* decision tags (``x.startswith("policy:")``,
  ``"enforced:false" in x`` …) outside ``audit.tags``; glob → regex translation (a ``"[^/]*"``
  for ``*``) outside ``policy.glob``; "a policy from a preset name or a file" resolvers (a
  function calling ``Policy.load`` and ``Policy.preset`` with a computed name, or testing the
  preset names) outside ``policy.source``.

Also printed, for information only: every other public name defined in more than one module
(entry points such as ``main`` and ``register`` left out) and every repeated file name.
Nothing is imported. Exits 1 when a listed concept has a copy::

    python scripts/one_of_each.py
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "pytest_harness_audit"
#: File names every package may have.
COMMON_FILES = frozenset({"__init__.py", "__main__.py", "errors.py", "py.typed"})
#: Names that are conventions, not concepts (entry points of commands and benches).
CONVENTIONS = frozenset({"main", "register", "run"})
#: Concepts found by name: each may be defined in one module only.
NAMED = ("display_target", "SessionSummary", "build_report", "Step", "canonical_json")
#: Module file names that may be used once only.
FILES = ("clock.py", "report.py")
#: The home of each concept found by shape (where its one implementation lives).
HOMES = {
    "decision-tag parsers": "pytest_harness_audit.audit.tags",
    "glob -> regex translations": "pytest_harness_audit.policy.glob",
    "policy-source resolvers": "pytest_harness_audit.policy.source",
}
#: Prefixes of the decision tags in ``rules.constraints``.
TAG_PREFIXES = ("policy:", "rule:", "immune:", "firewall:")
TAG_WORDS = ("enforced:false",)
#: What a glob → regex translation writes for ``*``.
GLOB_STAR = "[^/]*"


def _modules(package: Path) -> Iterator[tuple[str, Path, ast.Module]]:
    for path in sorted(package.rglob("*.py")):
        name = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        yield name, path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_tag(value: object) -> bool:
    return isinstance(value, str) and (value.startswith(TAG_PREFIXES) or value in TAG_WORDS)


def _reads_tags(tree: ast.AST) -> list[int]:
    """Lines that parse decision tags: ``startswith(<tag>)`` or ``<tag> in/==`` tests."""
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "removeprefix", "partition")
            and any(isinstance(a, ast.Constant) and _is_tag(a.value) for a in node.args)
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.Compare) and any(
            isinstance(op, (ast.In, ast.NotIn, ast.Eq, ast.NotEq)) for op in node.ops
        ):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Constant) and _is_tag(o.value) for o in operands):
                lines.append(node.lineno)
    return lines


def _glob_loops(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == GLOB_STAR
    ]


def _policy_resolvers(tree: ast.AST) -> list[str]:
    """Functions that read a policy file and pick a preset by a name they were given."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        loads = names = False
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and inner.id == "PRESET_NAMES":
                names = True
            if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)):
                continue
            attr = inner.func.attr
            if attr == "preset_names":
                names = True
            elif attr == "load" and _on_policy(inner.func):
                loads = True
            elif attr == "preset" and _on_policy(inner.func):
                computed = not (inner.args and isinstance(inner.args[0], ast.Constant))
                names = names or computed
        if loads and names:
            found.append(f"{node.name} (line {node.lineno})")
    return found


def _on_policy(func: ast.Attribute) -> bool:
    return isinstance(func.value, ast.Name) and func.value.id in ("Policy", "cls")


def main(argv: list[str] | None = None) -> int:
    """Print each concept's copies; exit 1 when a concept has more than one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default=str(ROOT / PACKAGE), help="package directory")
    args = parser.parse_args(argv)
    package = Path(args.package)

    definitions: dict[str, list[str]] = defaultdict(list)
    files: dict[str, list[str]] = defaultdict(list)
    concepts: dict[str, list[str]] = {
        "decision-tag parsers": [],
        "glob -> regex translations": [],
        "policy-source resolvers": [],
    }
    for name, path, tree in _modules(package):
        if path.name not in COMMON_FILES:
            files[path.name].append(name)
        for node in tree.body:
            if isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            ) and not node.name.startswith("_"):
                definitions[node.name].append(name)
        tag_lines = _reads_tags(tree)
        if tag_lines:
            concepts["decision-tag parsers"].append(f"{name}:{','.join(map(str, tag_lines))}")
        glob_lines = _glob_loops(tree)
        if glob_lines:
            concepts["glob -> regex translations"].append(
                f"{name}:{','.join(map(str, glob_lines))}"
            )
        concepts["policy-source resolvers"].extend(
            f"{name}.{where}" for where in _policy_resolvers(tree)
        )

    failed = False
    for key in NAMED:
        places = definitions.get(key, [])
        print(f"{key} defined in: {len(places)} module(s) {', '.join(places)}".rstrip())
        failed = failed or len(places) > 1
    for key in FILES:
        places = files.get(key, [])
        print(f"{key} files: {len(places)} {', '.join(places)}".rstrip())
        failed = failed or len(places) > 1
    for concept, places in concepts.items():
        copies = [place for place in places if not place.startswith(HOMES[concept] + ":")]
        copies = [p for p in copies if not p.startswith(HOMES[concept] + ".")]
        print(f"{concept} outside {HOMES[concept]}: {len(copies)}")
        for place in copies:
            print(f"  {place}")
        failed = failed or bool(copies)

    print("-- for information (not failing) --")
    twice = {
        key: mods
        for key, mods in sorted(definitions.items())
        if len(mods) > 1 and key not in CONVENTIONS and key not in NAMED
    }
    print(f"other public names defined in more than one module: {len(twice)}")
    for key, mods in twice.items():
        print(f"  {key}: {', '.join(mods)}")
    same_files = {
        key: mods for key, mods in sorted(files.items()) if len(mods) > 1 and key not in FILES
    }
    print(f"other repeated module file names: {len(same_files)}")
    for key, mods in same_files.items():
        print(f"  {key}: {', '.join(mods)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
