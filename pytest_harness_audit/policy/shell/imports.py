"""Workspace files that program text loads: what ``python app.py`` runs is ``app.py`` and the
workspace modules it imports, so a leak moved into ``helper.py`` is read too.

* **Python:** ``import a.b``, ``from a.b import c`` (``a/b.py``, ``a/b/__init__.py``, ``a/b/c.py``),
  relative imports (``from . import x``, ``from .m import y``), ``runpy.run_path("x.py")``,
  ``exec(open("x.py").read())``, ``importlib.import_module("m")``.
* **JavaScript/TypeScript:** ``require("./x")``, ``import … from "./x"``, ``import("./x")``,
  ``export … from "./x"`` (with the extensions and ``index`` files Node and bundlers try), and
  node's ``-r``/``--require``/``--import``/``--loader`` preloads.
* **Ruby:** ``require_relative "x"``, ``load "x.rb"``. **PHP:** ``include``/``require "x.php"``.

Only files of the workspace are read (a module of the standard library or of a virtual
environment is not there), each once per command, at most :data:`MAX_LOADED` of them: text
that loads more is unreadable (a warning), not read in part.
"""

from __future__ import annotations

import base64
import posixpath
import re
import urllib.parse
from typing import Protocol

import re2

#: Most files one command's program text may load through others.
MAX_LOADED = 128
#: Most program text one command's loads may add up to (bytes).
MAX_LOADED_TEXT = 2 << 20
_PY_IMPORT = re2.compile(r"(?m)(?:^|;)[ \t]*import[ \t]+([\w. \t,]+)")
_PY_FROM = re2.compile(
    r"(?m)(?:^|;)[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(?:\(([\w\s,*]*)\)|([\w \t,*]+))"
)
_PY_PATH_RUN = re2.compile(
    r"""(?:run_path|run_module|import_module|__import__)\(\s*['"]([^'"\n]+)['"]"""
    r"""|exec\(\s*(?:compile\(\s*)?open\(\s*['"]([^'"\n]+)['"]"""
)
_JS_LOAD = re2.compile(
    r"""(?m)(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|^\s*import\s+)['"](\.{1,2}/[^'"\n]*)['"]""",
)
_RUBY_PHP_LOAD = re2.compile(
    r"""\b(?:require_relative|load|include|include_once|require_once)\s*\(?\s*['"]([^'"\n]+)['"]"""
)
_JS_ENDINGS = ("", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx", "/index.js",
               "/index.ts", "/index.mjs")  # fmt: skip
_NODE_PRELOADS = frozenset(
    {"-r", "--require", "--import", "--loader", "--experimental-loader", "--test-reporter"}
)


class Loader(Protocol):
    """What following loads needs of the reading."""

    def workspace_text(self, path: str) -> str | None:
        """The text of a workspace file, when the reading can see it."""
        ...

    def load_code(self, path: str) -> None:
        """Read the workspace file ``path`` as program text (once per command)."""
        ...


def follow_loads(code: str, folder: str, loader: Loader) -> None:
    """Read the workspace files ``code`` (a file of ``folder``, or inline) loads."""
    for path in _candidates(code, folder):
        if loader.workspace_text(path) is not None:
            loader.load_code(path)


def node_preloads(args: list[str], loader: Loader) -> None:
    """``node -r ./x.js``, ``--import=./x.mjs``: files node loads before the program."""
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        if option in _NODE_PRELOADS:
            path = value if equals else (args[index + 1] if index + 1 < len(args) else "")
            for candidate in _js_paths(path, "") if path.startswith(".") else ():
                if loader.workspace_text(candidate) is not None:
                    loader.load_code(candidate)
                    break


def data_urls(args: list[str]) -> list[str]:
    """Program text given as ``data:`` URLs (``node --import=data:text/javascript,CODE``)."""
    found: list[str] = []
    for word in args:
        at = word.find("data:")
        if at < 0 or "," not in word[at:]:
            continue
        header, _, body = word[at + 5 :].partition(",")
        if header.endswith(";base64"):
            try:
                body = base64.b64decode(urllib.parse.unquote(body)).decode("utf-8", "replace")
            except ValueError:
                continue
        found.append(urllib.parse.unquote(body))
    return found


def _candidates(code: str, folder: str) -> list[str]:
    found: list[str] = []
    if "import" in code:
        for names in _PY_IMPORT.findall(code):
            for name in names.split(","):
                module = name.strip().split()[0] if name.strip() else ""
                found.extend(_py_paths(module, folder))
        for module, listed, names in _PY_FROM.findall(code):
            found.extend(_py_paths(module, folder))
            for name in (listed or names).split(","):
                name = name.strip().split()[0] if name.strip() else ""
                if name and name != "*":
                    joined = f"{module}.{name}" if not module.endswith(".") else module + name
                    found.extend(_py_paths(joined, folder))
    for run_path, exec_path in _PY_PATH_RUN.findall(code):
        target = run_path or exec_path
        found.extend([target] if target.endswith(".py") else _py_paths(target, folder))
    for path in _JS_LOAD.findall(code):
        found.extend(_js_paths(path, folder))
    for path in _RUBY_PHP_LOAD.findall(code):
        joined = posixpath.normpath(posixpath.join(folder, path)) if folder else path
        found.extend([joined, f"{joined}.rb"])
    return list(dict.fromkeys(found))[: MAX_LOADED * 4]


def _py_paths(module: str, folder: str) -> list[str]:
    """Where a Python module may be in the workspace: from the importing file's folder (the
    script's own folder is on ``sys.path``), and from the workspace root."""
    if not module or not re.fullmatch(r"\.*[A-Za-z_][\w.]*|\.+", module):
        return []
    dots = len(module) - len(module.lstrip("."))
    relative = module[dots:].replace(".", "/")
    if dots:
        base = folder
        for _ in range(dots - 1):
            base = posixpath.dirname(base)
        bases = [base]
    else:
        bases = list(dict.fromkeys([folder, ""]))
    paths: list[str] = []
    for base in bases:
        stem = posixpath.join(base, relative) if relative else base
        if stem:
            paths.extend([f"{stem}.py", posixpath.join(stem, "__init__.py")])
    return paths


def _js_paths(path: str, folder: str) -> list[str]:
    joined = (
        posixpath.normpath(posixpath.join(folder, path)) if folder else posixpath.normpath(path)
    )
    return [joined + ending for ending in _JS_ENDINGS]


__all__ = ["MAX_LOADED", "MAX_LOADED_TEXT", "Loader", "data_urls", "follow_loads", "node_preloads"]
