"""Native libraries program text loads itself: ``ctypes.CDLL('./x.so')``, ``ffi.dlopen``.

A library's machine code cannot be read, as with ``LD_PRELOAD=./x.so ls``
(:mod:`.native_loaders`): program text that loads one which may be the workspace's, one in
``/tmp``, one written by the command or one named at run time is unreadable
(``unreadable-command``, a warning). The loaders read here: Python's ``ctypes`` (``CDLL``,
``PyDLL``, ``cdll.LoadLibrary``, ``cdll[name]``, ``_ctypes.dlopen``), ``cffi``'s ``ffi.dlopen``,
``imp.load_dynamic`` and ``ExtensionFileLoader``; Node's ``process.dlopen`` and a ``require`` of
a ``.node`` file; Ruby's ``Fiddle.dlopen``/``Fiddle::Handle.new`` and ``ffi_lib``; Perl's
``DynaLoader::dl_load_file``, ``FFI::Platypus`` (``lib =>``) and ``FFI::Raw``; PHP's
``FFI::cdef``, ``FFI::load`` (the library its header file names) and ``dl``. A library named by
a bare name (``CDLL('libc.so.6')``, ``ffi_lib 'c'``: the loader looks it up in the system's
folders), found by ``ctypes.util.find_library``, the program itself (``None``, ``nil``) or a
path under a system folder (``/usr/lib/…``) is taken as it is.
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.literal_gate import LiteralGate
from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.embedded import NETWORK_NOTE, network_code
from pytest_harness_audit.policy.shell.native_loaders import SYSTEM_FOLDERS
from pytest_harness_audit.policy.shell.program_strings import joined_names

#: A cheap test: text naming none of these loads no native library by itself.
_MAY_LOAD: Final = re.compile(
    r"ctypes|cffi|dlopen|DLL|dll\b|LoadLibrary|\.node\b|Fiddle|DynaLoader|dl_load|\bffi|FFI"
    r"|load_dynamic|ExtensionFileLoader|\bdl\s*\("
)
_MAY_LOAD_GATE: Final = LiteralGate(_MAY_LOAD)
#: A call that loads the library given as its first argument: in brackets, or (Ruby, Perl)
#: followed by its argument.
_FIRST: Final = re.compile(
    r"(?<!process\.)\b(?:CDLL|PyDLL|WinDLL|OleDLL|LoadLibrary|LoadLibraryEx|dlopen|Handle\.new"
    r"|dl_load_file|ffi_lib|FFI::Raw->new|dl)\s*\("
    r"|(?<!process\.)\b(?:dlopen|Handle\.new|dl_load_file|ffi_lib)[ \t]+(?=['\"\w$@:])"
)
#: A call that loads the library given as its second argument.
_SECOND: Final = re.compile(
    r"\b(?:process\.dlopen|load_dynamic|ExtensionFileLoader|FFI::cdef)\s*\("
)
#: A library loaded by a name in brackets (``ctypes.cdll['./x.so']``) or named at run time.
_SUBSCRIPT: Final = re.compile(r"\b(?:cdll|pydll|windll|oledll)\s*\[")
_BY_NAME: Final = re.compile(r"\bgetattr\s*\(\s*[\w.]*\b(?:cdll|pydll|windll|oledll)\b")
#: A loader's name not called where it stands (``from ctypes import CDLL as L``, ``L = CDLL``,
#: ``map(ctypes.CDLL, paths)``): what it loads is called by another name.
_HANDED_ON: Final = re.compile(
    r"\b(?:CDLL|PyDLL|WinDLL|OleDLL|LoadLibrary|LoadLibraryEx|load_dynamic|ExtensionFileLoader"
    r"|cdll|pydll|windll|oledll)\b(?!\s*[(\[.])"
    r"|\b(?:dlopen|dl_load_file|ffi_lib)\b(?!\s*\(|[ \t]+['\"\w$@:])"
)
#: An import line that binds no name of its own (``from ctypes import CDLL, cdll``).
_PLAIN_IMPORT: Final = re.compile(
    r"(?m)(?:^|;)[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+(?:(?!\bas\b)[^\n;])*(?=[;\n]|$)"
)
#: The literals of a text, and what can run one as code (then they are kept).
_STRINGS: Final = re.compile(r"""'[^'\n]*'|"[^"\n]*\"""")
_RUNS_TEXT: Final = re.compile(r"\b(?:exec|eval|compile|Function|instance_eval|class_eval|send)\b")
#: PHP's ``FFI::load(header)``: the library is the one the header file's ``FFI_LIB`` names.
_BY_HEADER: Final = re.compile(r"\bFFI::load\s*\(")
#: Perl's FFI::Platypus library (``lib => './x.so'``, ``->lib('./x.so')``).
_PLATYPUS: Final = re.compile(r"(?:\blib\s*=>|->\s*lib\s*\()\s*")
#: Node's ``require`` of a native addon file.
_ADDON: Final = re.compile(r"""\brequire\s*\(\s*(['"`])([^'"`]*\.node)\1""")
_LITERAL: Final = re.compile(
    r"""\s*(?:[rRbBuU]{0,2}(['"])((?:(?!\1)[^\\\n])*)\1|qw?\s*\(\s*([^)\s]*)\s*\))"""
)
#: An argument that is no file: the program itself, or a system name looked up.
_NO_FILE: Final = re.compile(
    r"\s*(?:None|nil|null|undef|NULL)\b|\s*(?:ctypes\.)?(?:util\.)?find_library\s*\("
)
#: What :func:`_top_level_comma` gives for a call closed before any comma.
_CLOSED: Final = -2
#: Most loads looked at in one text.
_MAX_LOADS: Final = 64


