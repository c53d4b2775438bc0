"""A folder made for the code that deletes it: a deletion of it is tidying up, not a loss.

``d = tempfile.mkdtemp(); …; shutil.rmtree(d)`` in a function, and a pytest test or fixture
that removes the ``tmp_path`` (``tmpdir``) pytest hands it (``yield tmp_path;
shutil.rmtree(tmp_path)``), delete only what they made or were given to play with. Their
``rmtree`` calls are blanked from the program text the rules judge (:mod:`.import_time`), so
that running a test suite whose fixtures tidy up is not refused as a recursive deletion.

Only a name every assignment in the function gives such a folder counts (one assigned anything
else, declared ``global``/``nonlocal``, or a loop or ``with`` target, is not known); a ``tmp_path``
parameter counts only in a function pytest calls itself (a ``test…`` function, a fixture) of a
test module, and not where the module defines its own ``tmp_path``/``tmpdir``.
"""

from __future__ import annotations

import ast
import re
from typing import Final

#: The folders pytest hands a test or fixture to use as it likes.
_PYTEST_FOLDERS: Final = frozenset({"tmp_path", "tmpdir"})
#: A module that defines its own fixture or value under one of those names.
OVERRIDDEN: Final = re.compile(r"\b(?:def\s+(?:tmp_path|tmpdir)\s*\(|(?:tmp_path|tmpdir)\s*=)")
_FUNCTIONS: Final = (ast.FunctionDef, ast.AsyncFunctionDef)


def _named(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _made_folder(value: ast.AST, given: set[str]) -> bool:
    """Whether ``value`` is a folder made for the function: ``tempfile.mkdtemp()``,
    ``tmp_path_factory.mktemp(…)``, or a path inside a folder it was given (``tmp_path / "x"``)."""
    if isinstance(value, ast.Call):
        name = _named(value.func)
        if name == "mkdtemp":
            return True
        if name == "mktemp" and isinstance(value.func, ast.Attribute):
            return _named(value.func.value) in ("tmp_path_factory", "tmpdir_factory")
        if name in ("str", "Path") and len(value.args) == 1 and not value.keywords:
            return _made_folder(value.args[0], given)
        return False
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        part = value.right  # a name inside it: not absolute, not climbing out (`/ ".."`)
        inside = (
            isinstance(part, ast.Constant)
            and isinstance(part.value, str)
            and part.value[:1] not in ("/", "\\", "~", "")
            and ".." not in re.split(r"[/\\]", part.value)
        )
        return inside and _made_folder(value.left, given)
    return isinstance(value, ast.Name) and value.id in given


def _pytest_calls(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether pytest calls ``function`` itself: a test, or a fixture."""
    if function.name.startswith("test"):
        return True
    for decorator in function.decorator_list:
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        if _named(called) == "fixture":
            return True
    return False


def _temporary_names(
    function: ast.FunctionDef | ast.AsyncFunctionDef, given_by_pytest: bool
) -> set[str]:
    """The names that hold, wherever ``function`` uses them, a folder made for it."""
    arguments = function.args
    parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    given = parameters & _PYTEST_FOLDERS if given_by_pytest else set()
    made: dict[str, bool] = {}
    unknown: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    made[target.id] = made.get(target.id, True) and _made_folder(node.value, given)
                else:
                    unknown.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
            unknown.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            unknown.update(n.id for n in ast.walk(node.optional_vars) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            unknown.update(node.names)
        elif isinstance(node, ast.arguments) and node is not arguments:
            unknown.update(a.arg for a in [*node.posonlyargs, *node.args, *node.kwonlyargs])
    names = {name for name in given if name not in made} | {
        name for name, ok in made.items() if ok and name not in parameters
    }
    return names - unknown


def tidy_ups(tree: ast.Module, tests: bool) -> list[ast.Call]:
    """The ``rmtree`` calls of ``tree``'s functions whose folder was made for them (module
    doc); ``tests``: a test module, whose tests and fixtures pytest hands its folders."""
    found: list[ast.Call] = []
    for function in ast.walk(tree):
        if not isinstance(function, _FUNCTIONS):
            continue
        names = _temporary_names(function, tests and _pytest_calls(function))
        if not names:
            continue
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Call)
                and _named(node.func) == "rmtree"
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in names
                and all(k.arg == "ignore_errors" for k in node.keywords)
            ):
                found.append(node)
    return found


def without_calls(text: str, calls: list[ast.Call]) -> str:
    """``text`` with each of ``calls`` written ``None`` (its other characters spaces, its lines
    kept): every other node keeps its place."""
    if not calls:
        return text
    lines = text.splitlines(keepends=True)
    for call in calls:
        end_line, end_col = call.end_lineno, call.end_col_offset
        if end_line is None or end_col is None or end_line > len(lines):
            continue
        first = lines[call.lineno - 1].encode()
        if end_line == call.lineno:
            blank = b"None".ljust(end_col - call.col_offset)
            lines[call.lineno - 1] = (first[: call.col_offset] + blank + first[end_col:]).decode(
                errors="replace"
            )
            continue
        head = first[: call.col_offset] + b"None"
        lines[call.lineno - 1] = head.decode(errors="replace") + "\n"
        for number in range(call.lineno, end_line - 1):
            lines[number] = "\n"
        last = lines[end_line - 1].encode()
        lines[end_line - 1] = (b" " * end_col + last[end_col:]).decode(errors="replace")
    return "".join(lines)


__all__ = ["OVERRIDDEN", "tidy_ups", "without_calls"]
