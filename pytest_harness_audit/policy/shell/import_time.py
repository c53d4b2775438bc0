"""What importing a workspace Python module runs: its code at import time, judged as code.

``python3 -c 'import tidy'`` (or ``main.py`` importing ``tidy``) runs ``tidy.py``'s top level.
The reading reads every module a program imports for the paths it names (:mod:`.imports`); the
rules on program text (a recursive deletion, a file removed) judge the command's own code
and a script file it runs (:mod:`.program_files`). An imported module is judged by what runs
when it is imported and by what its importers call, not by all it holds: a helper module
defining ``clean(d): shutil.rmtree(d)`` runs nothing when imported, and ``python3 main.py``
importing it is ordinary work; ``util.clean('app')`` in the importer runs it.

What runs (read from the module's syntax tree): every top-level statement but a function's
body, a method's body and a ``if __name__ == "__main__":`` block (a decorator, a class body, a
default value and an annotation run); the body of each module function (every method of each
class) that code calls or names, that the program importing it names (``util.clean``, ``from
util import clean``, then ``clean(…)``), and of the functions those name, within bounds. An
importer that can reach a function by a string (``getattr``, ``vars``, ``__dict__`` …), or no
importer known, runs them all. It is recorded as the command ``python3 -c CODE``. A module that
is no Python runs nothing.

A script run as the program (``python3 util.py``, :func:`main_time_code`) runs its ``__main__``
block too, and the functions that block names.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
import unicodedata
from collections.abc import Container
from typing import Final

from pytest_harness_audit.policy.shell.temp_folders import OVERRIDDEN, tidy_ups, without_calls

#: Most functions of one module followed through the calls that run at import.
_MAX_FOLLOWED: Final = 64
_DEFINITIONS: Final = (ast.FunctionDef, ast.AsyncFunctionDef)
_CALLABLE_NODES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: What in an importer's code reaches a module's functions by a string, not by their names.
_BY_STRING: Final = re.compile(
    r"\b(?:getattr|vars|__dict__|globals|locals|eval|exec|compile|methodcaller|attrgetter"
    r"|import_module|__import__|pickle|marshal|dill|shelve|inspect|getmembers|runpy"
    r"|__getattribute__|operator|fire|doctest|modules|gc|get_objects|get_referrers"
    r"|get_referents|_getframe|f_globals|f_locals|f_back|__globals__|settrace|setprofile"
    r"|currentframe|tb_frame)\b|\bdir\s*\("
)
#: A name called in a string (code a string may be run as: ``cProfile.run("clean('app')")``).
#: A line of source as the parser counts lines (``\r\n``, ``\r`` or ``\n`` ends one).
_LINE: Final = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_CALLED_WORD: Final = re.compile(r"([^\W\d]\w*)\s*\(")
#: What reads a script's own text (its comments and function bodies may so run as code).
_SELF_READ: Final = re.compile(
    r"\b(?:__file__|__doc__|__loader__|__spec__|__cached__|getsource|linecache"
    r"|__code__|co_consts)\b|argv\s*\[\s*0|__main__\s*\."
)
_Callable = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def import_time_code(
    text: str,
    used: Container[str] | None = None,
    tests: bool = False,
    pytest_folders: bool = True,
) -> str | None:
    """The source of what importing a module of text ``text`` runs (module doc; ``used``: the
    names the code importing it uses, :func:`code_names`, ``None`` when not known: every
    function then runs; ``tests``: a test module, whose tests, test classes, ``pytest_*`` hooks
    and ``autouse`` fixtures the runner calls; ``pytest_folders``: no module read with it defines
    its own ``tmp_path``, :mod:`.temp_folders`); ``None`` when nothing of it runs or it is no
    Python."""
    tree = _parsed(text)
    if tree is None:
        return None
    callables = _callables(tree)
    if used is None or _BY_STRING.search(text):
        roots = list(callables)
    else:
        roots = [name for name in callables if name in used]
    if tests:
        roots.extend(name for name, nodes in callables.items() if _test_run(name, nodes))
    # a folder made for the code that deletes it (`yield tmp_path; shutil.rmtree(tmp_path)`)
    tidy = tidy_ups(tree, tests and pytest_folders and OVERRIDDEN.search(text) is None)
    return _followed_code(without_calls(text, tidy), tree, callables, roots, main=False)


def module_functions(text: str) -> frozenset[str]:
    """The names of the functions and classes a module of text ``text`` defines."""
    tree = _parsed(text)
    return frozenset() if tree is None else frozenset(_callables(tree))


def _test_run(name: str, nodes: list[_Callable]) -> bool:
    """Whether a test runner calls the function or class ``name`` of a test module itself."""
    if name.startswith(("test", "Test", "pytest_", "setup", "teardown", "setUp", "tearDown")):
        return True
    return any(
        isinstance(node, ast.ClassDef)
        or any(
            isinstance(d, ast.Call) and any(k.arg == "autouse" for k in d.keywords)
            for d in node.decorator_list
        )
        for node in nodes
    )


def main_time_code(text: str) -> str | None:
    """What running a Python script of text ``text`` as the program runs: what importing it
    runs and its ``if __name__ == "__main__":`` block, with the functions that names (module
    doc): ``text`` with the bodies of the other functions blanked (lines kept); ``None`` when
    it is no Python."""
    tree = _parsed(text)
    if tree is None:
        return None
    if _BY_STRING.search(text) or _SELF_READ.search(text):
        return text  # a name reached by a string, its own text read: all of it may run
    callables = _callables(tree)
    roots = [
        name
        for name, nodes in callables.items()
        if name.startswith("__") or any(map(_called_unnamed, nodes))  # (`__getattr__` …)
    ]
    parts: list[ast.AST] = []
    _run_at_import(tree.body, parts, main=True)
    followed = _follow(parts, callables, roots)
    lines = without_calls(text, tidy_ups(tree, False)).splitlines(keepends=True)
    for name, nodes in callables.items():
        if name in followed:
            continue
        for node in nodes:
            first = node.body[0].lineno
            if first > _header_end(node):  # (a body on the `def` line itself stays)
                for number in range(first - 1, node.end_lineno or first):
                    lines[number] = "\n" if lines[number].endswith("\n") else ""
    return "".join(lines)


def _header_end(node: _Callable) -> int:
    """The last line of a function's ``def …:`` header (its arguments, its return type)."""
    header: list[ast.AST] = (
        [*node.bases, *node.keywords]
        if isinstance(node, ast.ClassDef)
        else [node.args, *([node.returns] if node.returns is not None else [])]
    )
    ends = [node.lineno]
    for part in header:
        ends.extend(getattr(inner, "end_lineno", None) or node.lineno for inner in ast.walk(part))
    return max(ends)


