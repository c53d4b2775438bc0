"""Workspace files that program text loads: what ``python app.py`` runs is ``app.py`` and the
workspace modules it imports, so a leak moved into ``helper.py`` is read too.

* **Python:** ``import a.b``, ``from a.b import c`` (``a/b.py``, ``a/b/__init__.py``, ``a/b/c.py``),
  relative imports (``from . import x``, ``from .m import y``), ``runpy.run_path("x.py")``,
  ``exec(open("x.py").read())``, ``importlib.import_module("m")``.
* **JavaScript/TypeScript:** ``require("./x")``, ``import … from "./x"``, ``import("./x")``,
  ``export … from "./x"`` (with the extensions and ``index`` files Node and bundlers try), and
  node's ``-r``/``--require``/``--import``/``--loader`` preloads.
* **Ruby:** ``require_relative "x"``, ``load "x.rb"``. **PHP:** ``include``/``require "x.php"``.
* **Beyond the importing file's folder:** Python modules in the ``PYTHONPATH`` folders and
  those program text puts on ``sys.path`` (:mod:`.pymodules`); Node packages by bare name
  (``require("pkg")``) in the ``node_modules`` folders from the importing file's up to the
  root and in ``NODE_PATH``: the file ``package.json``'s ``main`` names, else ``index``.

Only files of the workspace are read (a module of the standard library or of a virtual
environment is not there), each once per command, at most :data:`MAX_LOADED` of them: text
that loads more is unreadable (a warning), not read in part.
"""

from __future__ import annotations

import base64
import json
import posixpath
import re
import urllib.parse
from typing import Final, Protocol

import re2

#: Most files one command's program text may load through others.
MAX_LOADED: Final = 128
#: Most program text one command's loads may add up to (bytes).
MAX_LOADED_TEXT: Final = 2 << 20
_PY_IMPORT: Final = re2.compile(r"(?m)(?:^|;)[ \t]*import[ \t]+([\w. \t,]+)")
_PY_FROM: Final = re2.compile(
    r"(?m)(?:^|;)[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(?:\(([\w\s,*]*)\)|([\w \t,*]+))"
)
_PY_PATH_RUN: Final = re2.compile(
    r"""(?:run_path|run_module|import_module|__import__)\(\s*['"]([^'"\n]+)['"]"""
    r"""|exec\(\s*(?:compile\(\s*)?open\(\s*['"]([^'"\n]+)['"]"""
)
_JS_LOAD: Final = re2.compile(
    r"""(?m)(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|^\s*import\s+)['"](\.{1,2}/[^'"\n]*)['"]""",
)
_JS_PACKAGE: Final = re2.compile(
    r"""(?m)(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|^\s*import\s+)['"]"""
    r"""((?:@[\w.-]+/)?[\w][\w.-]*(?:/[\w.@-]+)*)['"]""",
)
_JS_BARE: Final = re2.compile(r"(?:@[\w.-]+/)?[\w][\w.-]*(?:/[\w.@-]+)*")
_NODE_BUILTINS: Final = frozenset(
    {"assert", "async_hooks", "buffer", "child_process", "cluster", "console", "constants",
     "crypto", "dgram", "diagnostics_channel", "dns", "domain", "events", "fs", "http", "http2",
     "https", "inspector", "module", "net", "os", "path", "perf_hooks", "process", "punycode",
     "querystring", "readline", "repl", "stream", "string_decoder", "sys", "timers", "tls",
     "trace_events", "tty", "url", "util", "v8", "vm", "wasi", "worker_threads", "zlib", "test"}
)  # fmt: skip
#: Most bare package names of one program text resolved (more is unreadable).
MAX_PACKAGES: Final = 64
_RUBY_PHP_LOAD: Final = re2.compile(
    r"""\b(?:require_relative|load|include|include_once|require_once)\s*\(?\s*['"]([^'"\n]+)['"]"""
)
#: Ruby's ``require "./x"`` (a path from the current folder; a bare name is a gem's).
_RUBY_REQUIRE: Final = re2.compile(r"""\brequire[ \t]+['"](\.{1,2}/[^'"\n]+)['"]""")
#: Perl's ``use Foo::Bar`` and ``require Foo::Bar``, and the folders ``use lib`` adds.
_PERL_USE: Final = re2.compile(
    r"(?m)(?:^|;)[ \t]*(?:use|require)[ \t]+([A-Za-z_]\w*(?:::\w+)*)[ \t]*(?:[;(qw'\"]|$)"
)
#: Perl's ``do "x.pl"``/``require "./x.pm"``: a file run (from the current folder).
_PERL_FILE: Final = re2.compile(r"""\b(?:do|require)[ \t]*\(?[ \t]*['"]([^'"\n$@]+\.p[lm])['"]""")
_PERL_LIB: Final = re2.compile(
    r"""(?m)(?:^|;)[ \t]*use[ \t]+lib[ \t]+"""
    r"""(?:qw?[ \t]*\([ \t]*([\w./ \t-]+)\)|['"]([\w./-]+)['"])"""
)
_JS_ENDINGS: Final = ("", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx", "/index.js",
               "/index.ts", "/index.mjs")  # fmt: skip
