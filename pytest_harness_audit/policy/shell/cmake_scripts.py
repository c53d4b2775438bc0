"""What CMake's own language does when ``cmake -P FILE`` runs a script or ``cmake -S DIR``
configures a project (its ``CMakeLists.txt``), read from the workspace as ``make`` reads a
makefile.

* ``execute_process(COMMAND CMD ARG… [COMMAND …] …)``: each command is read as its words;
* ``file(REMOVE_RECURSE P…)`` destroys, ``file(REMOVE P…)`` deletes, ``file(WRITE|APPEND|TOUCH
  P …)``, ``file(RENAME A B)``, ``file(CREATE_LINK A B)``, ``file(COPY … DESTINATION D)`` and
  ``configure_file(IN OUT)`` write, ``file(READ|STRINGS P …)`` read;
* ``include(FILE)`` of a workspace file (``.cmake``) is read in turn (a few levels).

The source folder's variables (``${CMAKE_SOURCE_DIR}``, ``${CMAKE_CURRENT_LIST_DIR}`` …) are
put in; a path holding another variable (``${CMAKE_BINARY_DIR}/x``: the build folder's files
are the build's) is left out, and ``${CMAKE_COMMAND}``/``${GIT_EXECUTABLE}`` are ``cmake`` and
``git``. Commands at build time (``add_custom_command``) are not read.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.context import Context

#: Keywords that end an ``execute_process`` command's words.
_PROCESS_KEYWORDS: Final = frozenset(
    {"COMMAND", "WORKING_DIRECTORY", "TIMEOUT", "RESULT_VARIABLE", "RESULTS_VARIABLE",
     "OUTPUT_VARIABLE", "ERROR_VARIABLE", "INPUT_FILE", "OUTPUT_FILE", "ERROR_FILE",
     "OUTPUT_QUIET", "ERROR_QUIET", "COMMAND_ECHO", "OUTPUT_STRIP_TRAILING_WHITESPACE",
     "ERROR_STRIP_TRAILING_WHITESPACE", "ENCODING", "ECHO_OUTPUT_VARIABLE",
     "ECHO_ERROR_VARIABLE", "COMMAND_ERROR_IS_FATAL"}
)  # fmt: skip
_CALL: Final = re.compile(r"(?im)^[ \t]*(execute_process|file|configure_file|include)[ \t]*\(")
_ARGUMENT: Final = re.compile(r'"((?:[^"\\]|\\.)*)"|\[\[(.*?)\]\]|([^\s()"#]+)', re.DOTALL)
#: Variables naming the source folder, and programs.
_SOURCE_VARIABLES: Final = re.compile(
    r"\$\{(?:CMAKE_SOURCE_DIR|CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR|PROJECT_SOURCE_DIR)\}"
)
_PROGRAMS: Final = {"${CMAKE_COMMAND}": "cmake", "${GIT_EXECUTABLE}": "git"}
#: Most calls read from one text, and the ``include`` depth followed.
_MAX_CALLS: Final = 256
_MAX_DEPTH: Final = 4


def cmake_project(args: list[str], ctx: Context) -> None:
    """``cmake -P FILE`` (a script) or ``cmake [-S DIR] [DIR] …`` (a configure: the source
    folder's ``CMakeLists.txt``, where it runs without one); nothing for ``--build``,
    ``--install``, ``-E`` …"""
    if any(
        word in ("--build", "--install", "--open", "-E", "--help", "--version") for word in args
    ):
        return
    source: str | None = None
    script: str | None = None
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        value = args[index + 1] if index + 1 < len(args) else None
        if word == "-P":
            script = value
            break
        if word in ("-S", "-B", "-G", "-T", "-A", "-C", "-D", "-U", "--preset"):
            if word == "-S":
                source = value
            index += 2
            continue
        if word.startswith("-S") and len(word) > 2:
            source = word[2:]
        elif not word.startswith("-"):
            operands.append(word)
        index += 1
    if script is not None:
        _read_file(script, ctx, 0)
    else:  # the source folder: `-S DIR`, else the operand, else where it runs (`-B build`)
        folder = source if source is not None else (operands[-1] if operands else ".")
        _read_file(posixpath.normpath(posixpath.join(folder, "CMakeLists.txt")), ctx, 0)


def _read_file(path: str, ctx: Context, depth: int) -> None:
    text = ctx.workspace_text(path)
    if text is not None:
        ctx.reading.reads.append(path)
        _read(text, posixpath.dirname(path), ctx, depth)


def _read(text: str, folder: str, ctx: Context, depth: int) -> None:
    record = ctx.reading
    for count, found in enumerate(_CALL.finditer(text)):
        if count >= _MAX_CALLS:
            break
        name = found.group(1).lower()
        words = [_SOURCE_VARIABLES.sub(folder or ".", w) for w in _arguments(text, found.end())]
        if name == "execute_process":
            for command in _commands(words):
                ctx.script(shlex.join([_PROGRAMS.get(command[0], command[0]), *command[1:]]))
        elif name == "configure_file" and len(words) > 1:
            record.reads.extend(_literal(words[:1]))
            record.writes.extend(_literal(words[1:2]))
        elif name == "include" and words and depth < _MAX_DEPTH:
            if words[0].endswith(".cmake"):
                _read_file(posixpath.join(folder, words[0]), ctx, depth + 1)
        elif name == "file" and len(words) > 1:
            _file(words[0].upper(), words[1:], ctx)


def _file(mode: str, rest: list[str], ctx: Context) -> None:
    record = ctx.reading
    if mode == "REMOVE_RECURSE":
        record.destroys.extend(_literal(rest))
    elif mode == "REMOVE":
        record.deletes.extend(_literal(rest))
    elif mode in ("WRITE", "APPEND", "TOUCH", "TOUCH_NOCREATE"):
        record.writes.extend(_literal(rest if mode.startswith("TOUCH") else rest[:1]))
    elif mode in ("RENAME", "CREATE_LINK", "COPY_FILE") and len(rest) > 1:
        record.writes.extend(_literal(rest[1:2]))
    elif mode in ("COPY", "INSTALL") and "DESTINATION" in rest:
        at = rest.index("DESTINATION")
        destination = _literal(rest[at + 1 : at + 2])
        for folder in destination:
            record.writes.append(folder)
            record.writes.extend(
                posixpath.join(folder, posixpath.basename(s.rstrip("/")))
                for s in _literal(rest[:at])
            )
    elif mode in ("READ", "STRINGS", "SHA256", "MD5", "SIZE"):
        record.reads.extend(_literal(rest[:1]))


def _literal(paths: list[str]) -> list[str]:
    """The paths that hold no variable left (a build folder's: the build's own)."""
    return [path for path in paths if "${" not in path and path]


def _arguments(text: str, start: int) -> list[str]:
    """The arguments of the call whose ``(`` ends at ``start``, up to its ``)``."""
    words: list[str] = []
    position = start
    while len(words) < 512:
        while position < len(text) and text[position] in " \t\r\n":
            position += 1
        if position >= len(text) or text[position] == ")":
            break
        if text[position] == "#":
            end = text.find("\n", position)
            position = len(text) if end < 0 else end
            continue
        found = _ARGUMENT.match(text, position)
        if found is None:
            position += 1
            continue
        words.append(next(g for g in found.groups() if g is not None))
        position = found.end()
    return words


def _commands(words: list[str]) -> list[list[str]]:
    commands: list[list[str]] = []
    current: list[str] | None = None
    for word in words:
        if word == "COMMAND":
            current = []
            commands.append(current)
        elif word in _PROCESS_KEYWORDS:
            current = None
        elif current is not None:
            current.append(word)
    return [command for command in commands if command]


__all__ = ["cmake_project"]
