"""The MongoDB shells' own functions that run programs and touch files.

``mongosh``/``mongo`` run JavaScript (``--eval CODE``, ``-f FILE``, ``FILE.js`` operands), read as
program text like ``node -e`` (:mod:`.command_strings`). The shells add functions of their own:
the legacy shell's ``run('rm', '-rf', 'app')``, ``runProgram(…)``, ``_runMongoProgram(…)``
run a program; ``removeFile(F)`` deletes ``F`` (a folder with all it holds), ``cat(F)`` reads,
``writeFile(F, …)`` writes, ``copyFile(A, B)`` copies; ``load(F)`` (both shells) runs a script
file. Each is read as the command it amounts to (``rm -rf F``, ``cat F``); a program or a file
given by anything but literals makes the command unreadable.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner

#: The MongoDB shells.
MONGO_SHELLS: Final = frozenset({"mongosh", "mongo"})
_CALL: Final = re.compile(
    r"(?<![.\w$])(run|runProgram|_runMongoProgram|startMongoProgram|runMongoProgram|removeFile|cat"
    r"|writeFile|copyFile|load)\s*\(([^()]*)\)"
)
_LITERAL: Final = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|`([^`$]*)`)\s*""")
_SCRIPTS: Final = (".js", ".mjs", ".cjs")


def mongo_shell(args: list[str], runner: Runner) -> None:
    """Read the shell functions of a ``mongosh``/``mongo`` command's JavaScript (module doc)."""
    index = 0
    while index < len(args):
        word = args[index]
        option, equals, value = word.partition("=")
        if option in ("--eval", "-f", "--file") and not equals:
            value = args[index + 1] if index + 1 < len(args) else ""
            index += 1
        if option == "--eval":
            mongo_code(value, runner)
        elif option in ("-f", "--file") or (word[:1] != "-" and word.endswith(_SCRIPTS)):
            text = runner.workspace_text(value if option in ("-f", "--file") else word)
            if text is not None:
                mongo_code(text, runner, depth=1)
        index += 1


def mongo_code(text: str, runner: Runner, depth: int = 0) -> None:
    """The shell functions called in the JavaScript ``text``, read as commands."""
    for match in _CALL.finditer(text[: 1 << 16]):
        name = match.group(1)
        values, whole = _literals(match.group(2))
        needed = 2 if name == "copyFile" else 1
        if len(values) < needed or (name.lower().endswith(("run", "program")) and not whole):
            runner.unknown(f"mongo shell {name}() of a value worked out at run time")
            continue
        if name == "removeFile":
            runner.script(f"rm -rf -- {shlex.quote(values[0])}")
        elif name == "cat":
            runner.script(f"cat -- {shlex.quote(values[0])}")
        elif name == "writeFile":
            runner.reading.writes.append(values[0])
        elif name == "copyFile":
            runner.script(shlex.join(["cp", "--", *values[:2]]))
        elif name == "load":
            runner.script_file(values[0], code=True)
            inner = runner.workspace_text(values[0]) if depth < 2 else None
            if inner is not None:
                mongo_code(inner, runner, depth + 1)
        else:
            runner.script(shlex.join(values))


def _literals(arguments: str) -> tuple[list[str], bool]:
    """The string literals ``arguments`` starts with, and whether they are all of it."""
    values: list[str] = []
    position = 0
    while position < len(arguments):
        match = _LITERAL.match(arguments, position)
        if match is None:
            return values, False
        values.append(next(group for group in match.groups() if group is not None))
        position = match.end()
        if position < len(arguments):
            if arguments[position] != ",":
                return values, False
            position += 1
    return values, True


__all__ = ["MONGO_SHELLS", "mongo_code", "mongo_shell"]
