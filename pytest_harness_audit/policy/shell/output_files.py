"""Files a program writes by an option or an operand of its own, and commands it runs from one.

A tool's output file is a write like ``> FILE`` (``gcc -o .git/hooks/pre-commit hook.c`` plants
a hook as ``cp`` would):

* ``gcc``/``cc``/``clang``/``g++`` … ``-o FILE`` (``-oFILE``), ``ld``/``as`` ``-o FILE``, into a
  folder git or Python take code from (:func:`.code_places.takes_code`), or onto a file no
  compiler's output is named as: a name with an extension other than a binary's (``-o
  SOUL.md``, ``-o notes.txt``), a credential, memory or start-up file (``-o .bashrc``);
  elsewhere a compiled program is native code the reading cannot read, and compiling then
  running it (``-o x && ./x``, ``-o build/lib.so``) stays the ordinary build loop it is;
* ``rustc``/``nasm``/``strip``/``objcopy``/``go build`` ``-o FILE`` (``objcopy IN OUT``) as a
  compiler's;
* ``redis-cli --rdb FILE`` and ``--functions-rdb FILE`` (the server's dump, written there),
  ``pandoc -o``, ``msgfmt -o``, ``base64 -o``, ``tsc --outFile``, ``asciidoctor -o``, ``yq -i``
  (its files, edited in place) and ``zip ARCHIVE`` (``.zip`` added to a name without one);
* ``openssl SUB … -out FILE``; ``iconv -o FILE``/``--output=FILE``;
* ``xxd [options] IN OUT`` (its second operand);
* ``split [options] IN PREFIX`` and ``csplit -f PREFIX``: the first file of the prefix
  (``PREFIXaa``, ``PREFIX00``, its suffix as the options give it);
* ``cmake -E copy``/``copy_if_different``/``copy_directory``/``rename``/``create_symlink``/
  ``create_hardlink``/``touch`` (their destination);
* the archive ``tar c|r|u`` (``cmake -E tar``), ``7z a``, ``jar cf``, ``pax -wf``, ``ar r``
  write, ``tar``'s ``--index-file`` and the file ``gunzip x.gz`` writes
  (:mod:`.archive_outputs`).

A command a program runs from its words is read as that command:

* ``cmake -E env [NAME=VALUE…] CMD …``, ``cmake -E chdir DIR CMD …``, ``cmake -E time CMD …``;
* ``gcc -wrapper PROG,ARG…`` (the compiler's own programs are run through ``PROG ARG…``);
* ``split --filter=CMD`` (a shell command each piece is written to);
* ``cmake -P FILE`` and a configure's ``CMakeLists.txt`` (:mod:`.cmake_scripts`).
"""

from __future__ import annotations

import posixpath
import shlex
from typing import Final

from pytest_harness_audit.policy.sensitive import (
    is_credential_path,
    is_memory_path,
    is_startup_path,
)
from pytest_harness_audit.policy.shell.archive_outputs import (
    ARCHIVE_PROGRAMS,
    archive_outputs,
    tar_outputs,
)
from pytest_harness_audit.policy.shell.cmake_scripts import cmake_project
from pytest_harness_audit.policy.shell.code_places import takes_code
from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.option_words import split_options

#: Compilers and linkers whose ``-o`` names the file they write.
_COMPILERS: Final = frozenset(
    {"gcc", "cc", "c++", "g++", "clang", "clang++", "tcc", "ld", "ld.bfd", "ld.gold", "ld.lld",
     "as", "gfortran", "c89", "c99"}
)  # fmt: skip
_XXD_VALUED: Final = frozenset({"-c", "-cols", "-g", "-groupsize", "-l", "-len", "-s", "-seek",
                        "-o", "-offset", "-n", "-name"})  # fmt: skip
_SPLIT_VALUED: Final = frozenset({"-a", "-b", "-C", "-l", "-n", "-t", "--suffix-length",
                          "--bytes", "--line-bytes", "--lines", "--number", "--separator",
                          "--additional-suffix", "--filter", "--numeric-suffixes",
                          "--hex-suffixes"})  # fmt: skip