#: Decorators that hand a function back to be called by name only (not registered anywhere).
_INERT_DECORATORS: Final = frozenset(
    {"staticmethod", "classmethod", "property", "wraps", "cache", "lru_cache", "cached_property",
     "abstractmethod", "overload", "override", "final", "no_type_check", "dataclass",
     "total_ordering", "singledispatch", "contextmanager", "asynccontextmanager"}
)  # fmt: skip


def _called_unnamed(node: _Callable) -> bool:
    """Whether a script's function or class may run without the script naming it: a class
    (``unittest.main()``, ``cmd.Cmd`` find their methods), a function registered by a decorator
    (``@cli.command()``, ``@app.route``)."""
    if isinstance(node, ast.ClassDef):
        return True
    for decorator in node.decorator_list:
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
        if name not in _INERT_DECORATORS:
            return True
    return False


#: Longest text whose syntax tree (and names) are kept between readings: a tree takes tens of
#: times its text's memory, so only the texts of ordinary modules are kept, a few hundred KiB.
_KEPT_TEXT: Final = 16 * 1024


def _parsed(text: str) -> ast.Module | None:
    """The syntax tree of ``text`` (kept when short: a command reads a module again as more
    code loads); ``None`` when it is no Python. Never changed by its readers."""
    return _kept_tree(text) if len(text) <= _KEPT_TEXT else _tree(text)


@functools.lru_cache(maxsize=128)
def _kept_tree(text: str) -> ast.Module | None:
    return _tree(text)