_NODE_PRELOADS: Final = frozenset(
    {"-r", "--require", "--import", "--loader", "--experimental-loader", "--test-reporter"}
)


class Loader(Protocol):
    """What following loads needs of the reading."""

    def python_folders(self, code: str, folder: str) -> list[str]:
        """The folders besides its own that Python program text imports modules from."""
        ...

    def node_folders(self) -> list[str]:
        """The ``NODE_PATH`` folders Node resolves a bare module name in."""
        ...

    def unknown(self, why: str) -> None:
        """What the program loads cannot be known."""
        ...

    def workspace_text(self, path: str) -> str | None:
        """The text of a workspace file, when the reading can see it."""
        ...

    def load_code(self, path: str) -> None:
        """Read the workspace file ``path`` as program text (once per command)."""
        ...


def follow_loads(
    code: str, folder: str, loader: Loader, *, paths: bool = True, packages: bool = True
) -> None:
    """Read the workspace files ``code`` (a file of ``folder``, or inline) loads: by path
    (``paths``) and Node packages by name (``packages``; not from a file of ``node_modules``:
    a package's own dependencies are installed code, and a planted package is read where the
    workspace's code loads it, with the files it loads by path)."""
    if paths:
        extra = loader.python_folders(code, folder) if "import" in code else []
        for path in _candidates(code, folder, extra):
            if loader.workspace_text(path) is not None:
                loader.load_code(path)
    installed = "/node_modules/" in f"/{folder}/"
    if packages and ("require" in code or "import" in code) and not installed:
        for path in node_packages(_JS_PACKAGE.findall(code), folder, loader):
            loader.load_code(path)


def node_preloads(args: list[str], loader: Loader) -> None:
    """``node -r ./x.js``, ``--import=./x.mjs``: files node loads before the program."""
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        if option in _NODE_PRELOADS:
            path = value if equals else (args[index + 1] if index + 1 < len(args) else "")
            if not path.startswith((".", "/")) and _JS_BARE.fullmatch(path):
                for found in node_packages([path], "", loader):  # `-r pkg`: node_modules/pkg
                    loader.load_code(found)
                continue
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


def node_packages(specifiers: list[str], folder: str, loader: Loader) -> list[str]:
    """The workspace files Node loads for bare module names (``require("pkg")``,
    ``import x from "pkg/sub"``) required by a file of ``folder``: in each ``node_modules``
    from ``folder`` up to the root, then in the ``NODE_PATH`` folders, the first that is there
    (a package's ``package.json`` ``main``/``exports`` first, else ``index``)."""
    names = [s for s in dict.fromkeys(specifiers) if s.split("/", 1)[0] not in _NODE_BUILTINS]
    if not names:
        return []
    if len(names) > MAX_PACKAGES:
        loader.unknown(f"its program loads more than {MAX_PACKAGES} packages by name")
        return []
    folders: list[str] = []
    current = folder
    while True:
        if posixpath.basename(current) != "node_modules":
            folders.append(posixpath.join(current, "node_modules"))
        if not current or current in (".", "/"):
            break
        current = posixpath.dirname(current)
    folders += loader.node_folders()
    found: list[str] = []
    for name in names:
        for base in folders:
            path = _package_file(posixpath.join(base, name), name, loader)
            if path is not None:
                found.append(path)
                break
    return found


