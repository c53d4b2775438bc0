"""Native code a program loads because of its environment: ``LD_PRELOAD=./x.so ls``.

The dynamic loader puts the libraries ``LD_PRELOAD`` names (and the auditing libraries of
``LD_AUDIT``) into every program it starts, before the program's own code runs; it looks a
program's libraries up in the folders of ``LD_LIBRARY_PATH`` first (``LD_LIBRARY_PATH=. ls``: a
workspace ``libc.so.6`` stands in for the system's), and glibc's character set conversions load
modules from ``GCONV_PATH``. macOS has the same in ``DYLD_INSERT_LIBRARIES`` and
``DYLD_LIBRARY_PATH``/``DYLD_FRAMEWORK_PATH``. A library's machine code cannot be read, so a
program given a library (or a library folder) that may be the workspace's, one written by the
agent or one named at run time is unreadable (``unreadable-command``, a warning): only a library
of the system's own folders (``/usr/lib/…``, ``/usr/local/lib``, ``/opt/…``) or a bare name the
loader looks up there (``LD_PRELOAD=libjemalloc.so.2``) is taken as it is.
"""

from __future__ import annotations

import re
from typing import Final, Protocol

#: Variables naming libraries the loader loads, and how their entries are separated.
_LIBRARIES: Final = {
    "LD_PRELOAD": re.compile(r"[:\s]+"),
    "LD_AUDIT": re.compile(r":"),
    "DYLD_INSERT_LIBRARIES": re.compile(r":"),
}
#: Variables naming folders the loader (or glibc's ``iconv``) loads libraries from.
_FOLDERS: Final = frozenset(
    {"LD_LIBRARY_PATH", "GCONV_PATH", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH",
     "DYLD_FALLBACK_LIBRARY_PATH"}
)  # fmt: skip
#: Every variable of this module (the cheap test that keeps other commands away from it).
NATIVE_ENV: Final = frozenset(_LIBRARIES) | _FOLDERS
#: Folders of the system's own libraries (not the workspace's, not ``/tmp``'s).
_SYSTEM: Final = re.compile(
    r"/(?:usr|lib|lib32|lib64|libx32|opt|nix/store|snap|System|Library)(?:/|$)"
)
#: An entry that is the variable's own inherited value (``$LD_LIBRARY_PATH``, ``${…}``).
_INHERITED: Final = re.compile(r"\$\{?([A-Z_]+)\}?")


class Runner(Protocol):
    """What the reading of a native loader variable needs."""

    def unknown(self, why: str) -> None:
        """What the command runs cannot be known."""
        ...


def native_environment(name: str, value: str | None, runner: Runner) -> None:
    """A command runs with ``NAME=value`` (``None``: a value not known) of :data:`NATIVE_ENV`
    in its environment: unreadable when a library it names may not be the system's."""
    if value is None:
        runner.unknown(f"the programs it runs load native code named at run time ({name})")
        return
    splitter = _LIBRARIES.get(name)
    entries = splitter.split(value.strip()) if splitter is not None else value.split(":")
    for entry in entries:
        inherited = _INHERITED.fullmatch(entry)
        if inherited is not None and inherited.group(1) == name:
            continue  # `LD_LIBRARY_PATH=/opt/x/lib:$LD_LIBRARY_PATH`: what it had before
        if _system(entry, splitter is not None):
            continue
        what = "library" if splitter is not None else "library folder"
        runner.unknown(f"the programs it runs load native code, a {what} not read: {name}={entry}")
        return


def _system(entry: str, library: bool) -> bool:
    """Whether the library (or folder) ``entry`` is the system's: under a system folder, with
    no ``..`` and nothing put in at run time, or a bare library name the loader looks up in the
    system folders (an empty folder entry is the current folder)."""
    if not entry:
        return library  # `LD_PRELOAD=' x.so'`: nothing; `LD_LIBRARY_PATH=:/usr/lib`: `.`
    if "$" in entry or "`" in entry or "/.." in entry:
        return False
    if library and "/" not in entry:
        return True  # `LD_PRELOAD=libjemalloc.so.2`: found in the system's folders
    return _SYSTEM.match(entry) is not None


__all__ = ["NATIVE_ENV", "native_environment"]