def _tree(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _callables(tree: ast.Module) -> dict[str, list[_Callable]]:
    """The module's functions and classes by name (a name defined twice: each definition)."""
    found: dict[str, list[_Callable]] = {}
    for node in tree.body:
        if isinstance(node, _CALLABLE_NODES):
            found.setdefault(node.name, []).append(node)
    return found


def _followed_code(
    text: str,
    tree: ast.Module,
    callables: dict[str, list[_Callable]],
    roots: list[str],
    main: bool,
) -> str | None:
    parts: list[ast.AST] = []
    _run_at_import(tree.body, parts, main)
    _follow(parts, callables, roots)
    lines = _LINE.findall(text)
    pieces = [_segment(lines, part) for part in parts]
    code = "\n".join(textwrap.dedent(piece) for piece in pieces if piece)
    return code or None


def _segment(lines: list[str], node: ast.AST) -> str:
    """The source of ``node`` from the text's ``lines``, its first line padded with spaces to
    its column (as :func:`ast.get_source_segment` with ``padded``, the text split once)."""
    where: list[int | None] = [
        getattr(node, name, None)
        for name in ("lineno", "end_lineno", "col_offset", "end_col_offset")
    ]
    first, last, start, end = where
    if first is None or last is None or start is None or end is None or last > len(lines):
        return ""
    if first == last:
        return " " * start + lines[first - 1].encode()[start:end].decode(errors="replace")
    head = lines[first - 1].encode()[start:].decode(errors="replace")
    tail = lines[last - 1].encode()[:end].decode(errors="replace")
    return " " * start + head + "".join(lines[first : last - 1]) + tail


def _follow(
    parts: list[ast.AST], callables: dict[str, list[_Callable]], roots: list[str]
) -> set[str]:
    """The functions and classes ``parts`` (and ``roots``) reach, their bodies added to
    ``parts``; past the bound, every one."""
    followed: set[str] = set()
    pending = [*roots, *_called(parts, callables)]
    while pending and len(followed) < _MAX_FOLLOWED:
        name = pending.pop()
        if name in followed:
            continue
        followed.add(name)
        for node in callables[name]:
            body = _bodies(node)
            parts.extend(body)
            pending.extend(_called(body, callables))
    if pending:  # past the bound: every function runs
        for nodes in callables.values():
            for node in nodes:
                parts.extend(_bodies(node))
        followed.update(callables)
    return followed


def _bodies(node: _Callable) -> list[ast.stmt]:
    """The statements a call of ``node`` runs: a function's body, every method of a class."""
    if not isinstance(node, ast.ClassDef):
        return node.body
    statements: list[ast.stmt] = []
    for inner in ast.walk(node):
        if isinstance(inner, _DEFINITIONS):
            statements.extend(inner.body)
    return statements


def _run_at_import(body: list[ast.stmt], parts: list[ast.AST], main: bool) -> None:
    """The statements of ``body`` that run when it runs (a module's, or a class's; ``main``:
    the module runs as the program, its ``__main__`` block too)."""
    for node in body:
        if isinstance(node, _DEFINITIONS):
            parts.extend(node.decorator_list)
            parts.extend(node.args.defaults)
            parts.extend(d for d in node.args.kw_defaults if d is not None)
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            every.extend(a for a in (arguments.vararg, arguments.kwarg) if a is not None)
            parts.extend(a.annotation for a in every if a.annotation is not None)
            if node.returns is not None:  # (annotations run when the function is defined)
                parts.append(node.returns)
        elif isinstance(node, ast.ClassDef):
            parts.extend(node.decorator_list)
            parts.extend(node.bases)
            parts.extend(node.keywords)
            _run_at_import(node.body, parts, main)
        elif main or not _main_block(node):
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
    parts: list[ast.stmt] | list[ast.AST], callables: dict[str, list[_Callable]]
) -> list[str]:
    """The module functions and classes ``parts`` call, or hand on, by name."""
    found: list[str] = []
    for part in parts:
        for node in ast.walk(part):
            if isinstance(node, ast.Name) and node.id in callables:
                found.append(node.id)
            elif isinstance(node, ast.alias) and node.name in callables:
                found.append(node.name)  # `from __main__ import clean as c`
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                # `cProfile.run("clean('app')")`, `timeit`: a name in a string may be called
                words = _CALLED_WORD.findall(unicodedata.normalize("NFKC", node.value))
                found.extend(word for word in words if word in callables)
    return found


def code_names(code: str) -> frozenset[str] | None:
    """The names Python ``code`` uses (a name, an attribute, a name imported under another),
    so may call of a module it imports; ``None`` when it can reach a name by a string
    (``getattr``, ``vars`` …); none for a text that is no Python."""
    return _kept_names(code) if len(code) <= _KEPT_TEXT else _names(code)


@functools.lru_cache(maxsize=512)
def _kept_names(code: str) -> frozenset[str] | None:
    return _names(code)


def _names(code: str) -> frozenset[str] | None:
    tree = _parsed(code)
    if tree is None:
        return frozenset()  # no Python: it calls no function of a Python module by name
    if _BY_STRING.search(code) is not None:
        return None
    used: set[str] = set()
    modules = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    qualified = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in modules and id(node) not in qualified:
                return None  # a module handed on (`run_all(util)`): what it calls is not known
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, ast.alias) and node.asname is not None:
            used.add(node.name.rsplit(".", 1)[-1])  # `from util import clean as c`
    return frozenset(used)


__all__ = ["code_names", "import_time_code", "main_time_code", "module_functions"]
