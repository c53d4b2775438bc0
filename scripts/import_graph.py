#!/usr/bin/env python3
"""The package's import graph and size limits, read from the source (nothing is imported).

Every ``import`` statement counts, wherever it is written: at module level, inside a function,
or under ``if TYPE_CHECKING:``. An import circle is a strongly connected component of two or
more modules, or a module that imports itself. ``from a.b import c`` is an edge to ``a.b.c``
when that is a module of the package, else to ``a.b``; parent packages a statement loads on the
way are not edges (every module would otherwise "import" its own package).

Prints the number of circles and lists each one, then the modules over the line limit and the
classes over theirs. Exits 1 when there is a circle or a size violation, so CI can hold it::

    python scripts/import_graph.py                  # pytest_harness_audit, 500 / 400 lines
    python scripts/import_graph.py --edges          # also print every edge
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "pytest_harness_audit"
MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 400


@dataclass(frozen=True)
class Module:
    """One source file of the package: its dotted name, path and parsed tree."""

    name: str
    path: Path
    is_package: bool
    tree: ast.Module
    lines: int


def discover(package_dir: Path) -> dict[str, Module]:
    """Every ``.py`` file under ``package_dir``, keyed by dotted module name."""
    modules: dict[str, Module] = {}
    base = package_dir.parent
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        text = path.read_text(encoding="utf-8")
        name = ".".join(parts)
        modules[name] = Module(
            name, path, is_package, ast.parse(text, filename=str(path)), len(text.splitlines())
        )
    return modules


def _resolve_relative(module: Module, level: int, target: str | None) -> str:
    """The absolute name a relative ``from`` import names."""
    parts = module.name.split(".")
    if not module.is_package:
        parts.pop()
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    if target:
        parts.append(target)
    return ".".join(parts)


def _known(name: str, modules: Mapping[str, Module]) -> str | None:
    """``name`` or its closest enclosing package that is a module of the graph."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: Module, modules: Mapping[str, Module]) -> set[str]:
    """The package modules ``module`` imports, from every import statement in it."""
    found: set[str] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                hit = _known(alias.name, modules)
                if hit is not None:
                    found.add(hit)
        elif isinstance(node, ast.ImportFrom):
            source = (
                _resolve_relative(module, node.level, node.module)
                if node.level
                else (node.module or "")
            )
            base = _known(source, modules)
            if base is None:
                continue
            for alias in node.names:
                child = f"{source}.{alias.name}"
                found.add(child if child in modules else base)
    return found


def build_graph(modules: Mapping[str, Module]) -> dict[str, set[str]]:
    """Module name → the package modules it imports."""
    return {name: imports_of(module, modules) for name, module in modules.items()}


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted, in discovery order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Components of more than one module, and modules that import themselves."""
    found = [c for c in strongly_connected(graph) if len(c) > 1 or c[0] in graph[c[0]]]
    return sorted(found, key=lambda c: (-len(c), c))


def example_cycle(component: list[str], graph: Mapping[str, set[str]]) -> list[str]:
    """One closed path through the component, from its first module (breadth-first)."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    queue = [start]
    for node in queue:
        for succ in sorted(graph[node] & members):
            if succ == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if succ not in previous:
                previous[succ] = node
                queue.append(succ)
    return [start, start]


def long_classes(module: Module, limit: int) -> Iterator[tuple[str, int]]:
    """Classes (nested ones too) longer than ``limit`` lines, decorators included."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > limit:
                yield node.name, length


def main(argv: list[str] | None = None) -> int:
    """Print the circle count and list, the size violations; exit 1 when there is any."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default=str(ROOT / PACKAGE), help="package directory")
    parser.add_argument("--max-module-lines", type=int, default=MAX_MODULE_LINES)
    parser.add_argument("--max-class-lines", type=int, default=MAX_CLASS_LINES)
    parser.add_argument("--edges", action="store_true", help="print every edge")
    args = parser.parse_args(argv)

    modules = discover(Path(args.package))
    graph = build_graph(modules)
    edge_count = sum(len(targets) for targets in graph.values())
    print(f"modules: {len(modules)}, import edges: {edge_count} (TYPE_CHECKING and local included)")
    if args.edges:
        for name in sorted(graph):
            for target in sorted(graph[name]):
                print(f"  {name} -> {target}")

    found = circles(graph)
    print(f"import circles: {len(found)}")
    for number, component in enumerate(found, 1):
        print(f"  circle {number} ({len(component)} modules): {', '.join(component)}")
        print(f"    e.g. {' -> '.join(example_cycle(component, graph))}")

    big_modules = sorted(
        ((m.lines, name) for name, m in modules.items() if m.lines > args.max_module_lines),
        reverse=True,
    )
    print(f"modules over {args.max_module_lines} lines: {len(big_modules)}")
    for lines, name in big_modules:
        print(f"  {name}: {lines} lines")

    big_classes = sorted(
        (
            (length, f"{name}.{cls}")
            for name, module in modules.items()
            for cls, length in long_classes(module, args.max_class_lines)
        ),
        reverse=True,
    )
    print(f"classes over {args.max_class_lines} lines: {len(big_classes)}")
    for length, qualified in big_classes:
        print(f"  {qualified}: {length} lines")

    return 1 if found or big_modules or big_classes else 0


if __name__ == "__main__":
    sys.exit(main())