_CSPLIT_VALUED: Final = frozenset({"-b", "-f", "-n", "--suffix-format", "--prefix", "--digits"})
#: ``cmake -E`` tools that write their last operand, and those that run a command.
_CMAKE_WRITERS: Final = frozenset(
    {"copy", "copy_if_different", "copy_directory", "copy_directory_if_different", "rename",
     "create_symlink", "create_hardlink", "touch", "touch_nocreate"}
)  # fmt: skip
#: Other programs writing native code by an option (judged as a compiler's ``-o``), by name.
_NATIVE_OUTPUTS: Final = {"rustc": ("-o",), "nasm": ("-o",), "yasm": ("-o",), "strip": ("-o",),
                          "objcopy": ("-o",), "go": ("-o",)}  # fmt: skip
#: Programs writing a file an option names, by name (any file: their output is data or text).
_OUTPUT_OPTIONS: Final = {
    "pandoc": ("-o", "--output"), "msgfmt": ("-o", "--output-file"), "base64": ("-o", "--output"),
    "tsc": ("--outFile", "--outfile", "--out"), "redis-cli": ("--rdb", "--functions-rdb"),
    "yq": (), "asciidoctor": ("-o", "--out-file"), "markdown-it": ("-o", "--output"),
}  # fmt: skip
#: The commands read here (the cheap test before any parsing).
OUTPUT_PROGRAMS: Final = (
    _COMPILERS | {"openssl", "iconv", "xxd", "split", "csplit", "cmake", "zip"}
    | frozenset(_NATIVE_OUTPUTS) | frozenset(_OUTPUT_OPTIONS) | ARCHIVE_PROGRAMS
)  # fmt: skip
#: The extensions a compiler's or linker's output has (none: a program).
_BINARY_EXTENSIONS: Final = frozenset(
    {"", ".o", ".obj", ".so", ".a", ".out", ".exe", ".bin", ".elf", ".dll", ".dylib", ".lib",
     ".wasm", ".s", ".i", ".ii", ".pch", ".gch", ".d", ".map", ".x", ".run", ".test", ".debug",
     ".hex", ".img", ".ko", ".lo", ".la", ".bc", ".ll"}
)  # fmt: skip


def output_files(name: str, args: list[str], ctx: Context) -> None:
    """Record the files ``name args`` writes and read the commands it runs (module doc)."""
    writes = ctx.reading.writes
    if name in _COMPILERS:  # native code the reading cannot read, run or not (`-o x && ./x`):
        # only a binary put where git or Python take code from counts (`-o .git/hooks/x`)
        outputs = _valued(args, ("-o",), attached=True)
        writes.extend(o for o in outputs if _not_binary(o) or takes_code(_folder(o), ctx))
        for value in _valued(args, ("-wrapper",), attached=False):
            ctx.script(shlex.join([*value.split(","), "cc1"]))
    elif name in _NATIVE_OUTPUTS or (name == "go" and args[:1] == ["build"]):
        outputs = _valued(args, _NATIVE_OUTPUTS.get(name, ("-o",)), attached=True)
        if name == "objcopy":  # `objcopy IN OUT`
            outputs += split_options(args, frozenset({"-O", "-I", "-B", "-j", "-R"}))[1][1:2]
        writes.extend(o for o in outputs if _not_binary(o) or takes_code(_folder(o), ctx))
    elif name in _OUTPUT_OPTIONS:
        writes.extend(_valued(args, _OUTPUT_OPTIONS[name], attached=name != "tsc"))
        if name == "yq" and any(a in ("-i", "--inplace") for a in args):
            operands = split_options(args, frozenset({"-p", "-o", "-I", "--from-file"}))[1]
            writes.extend(operands[1:] or operands)  # `yq -i EXPR FILE…`: edited in place
    elif name == "zip":  # `zip ARCHIVE FILE…`: the archive (`.zip` added to a bare name)
        operands = split_options(args, frozenset({"-b", "-n", "-t", "-tt", "-x", "-i"}))[1]
        archive = operands[0] if operands else ""
        if archive and archive != "-":
            writes.append(archive if posixpath.splitext(archive)[1] else archive + ".zip")
    elif name == "openssl":
        writes.extend(_valued(args, ("-out", "--out"), attached=False))
    elif name == "iconv":
        writes.extend(_valued(args, ("-o", "--output"), attached=True))
    elif name == "xxd":
        operands = split_options(args, _XXD_VALUED)[1]
        writes.extend(operands[1:2])
    elif name == "split":
        _split(args, ctx)
    elif name == "csplit":
        prefix = (_valued(args, ("-f", "--prefix"), attached=True) or ["xx"])[-1]
        digits = (_valued(args, ("-n", "--digits"), attached=True) or ["2"])[-1]
        writes.append(prefix + "0" * (int(digits) if digits.isdigit() else 2))
    elif name in ARCHIVE_PROGRAMS:
        writes.extend(archive_outputs(name, args))  # `tar cf SOUL.md app`, `gunzip SOUL.md.gz`
    elif name == "cmake" and args[:1] == ["-E"]:
        if len(args) > 2:
            _cmake(args[1], args[2:], ctx)
    elif name == "cmake":
        cmake_project(args, ctx)  # `cmake -P x.cmake`, `cmake -S . -B build`


