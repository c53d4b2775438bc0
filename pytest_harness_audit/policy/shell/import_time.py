"""What importing a workspace Python module runs: its code at import time, judged as code.

``python3 -c 'import tidy'`` (or ``main.py`` importing ``tidy``) runs ``tidy.py``'s top level.
The reading reads every module a program imports for the paths it names (:mod:`.imports`); the
rules on program text (a recursive deletion, a file removed) judge the command's own code
and a script file it runs (:mod:`.program_files`). An imported module is judged by what runs
when it is imported, not by all it holds: a helper module defining ``clean(d):
shutil.rmtree(d)`` runs nothing when imported, and ``python3 main.py`` importing it is
ordinary work.

What runs at import (read from the module's syntax tree): every top-level statement but a
function's body and a ``if __name__ == "__main__":`` block (a decorator, a class body and a
default value run); the body of each module function that code calls by name, and of the
functions those call, within bounds. It is recorded as the command ``python3 -c CODE``. A
module that is no Python runs nothing.
"""

from __future__ import annotations

import ast
from typing import Final

#: Most functions of one module followed through the calls that run at import.
_MAX_FOLLOWED: Final = 64
_DEFINITIONS: Final = (ast.FunctionDef, ast.AsyncFunctionDef)


def import_time_code(text: str) -> str | None:
    """The source of what importing a module of text ``text`` runs (module doc); ``None``
    when nothing of it runs or it is no Python."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {
        node.name: node for node in tree.body if isinstance(node, _DEFINITIONS)
    }
    parts: list[ast.AST] = []
    _run_at_import(tree.body, parts)
    followed: set[str] = set()
    pending = _called(parts, functions)
    while pending and len(followed) < _MAX_FOLLOWED:
        name = pending.pop()
        if name in followed:
            continue
        followed.add(name)
        body = functions[name].body
        parts.extend(body)
        pending.extend(_called(body, functions))
    pieces = [ast.get_source_segment(text, part) for part in parts]
    code = "\n".join(piece for piece in pieces if piece)
    return code or None


def _run_at_import(body: list[ast.stmt], parts: list[ast.AST]) -> None:
    """The statements of ``body`` that run when it runs (a module's, or a class's)."""
    for node in body:
        if isinstance(node, _DEFINITIONS):
            parts.extend(node.decorator_list)
            parts.extend(node.args.defaults)
            parts.extend(d for d in node.args.kw_defaults if d is not None)
        elif isinstance(node, ast.ClassDef):
            parts.extend(node.decorator_list)
            parts.extend(node.bases)
            _run_at_import(node.body, parts)
        elif not _main_block(node):
            parts.append(node)


def _main_block(node: ast.stmt) -> bool:
    """Whether ``node`` is ``if __name__ == "__main__":`` (with no ``else``): it runs only when
    the module is the program, not when it is imported."""
    if not isinstance(node, ast.If) or node.orelse:
        return False
    test = node.test
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    sides = [test.left, *test.comparators]
    names = {s.id for s in sides if isinstance(s, ast.Name)}
    texts = {s.value for s in sides if isinstance(s, ast.Constant)}
    return isinstance(test.ops[0], ast.Eq) and names == {"__name__"} and texts == {"__main__"}


def _called(
    parts: list[ast.stmt] | list[ast.AST],
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
) -> list[str]:
    """The module functions ``parts`` call, or hand on, by name."""
    found: list[str] = []
    for part in parts:
        for node in ast.walk(part):
            if isinstance(node, ast.Name) and node.id in functions:
                found.append(node.id)
    return found


__all__ = ["import_time_code"]
