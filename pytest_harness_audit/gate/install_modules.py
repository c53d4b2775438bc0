"""What the auditor runs from its installation beyond the package: the files of the modules it
has loaded, and the files that run code at every interpreter's start.

:mod:`.install_watch` watches the package whole and the top entries of the environment's
folders; the code the auditor runs is also deeper: ``yaml/constructor.py``, ``git/cmd.py``, a
standard library module, and the bytecode Python loads for each (``__pycache__/*.pyc``: with an
unchecked-hash or a forged timestamp header a replaced one is loaded as it is). So a watch also
covers, for every module in ``sys.modules`` whose file lies under one of its folders, that file
and its bytecode (:func:`loaded_files`; for a module pytest's assertion rewriter loaded, as
pytest loads its plugins' modules, also pytest's own cache file of it, which pytest checks
against the source's hash only), and, in every folder on ``sys.path``, the entries that
run code when an interpreter starts (:func:`is_startup`): ``*.pth`` files, ``sitecustomize`` and
``usercustomize``. Both are read again only when ``sys.modules`` or ``sys.path`` changed.

A cache file that was not there is no change when it holds what the module's source compiles
to (:func:`compiled_from_source`; pytest's, what its rewriter makes of the source): an
interpreter that writes bytecode imported the module (the auditor's own bytecode may have been
left unwritten, ``PYTHONDONTWRITEBYTECODE``).
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import site
import sys
import types
from collections.abc import Iterable
from pathlib import Path

#: Module names an interpreter imports at its start, wherever ``sys.path`` finds them.
STARTUP_MODULES = ("sitecustomize", "usercustomize")
#: A cache file larger than this is not read to be checked (it counts as a change).
_MAX_CACHE_BYTES = 8 << 20
#: Header bytes of a cache file: magic, flags, then source time and size (or source hash).
_HEADER = 16
#: pytest's assertion rewriter: the modules it loads are read from cache files of its own
#: (``NAME.TAG-pytest-VERSION.pyc``), checked against the source's hash only.
_REWRITE = "_pytest.assertion.rewrite"
_PYTEST_CACHE = "-pytest-"


def is_startup(name: str) -> bool:
    """Whether an entry named ``name`` of a folder on ``sys.path`` runs code at an
    interpreter's start: a ``.pth`` file, or a ``sitecustomize`` or ``usercustomize`` module
    or package (its source, bytecode or extension)."""
    return name.endswith(".pth") or name.split(".", 1)[0] in STARTUP_MODULES


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path.startswith(root + os.sep) for root in roots)


def _files_of(module: object) -> tuple[str, ...]:
    """A module's file and its cache files (read from its namespace: no module ``__getattr__``
    runs): Python's, and pytest's when its assertion rewriter loaded the module."""
    if not isinstance(module, types.ModuleType):
        return ()
    space = getattr(module, "__dict__", None)
    if not isinstance(space, dict):
        return ()
    found, cached = space.get("__file__"), space.get("__cached__")
    if not isinstance(found, str) or not found:
        return ()
    found = os.path.abspath(found)
    if not isinstance(cached, str) and found.endswith(".py"):
        try:
            cached = importlib.util.cache_from_source(found)
        except (NotImplementedError, ValueError):
            cached = None
    files = [found] if not isinstance(cached, str) else [found, os.path.abspath(cached)]
    loader = getattr(space.get("__spec__"), "loader", None)
    if type(loader).__name__ == "AssertionRewritingHook" and found.endswith(".py"):
        tail = getattr(sys.modules.get(_REWRITE), "PYC_TAIL", None)
        if isinstance(tail, str):
            folder, name = os.path.split(found)
            files.append(os.path.join(folder, "__pycache__", name[:-3] + tail))
    return tuple(files)


def _signature() -> tuple[int, str | None]:
    modules = sys.modules
    return len(modules), next(reversed(modules), None)


#: The files last read under each set of folders, with ``sys.modules``'s signature then: one
#: reading shared by every watch of the process (the modules are the process's, not a watch's).
_LAST_READ: dict[tuple[str, ...], tuple[tuple[int, str | None], frozenset[str]]] = {}
_MAX_LAST_READ = 16


class LoadedModules:
    """The files of the modules loaded from under some folders, read again only when
    ``sys.modules`` changed (its size or last entry)."""

    def __init__(self) -> None:
        self._roots: tuple[str, ...] | None = None
        self._signature: tuple[int, str | None] | None = None
        self._files: frozenset[str] = frozenset()

    def files(self, roots: tuple[str, ...]) -> frozenset[str]:
        """Each file, and each cache file, of a module in ``sys.modules`` under ``roots``."""
        signature = _signature()
        if signature != self._signature or roots != self._roots:
            last = _LAST_READ.get(roots)
            if last is not None and last[0] == signature:
                found = last[1]
            else:
                found = loaded_files(roots)
                if len(_LAST_READ) >= _MAX_LAST_READ:
                    _LAST_READ.clear()
                _LAST_READ[roots] = (signature, found)
            if found != self._files:  # the same set stays the same object (cheap to compare)
                self._files = found
            self._roots, self._signature = roots, signature
        return self._files


def loaded_files(roots: Iterable[str]) -> frozenset[str]:
    """Each file, and each cache file, of a module in ``sys.modules`` under one of ``roots``
    (as spelled, or resolved)."""
    spelled = {os.path.abspath(root).rstrip(os.sep) for root in roots}
    under = tuple(spelled | {os.path.realpath(root) for root in spelled})
    found: set[str] = set()
    for module in list(sys.modules.values()):
        files = _files_of(module)
        if files and _under(files[0], under):
            found.update(files)
    return frozenset(found)


def startup_folders() -> frozenset[str]:
    """The folders on ``sys.path`` (and the user's ``site-packages`` when it is read), where a
    ``.pth`` file or a start-up module runs at an interpreter's start."""
    found = {os.path.abspath(entry) for entry in sys.path if isinstance(entry, str) and entry}
    if site.ENABLE_USER_SITE:
        found.add(os.path.abspath(site.getusersitepackages()))
    return frozenset(path for path in found if os.path.isdir(path))


def source_of(cached: str) -> str | None:
    """The source file a cache file (``__pycache__/NAME.TAG.pyc``, or pytest's) is compiled
    from."""
    folder, name = os.path.split(cached)
    if _PYTEST_CACHE in name and os.path.basename(folder) == "__pycache__":
        return os.path.join(os.path.dirname(folder), name.split(".", 1)[0] + ".py")
    try:
        return importlib.util.source_from_cache(cached)
    except (NotImplementedError, ValueError):
        return None


def _expected(cached: str, source: str, text: bytes) -> object:
    """The code the source of ``cached`` compiles to: as Python compiles it, or as pytest's
    assertion rewriter does (``None`` where pytest is not loaded)."""
    if _PYTEST_CACHE in os.path.basename(cached):
        rewrite = getattr(sys.modules.get(_REWRITE), "_rewrite_test", None)
        return None if rewrite is None else rewrite(Path(source), None)[1]
    level = 2 if ".opt-2." in cached else 1 if ".opt-1." in cached else 0
    return compile(text, source, "exec", dont_inherit=True, optimize=level)


def compiled_from_source(cached: str) -> bool:
    """Whether the cache file ``cached`` holds what its source compiles to, with a header
    Python checks against the source (so it is what an interpreter writes on import)."""
    source = source_of(cached)
    if source is None:
        return False
    try:
        with open(cached, "rb") as handle:
            data = handle.read(_MAX_CACHE_BYTES + 1)
        with open(source, "rb") as handle:
            text = handle.read()
        info = os.stat(source)
    except OSError:
        return False
    if len(data) > _MAX_CACHE_BYTES or data[:4] != importlib.util.MAGIC_NUMBER:
        return False
    flags = int.from_bytes(data[4:8], "little")
    if flags == 0:
        header = int(info.st_mtime) & 0xFFFFFFFF, info.st_size & 0xFFFFFFFF
        if (int.from_bytes(data[8:12], "little"), int.from_bytes(data[12:16], "little")) != header:
            return False
    elif flags != 3 or data[8:16] != importlib.util.source_hash(text):
        return False  # an unchecked hash (flags 1) is loaded whatever the source holds
    try:
        expected = _expected(cached, source, text)
        return expected is not None and bool(marshal.loads(data[_HEADER:]) == expected)
    except Exception:  # bytes that are no code, or a source that does not compile: a change
        return False


__all__ = [
    "STARTUP_MODULES",
    "LoadedModules",
    "compiled_from_source",
    "is_startup",
    "loaded_files",
    "source_of",
    "startup_folders",
]
