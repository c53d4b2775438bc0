"""Where Python looks for a module beyond the importing file's folder: the ``PYTHONPATH`` a
command is given, folders program text puts on ``sys.path`` (``sys.path.insert(0, "lib")``,
``site.addsitedir("lib")``), and a module named by its dotted name (``pytest -p a.b``).

Only workspace folders count (a relative entry, or an absolute one inside the workspace); the
folders found are kept for the rest of the command, as ``sys.path`` changes last for the
process (one reading too many, never too few), at most :data:`MAX_FOLDERS` of them.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

#: Most extra folders a command's Python imports are looked up in.
MAX_FOLDERS: Final = 16
_MODULE: Final = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_SYS_PATH: Final = re.compile(
    r"""(?:sys\.path\.(?:insert|append|extend)|site\.addsitedir)\s*\(([^\n]{0,240})"""
)
_QUOTED: Final = re.compile(r"""['"]([^'"\n]{1,200})['"]""")


def sys_path_folders(code: str, folder: str) -> list[str]:
    """Folders program text puts on ``sys.path`` by a literal name: each quoted name in the
    call, from where the program runs and from the program's own folder (``os.path.join(
    os.path.dirname(__file__), "lib")``)."""
    if "sys.path" not in code and "addsitedir" not in code:
        return []
    found: list[str] = []
    for call in _SYS_PATH.findall(code):
        for name in _QUOTED.findall(call):
            if name.startswith("/") or "$" in name or name.startswith("~"):
                continue
            found.append(posixpath.normpath(name))
            if folder:
                found.append(posixpath.normpath(posixpath.join(folder, name)))
    return [path for path in found if not path.startswith("..")][:MAX_FOLDERS]


def module_files(module: str, folders: list[str]) -> list[str]:
    """The files a dotted module name may be in, under each of ``folders`` (a package's
    ``__init__.py`` files too: importing ``a.b`` runs ``a/__init__.py``)."""
    if not _MODULE.fullmatch(module):
        return []
    parts = module.split(".")
    found: list[str] = []
    for folder in dict.fromkeys(folders):
        base = "" if folder in ("", ".") else folder
        for index in range(1, len(parts)):
            found.append(posixpath.join(base, *parts[:index], "__init__.py"))
        stem = posixpath.join(base, *parts)
        found.extend([f"{stem}.py", posixpath.join(stem, "__init__.py")])
    return found


def add_folders(known: list[str], more: list[str]) -> None:
    """Add ``more`` folders to ``known`` (each once, at most :data:`MAX_FOLDERS`)."""
    for folder in more:
        if folder not in known and len(known) < MAX_FOLDERS:
            known.append(folder)


__all__ = ["MAX_FOLDERS", "add_folders", "module_files", "sys_path_folders"]
