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

A folder list's own earlier value is taken as it is only where it cannot add the current folder:
alone (``LD_LIBRARY_PATH=$LD_LIBRARY_PATH``: empty when unset, and an empty list is ignored), or
behind a guard (``/usr/local/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}``). Beside other entries,
``/usr/local/lib:$LD_LIBRARY_PATH`` is ``/usr/local/lib:`` when the variable is unset (as it is
for the harness's own commands), and glibc searches an empty entry as the folder the program
runs in, before the system's: a workspace ``libselinux.so.1`` is loaded into ``ls``. glibc also
splits ``LD_LIBRARY_PATH`` at ``;`` (``/usr/lib;.``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
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
#: OpenSSL's engines and providers folders (native modules its configuration may load).
_OPENSSL_FOLDERS: Final = frozenset({"OPENSSL_ENGINES", "OPENSSL_MODULES"})
#: OpenSSL's configuration file: it may load an engine or a provider (``dynamic_path``), read
#: into every program that uses the library (``curl``, ``python3``'s ``ssl``).
_OPENSSL_CONF: Final = "OPENSSL_CONF"
_OPENSSL_LOADS: Final = re.compile(r"(?i)dynamic_path|engines|providers|\.include|module")
#: The JVM's options variables, read by every ``java`` (a ``-javaagent:`` jar runs first).
_JVM_OPTIONS: Final = frozenset({"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"})
_JVM_CODE: Final = re.compile(r"-(?:javaagent|agentpath):([^=\s]+)|-Xbootclasspath/[ap]:(\S+)")
#: Every variable of this module (the cheap test that keeps other commands away from it).
NATIVE_ENV: Final = (
    frozenset(_LIBRARIES) | _FOLDERS | _OPENSSL_FOLDERS | _JVM_OPTIONS | {_OPENSSL_CONF}
)
#: Folders of the system's own libraries (not the workspace's, not ``/tmp``'s).
SYSTEM_FOLDERS: Final = re.compile(
    r"/(?:usr|lib|lib32|lib64|libx32|opt|nix/store|snap|System|Library)(?:/|$)"
)
#: An entry that is the variable's own inherited value (``$LD_LIBRARY_PATH``, ``${…}``).
_INHERITED: Final = re.compile(r"\$\{?([A-Z_]+)\}?")
#: The variable's own value added only when it is set (``/usr/lib${X:+:$X}``, as
#: :func:`.searchpath.kept_text` keeps it): no entry when it is unset.
_GUARDED: Final = re.compile(r"\$\{([A-Z_]+):\+(?::\$\1|\$\1:)\}")
#: How the loader splits a folder list: glibc takes ``;`` as ``:`` in ``LD_LIBRARY_PATH``.
_FOLDER_SEPARATORS: Final = {"LD_LIBRARY_PATH": re.compile(r"[:;]")}
_COLON: Final = re.compile(":")
#: Folder lists where an empty entry is the current folder (glibc's ``LD_LIBRARY_PATH``; the
#: macOS lists, taken alike): the variable's own value left empty when it is unset
#: (``/usr/lib:$LD_LIBRARY_PATH`` is ``/usr/lib:`` then) searches the folder the program runs in.
_EMPTY_IS_HERE: Final = frozenset(
    {"LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH", "DYLD_FALLBACK_LIBRARY_PATH"}
)


#: The dynamic loader run as a program (``/lib64/ld-linux-x86-64.so.2 --preload ./x.so ls``),
#: by the names it has on Linux (glibc and musl).
LOADER_NAMES: Final = frozenset(
    {"ld.so", "ld-linux.so.2", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
     "ld-linux-armhf.so.3", "ld-linux-riscv64-lp64d.so.1", "ld64.so.1", "ld64.so.2",
     "ld-musl-x86_64.so.1", "ld-musl-aarch64.so.1"}
)  # fmt: skip
#: The loader's options that take a value, by the variable whose meaning they have.
LOADER_OPTIONS: Final = {
    "--preload": "LD_PRELOAD", "--audit": "LD_AUDIT", "--library-path": "LD_LIBRARY_PATH",
    "--argv0": "", "--glibc-hwcaps-prefix": "", "--glibc-hwcaps-mask": "",
}  # fmt: skip


FileText = Callable[[str], "str | None"]


class Runner(Protocol):
    """What the reading of a native loader variable needs."""

    def unknown(self, why: str) -> None:
        """What the command runs cannot be known."""
        ...


def native_environment(
    name: str, value: str | None, runner: Runner, file_text: FileText | None = None
) -> None:
    """A command runs with ``NAME=value`` (``None``: a value not known) of :data:`NATIVE_ENV`
    in its environment: unreadable when a library it names may not be the system's (an OpenSSL
    configuration of the workspace: when it may load a module; ``file_text``: a file's text)."""
    if value is None:
        runner.unknown(f"the programs it runs load native code named at run time ({name})")
        return
    if name == _OPENSSL_CONF:
        system = _system(value, False) or (value.startswith("/etc/") and "/.." not in value)
        text = file_text(value) if file_text is not None and not system else ""
        if text is None or _OPENSSL_LOADS.search(text):
            runner.unknown(f"OpenSSL's configuration may load native code: {name}={value}")
        return
    splitter = _LIBRARIES.get(name)
    # `/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}`: what it had before, if anything
    value = _GUARDED.sub(lambda found: "" if found.group(1) == name else found.group(), value)
    if not value:
        return  # an empty list names nothing (glibc ignores an empty `LD_LIBRARY_PATH`)
    if name in _JVM_OPTIONS:
        entries = [p for found in _JVM_CODE.findall(value) for p in "".join(found).split(":")]
    elif splitter is not None:
        entries = splitter.split(value.strip())
    else:
        entries = _FOLDER_SEPARATORS.get(name, _COLON).split(value)
    for entry in entries:
        inherited = _INHERITED.fullmatch(entry)
        if inherited is not None and inherited.group(1) == name:
            if len(entries) == 1 or name not in _EMPTY_IS_HERE:
                continue  # `LD_PRELOAD=x.so:$LD_PRELOAD`: what it had before, or nothing
            runner.unknown(
                f"the programs it runs load native code from the folder they run in when {name}"
                f" is unset: {name}={value} (`${{{name}:+:${name}}}` adds it only when set)"
            )
            return
        if _system(entry, splitter is not None):
            continue
        what = "library folder" if name in _FOLDERS or name in _OPENSSL_FOLDERS else "library"
        runner.unknown(f"the programs it runs load native code, a {what} not read: {name}={entry}")
        return


def loader_unknown(args: list[str]) -> str | None:
    """Why the dynamic loader run as a program with ``args`` is unreadable: a ``--preload``,
    ``--audit`` library or ``--library-path`` folder that may not be the system's (as the
    variables of the same meaning); ``None`` when it only runs the program after them."""
    found: list[str] = []
    index = 0
    while index < len(args) and args[index].startswith("--"):
        option, equals, value = args[index].partition("=")
        if not equals and option in LOADER_OPTIONS and index + 1 < len(args):
            value = args[index + 1]
            index += 1
        index += 1
        if LOADER_OPTIONS.get(option):
            native_environment(LOADER_OPTIONS[option], value, _Found(found))
    return found[0] if found else None


class _Found:
    """A runner that keeps why the command is unreadable."""

    __slots__ = ("found",)

    def __init__(self, found: list[str]) -> None:
        self.found = found

    def unknown(self, why: str) -> None:
        """Keep ``why``."""
        self.found.append(why)


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
    return SYSTEM_FOLDERS.match(entry) is not None


__all__ = ["LOADER_NAMES", "LOADER_OPTIONS", "NATIVE_ENV", "SYSTEM_FOLDERS", "loader_unknown"]
__all__ += ["native_environment"]