def _package_file(stem: str, name: str, loader: Loader) -> str | None:
    """The file Node loads for the module at ``stem`` (a package folder, or a file)."""
    scoped = name.startswith("@")
    is_package = name.count("/") == (1 if scoped else 0)
    entries: list[str] = []
    if is_package:
        manifest = loader.workspace_text(posixpath.join(stem, "package.json"))
        if manifest is not None:
            entries = [posixpath.normpath(posixpath.join(stem, e)) for e in _entries(manifest)]
    for entry in entries:
        for candidate in (entry, *(entry + ending for ending in _JS_ENDINGS[1:])):
            if loader.workspace_text(candidate) is not None:
                return candidate
    for candidate in _js_paths(stem, ""):
        if loader.workspace_text(candidate) is not None:
            return candidate
    return None


def _entries(manifest: str) -> list[str]:
    """The entry files a ``package.json`` names: ``exports`` (for ``.``), then ``main``."""
    try:
        document = json.loads(manifest)
    except ValueError:
        return []
    if not isinstance(document, dict):
        return []
    found: list[str] = []
    exports = document.get("exports")
    if isinstance(exports, dict):
        exports = exports.get(".", exports)
    pending: list[object] = [exports]
    while pending and len(found) < 8:
        value = pending.pop(0)
        if isinstance(value, str) and value.startswith("./"):
            found.append(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
    main = document.get("main")
    if isinstance(main, str) and main and not main.startswith(("/", "..")):
        found.append(main)
    return found


def _candidates(code: str, folder: str, extra: list[str]) -> list[str]:
    found: list[str] = []
    if "import" in code:
        for names in _PY_IMPORT.findall(code):
            for name in names.split(","):
                module = name.strip().split()[0] if name.strip() else ""
                found.extend(_py_paths(module, folder, extra))
        for module, listed, names in _PY_FROM.findall(code):
            found.extend(_py_paths(module, folder, extra))
            for name in (listed or names).split(","):
                name = name.strip().split()[0] if name.strip() else ""
                if name and name != "*":
                    joined = f"{module}.{name}" if not module.endswith(".") else module + name
                    found.extend(_py_paths(joined, folder, extra))
    for run_path, exec_path in _PY_PATH_RUN.findall(code):
        target = run_path or exec_path
        found.extend([target] if target.endswith(".py") else _py_paths(target, folder, extra))
    for path in _JS_LOAD.findall(code):
        found.extend(_js_paths(path, folder))
    for path in _RUBY_PHP_LOAD.findall(code):
        joined = posixpath.normpath(posixpath.join(folder, path)) if folder else path
        found.extend([joined, f"{joined}.rb"])
    for path in _RUBY_REQUIRE.findall(code) if "require" in code else ():
        found.extend([path, f"{path}.rb"])  # from the folder the program runs in
    if "use" in code or "require" in code or ".p" in code:
        found.extend(_perl_paths(code, folder))
    return list(dict.fromkeys(found))[: MAX_LOADED * 4]


def _perl_paths(code: str, folder: str) -> list[str]:
    """Where the Perl modules ``code`` (of a file of ``folder``) uses may be in the workspace:
    in the folders ``use lib`` adds, its own folder and the current one (a perl before 5.26
    looked there)."""
    files = [posixpath.normpath(path) for path in _PERL_FILE.findall(code)]
    modules = [m for m in _PERL_USE.findall(code) if m not in ("lib", "strict", "warnings")]
    if not modules:
        return files
    bases = [folder, ""]
    for listed, single in _PERL_LIB.findall(code):
        bases.extend((listed or single).split())
    relative = [module.replace("::", "/") + ".pm" for module in modules[:MAX_PACKAGES]]
    return files + [
        posixpath.normpath(posixpath.join(base, name))
        for base in dict.fromkeys(bases)
        for name in relative
    ]


def _py_paths(module: str, folder: str, extra: list[str] | None = None) -> list[str]:
    """Where a Python module may be in the workspace: from the importing file's folder (the
    script's own folder is on ``sys.path``), from the workspace root, and from the ``extra``
    folders (``PYTHONPATH``, ``sys.path`` changes)."""
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
        bases = list(dict.fromkeys([folder, "", *(e if e != "." else "" for e in extra or ())]))
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


__all__ = [
    "MAX_LOADED",
    "MAX_LOADED_TEXT",
    "MAX_PACKAGES",
    "Loader",
    "data_urls",
    "follow_loads",
    "node_preloads",
]