def program_loads(code: str, language: str, ctx: Context) -> None:
    """Note the network use of program text ``code``, and make it unreadable when it loads a
    native library that may not be the system's (:func:`native_load`)."""
    if network_code(code):
        ctx.note(NETWORK_NOTE)
    if (why := native_load(code, language)) is not None:
        ctx.unknown(why)


def native_load(text: str, language: str = "") -> str | None:
    """Why program text ``text`` (of ``language``, when known) is unreadable: it loads a native
    library that may not be the system's (module doc), named directly or by strings joined
    (``getattr(ctypes, 'CD' + 'LL')``); ``None`` when it loads none, or only the system's."""
    if _MAY_LOAD_GATE.search(text) is None:
        return None
    code = text + joined_names(text, language or "python")
    if _BY_NAME.search(code) is not None or _BY_HEADER.search(code) is not None:
        return "its program loads a native library named at run time or in a header file"
    bare = code if _RUNS_TEXT.search(code) else _STRINGS.sub("''", code)
    if _HANDED_ON.search(_PLAIN_IMPORT.sub("", bare)) is not None:
        return "its program loads a native library through a loader it hands on"
    found: list[tuple[int, str]] = []
    for pattern, position in ((_FIRST, 0), (_SECOND, 1)):
        for match in list(pattern.finditer(code))[:_MAX_LOADS]:
            found.append((position, code[match.end() :]))
    for match in list(_SUBSCRIPT.finditer(code))[:_MAX_LOADS]:
        found.append((0, code[match.end() :]))
    for match in list(_PLATYPUS.finditer(code))[:_MAX_LOADS]:
        found.append((0, code[match.end() :]))
    for position, rest in found:
        library = _argument(rest, position)
        if library is None or not _system(library):
            shown = "a library named at run time" if library is None else library
            return f"its program loads native code it cannot read: {shown}"
    for match in list(_ADDON.finditer(code))[:_MAX_LOADS]:
        if not _system(match.group(2)):
            return f"its program loads native code it cannot read: {match.group(2)}"
    return None


def _argument(rest: str, position: int) -> str | None:
    """The library a call's argument at ``position`` names (``rest``: the text after the call's
    opening), ``""`` for no file (``None``, ``find_library``); ``None`` when not known."""
    for _ in range(position):
        comma = _top_level_comma(rest)
        if comma < 0:
            return "" if comma == _CLOSED else None  # `FFI::cdef("…")`: the program's own
        rest = rest[comma + 1 :]
    if _NO_FILE.match(rest):
        return ""
    literal = _LITERAL.match(rest)
    if literal is None:
        return None
    value = literal.group(2) if literal.group(2) is not None else literal.group(3)
    after = rest[literal.end() :].lstrip()
    if after[:1] not in ("", ",", ")", ";", "\n", "]") or "$" in value or "#{" in value:
        return None  # `CDLL('./' + name)`, `"#{dir}/x.so"`: built at run time
    return value


def _top_level_comma(text: str) -> int:
    """Where the first comma outside brackets and strings is in ``text`` (:data:`_CLOSED`: none
    before the call closes; ``-1``: none within reach)."""
    depth = 0
    quote = ""
    for index, character in enumerate(text[:4096]):
        if quote:
            if character == quote:
                quote = ""
        elif character in "'\"":
            quote = character
        elif character in "([{":
            depth += 1
        elif character in ")]}":
            if depth == 0:
                return _CLOSED
            depth -= 1
        elif character == "," and depth == 0:
            return index
    return -1


def _system(library: str) -> bool:
    """Whether ``library`` is the system's: no file (``""``), a bare name the loader looks up,
    or a path under a system folder with nothing built at run time and no ``..``."""
    if "/" not in library:
        return True
    return "/.." not in library and SYSTEM_FOLDERS.match(library) is not None


__all__ = ["native_load", "program_loads"]
