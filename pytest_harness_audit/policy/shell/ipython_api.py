"""IPython's own syntax and its shell object in Python text, read as what they run.

Python text a code tool or ``python -c``/``ipython -c`` is given may run in IPython (a Jupyter
kernel, a code interpreter). Besides its cell syntax (:mod:`.ipython_cells`), IPython's shell
object runs commands and cells from Python: ``get_ipython().system("rm -rf app")``,
``getoutput``, ``system_raw``, ``system_piped``; ``run_line_magic("system", "…")``,
``run_cell_magic("bash", "", "…")``, the older ``magic("…")``; ``run_cell("!…")``; ``ex``/``ev``
(Python text); ``safe_execfile``/``safe_execfile_ipy`` (a file run). The object may be kept
under a name (``ip = get_ipython()``) or reached through ``getattr``. Each is read as the cell
it amounts to; one given a value not written in the text (``ip.system(cmd)``, cmd built at run
time) leaves the command not known: unreadable.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Final

from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.ipython_cells import CellReading, ipython_scripts

#: Text that may reach the shell object.
_MENTION: Final = re.compile(r"get_ipython|InteractiveShell")
#: Methods of the shell object: the names of the parameters read, and the cell text a call
#: amounts to (a template of their values).
_AS_CELL: Final = {
    "system": (("cmd",), "!{0}"),
    "system_raw": (("cmd",), "!{0}"),
    "system_piped": (("cmd",), "!{0}"),
    "getoutput": (("cmd",), "!{0}"),
    "run_line_magic": (("magic_name", "line"), "%{0} {1}"),
    "run_cell_magic": (("magic_name", "line", "cell"), "%%{0} {1}\n{2}"),
    "magic": (("arg_s",), "%{0}"),
    "run_cell": (("raw_cell",), "{0}"),
    "run_cell_async": (("raw_cell",), "{0}"),
    "safe_run_cell": (("raw_cell",), "{0}"),
    "safe_execfile": (("fname",), "%run {0}"),
    "safe_execfile_ipy": (("fname",), "%run {0}"),
    "ex": (("cmd",), "{0}"),
    "ev": (("expr",), "{0}"),
}
#: A method named at run time (``getattr(ip, name)``).
_UNKNOWN_METHOD: Final = "?"
#: Methods that run Python text.
_AS_CODE: Final = frozenset({"ex", "ev"})
#: Calls that give the shell object.
_GETTERS: Final = frozenset({"get_ipython", "instance"})
#: Lines IPython reads as its own (blanked before the rest is parsed as Python).
_OWN_LINE: Final = re.compile(r"(?m)^([ \t]*)(?:[\w.,\[\] \t]+=[ \t]*)?(?:!(?!=)|%|[,;/]\w).*$")
#: Most cells read from one text.
_MAX_CELLS: Final = 64


def read_ipython(code: str, ctx: Context) -> None:
    """Read the IPython forms of Python text ``code`` (module doc, :mod:`.ipython_cells`)."""
    for script in ipython_scripts(code):
        ctx.script(script)
    if _MENTION.search(code) is None:
        return
    tree = _parsed(code)
    if tree is None:
        return  # not Python: nothing of it runs
    cells = CellReading()
    for count, found in enumerate(_shell_calls(tree)):
        if count >= _MAX_CELLS:
            ctx.unknown("program text makes IPython run more cells than are read")
            return
        if found is None:
            ctx.unknown("program text makes IPython run a command built at run time")
        elif found[0] == "code":
            ctx.read_text(found[1], True)
        else:
            cells.cell(found[1])
    for script in cells.scripts:
        ctx.script(script)
    if cells.code:
        ctx.read_text("\n".join(cells.code), True)


def _parsed(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    try:  # IPython's own lines, as `pass` in their place: the Python around them
        return ast.parse(_OWN_LINE.sub(r"\1pass", code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _shell_calls(tree: ast.Module) -> Iterator[tuple[str, str] | None]:
    """Each call of the shell object's methods: ``("cell", text)``, ``("code", text)``, or
    ``None`` when its text is not written in the code."""
    holders = _holders(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        method = _method(node.func, holders)
        if method is None:
            continue
        if method == _UNKNOWN_METHOD:
            yield None
            continue
        names, template = _AS_CELL[method]
        given: dict[str, ast.AST] = dict(zip(names, node.args, strict=False))
        given.update((k.arg, k.value) for k in node.keywords if k.arg in names)
        values = [_text(given[name]) if name in given else None for name in names]
        if method == "run_line_magic" and values[1:] == [None] and "line" not in given:
            values[1] = ""
        texts = [value for value in values if value is not None]
        if len(texts) < len(names):
            yield None
        else:
            yield ("code" if method in _AS_CODE else "cell"), template.format(*texts)


def _holders(tree: ast.Module) -> frozenset[str]:
    """Names the shell object is kept under (``ip = get_ipython()``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_shell(node.value, frozenset()):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(names)


def _is_shell(node: ast.AST | None, holders: frozenset[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in holders
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return name in _GETTERS


def _method(func: ast.AST, holders: frozenset[str]) -> str | None:
    """The shell object's method ``func`` names (``get_ipython().system``,
    ``getattr(ip, "system")``), or ``None``."""
    if isinstance(func, ast.Attribute) and _is_shell(func.value, holders):
        name: str | None = func.attr
    elif (
        isinstance(func, ast.Call)
        and isinstance(func.func, ast.Name)
        and func.func.id == "getattr"
        and len(func.args) >= 2
        and _is_shell(func.args[0], holders)
    ):
        name = _text(func.args[1])
        if name is None:
            return _UNKNOWN_METHOD
    else:
        return None
    return name if name in _AS_CELL else None


def _text(node: ast.AST) -> str | None:
    """The string a literal (or literals joined with ``+``) gives, else ``None``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        return None if left is None or right is None else left + right
    return None


__all__ = ["read_ipython"]