def _split(args: list[str], ctx: Context) -> None:
    for command in _valued(args, ("--filter",), attached=False):
        ctx.script(command)
    operands = split_options(args, _SPLIT_VALUED)[1]
    if len(operands) < 2 or _valued(args, ("--filter",), attached=False):
        return  # the prefix `x` in the folder it runs in, or no file: a command takes each piece
    numeric = any(a in ("-d", "-x") or a.startswith(("--numeric", "--hex")) for a in args)
    length = (_valued(args, ("-a", "--suffix-length"), attached=True) or ["2"])[-1]
    suffix = ("0" if numeric else "a") * (int(length) if length.isdigit() else 2)
    extra = (_valued(args, ("--additional-suffix",), attached=False) or [""])[-1]
    ctx.reading.writes.append(operands[1] + suffix + extra)


def _cmake(tool: str, rest: list[str], ctx: Context) -> None:
    if tool in _CMAKE_WRITERS:
        if tool.startswith("touch"):
            ctx.reading.writes.extend(rest)
        elif tool.startswith("copy") and len(rest) > 2:  # several sources into a folder
            ctx.reading.writes.extend(posixpath.join(rest[-1], _base(s)) for s in rest[:-1])
        else:
            ctx.reading.writes.append(rest[-1])
            if tool.startswith("copy") and not tool.startswith("copy_directory"):
                ctx.reading.writes.append(posixpath.join(rest[-1], _base(rest[0])))
    elif tool == "env":
        at = 0
        while at < len(rest) and (rest[at].startswith("--") or "=" in rest[at]):
            if rest[at] == "--":
                at += 1
                break
            at += 1
        settings = [word for word in rest[:at] if "=" in word and not word.startswith("--")]
        if rest[at:]:
            ctx.script(shlex.join(["env", *settings, *rest[at:]]))
    elif tool == "tar":  # `cmake -E tar cf ARCHIVE FILE…`
        ctx.reading.writes.extend(tar_outputs("tar", rest))
    elif tool == "chdir" and len(rest) > 1:
        ctx.script(f"cd {shlex.quote(rest[0])} && {shlex.join(rest[1:])}")
    elif tool == "time":
        ctx.script(shlex.join(rest))


def _not_binary(path: str) -> bool:
    """Whether a compiler's output ``path`` is named as no program or object file is: a text
    file's extension (``SOUL.md``), a credential, memory or start-up file (``.bashrc``)."""
    extension = posixpath.splitext(posixpath.basename(path))[1].lower()
    if extension not in _BINARY_EXTENSIONS and not extension[1:].isdigit():  # `libx.so.1`
        return True
    return is_credential_path(path) or is_memory_path(path) or is_startup_path(path)


def _folder(path: str) -> str:
    return posixpath.dirname(path) or "."


def _base(path: str) -> str:
    return posixpath.basename(path.rstrip("/")) or path


def _valued(args: list[str], names: tuple[str, ...], attached: bool) -> list[str]:
    """The values of the options ``names`` (``-o F``, ``--output=F``; ``attached``: ``-oF``)."""
    found: list[str] = []
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        if option in names and equals and option.startswith("--"):
            found.append(value)
        elif word in names:
            if index + 1 < len(args):
                found.append(args[index + 1])
        elif attached and any(word.startswith(n) and n[1] != "-" for n in names):
            short = next(n for n in names if word.startswith(n) and n[1] != "-")
            found.append(word[len(short) :])
    return [value for value in found if value]


__all__ = ["OUTPUT_PROGRAMS", "output_files"]
