"""An awk command's parts, and the files its program reads and writes by name.

``getline [VAR] < FILE`` reads ``FILE``; ``print … > FILE``, ``print … >> FILE`` and ``printf``
likewise write it. ``FILE`` is a string (``".env"``), strings joined (``(".e" "nv")``), or a
variable given a string in the program (``f = ".env"``), by ``-v f=.env`` or by an operand
``f=.env``; ``FILENAME``, ``ARGV[…]`` and ``"-"`` name the input, read already. Any other name
is made at run time: the reading says so. Text inside a string (``print "getline < x"``) is no
command, and ``>`` inside parentheses (``print (a > b)``) is a comparison.

:func:`awk_arguments` splits the command line as awk does: ``-f FILE``/``--file=FILE``/
``-fFILE`` (and gawk's ``-E``/``--exec``), ``-e``/``--source`` (``--source=TEXT``, prefixes such
as ``--sou``), ``-v``/``--assign`` (``-vX=1``), ``-F``; the first operand is the program when no
file or source option gave one.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

_PROGRAM_OPTIONS = {"-f": "file", "-E": "file", "-e": "source", "-v": "assign", "-F": "other"}
_PROGRAM_OPTIONS |= {"-i": "other", "-l": "other", "-W": "other"}
_LONG: Final = {"--file": "file", "--exec": "file", "--source": "source", "--assign": "assign",
         "--field-separator": "other", "--include": "other", "--load": "other"}  # fmt: skip
_LONG_NAMES: Final = (*_LONG, "--characters-as-bytes", "--traditional", "--copyright", "--debug",
               "--dump-variables", "--gen-pot", "--help", "--lint", "--bignum", "--use-lc-numeric",
               "--no-optimize", "--optimize", "--posix", "--pretty-print", "--profile",
               "--re-interval", "--sandbox", "--version", "--csv",
               "--non-decimal-data")  # fmt: skip
_ASSIGNMENT: Final = re.compile(r"([A-Za-z_]\w*)=(.*)", re.DOTALL)
_TOKEN: Final = re.compile(
    r'"(?:[^"\\\n]|\\.)*"'  # a string
    r"|\bgetline\b(?:\s*[$A-Za-z_][\w$]*(?:\[[^\]\n]*\])?)?\s*<(?!=)"  # `getline [var] <`
    r"|\bprintf?\b"
    r"|([A-Za-z_]\w*)\s*=(?!=)\s*((?:\"(?:[^\"\\\n]|\\.)*\"\s*)+)"  # `f = ".env"`
)
_STRING: Final = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_NAME: Final = re.compile(
    r"\s*\(?\s*((?:\"(?:[^\"\\\n]|\\.)*\"\s*)+|[A-Za-z_]\w*(?:\[[^\]\n]*\])?)\s*"
)
_INPUT_NAMES: Final = re.compile(r"FILENAME|ARGV\[[^\]]*\]|\"-\"|\"/dev/std(?:in|out|err)\"")
_MAX_FILES: Final = 64


class AwkArguments(NamedTuple):
    """An awk command line: its program texts, program files, assignments and input files."""

    programs: list[str]
    program_files: list[str]
    assignments: dict[str, str]
    operands: list[str]


def awk_arguments(args: list[str]) -> AwkArguments:
    """Split an awk command's ``args`` (module doc)."""
    parts = AwkArguments([], [], {}, [])
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        kind, value = "", None
        if word == "--":
            parts.operands.extend(args[index:])
            break
        if word.startswith("--"):
            option, equals, text = word.partition("=")
            matches = [name for name in _LONG_NAMES if name.startswith(option)]
            name = option if option in _LONG_NAMES else (matches[0] if len(matches) == 1 else "")
            kind = _LONG.get(name, "")
            value = text if equals else None
        elif word.startswith("-") and word != "-":
            kind = _PROGRAM_OPTIONS.get(word[:2], "")
            value = word[2:] or None
        else:
            parts.operands.append(word)
            continue
        if kind and value is None and index < len(args):
            value, index = args[index], index + 1
        if value is not None:
            _take(parts, kind, value)
    if not parts.programs and not parts.program_files and parts.operands:
        parts.programs.append(parts.operands.pop(0))
    for operand in parts.operands:
        assignment = _ASSIGNMENT.fullmatch(operand)
        if assignment:
            parts.assignments.setdefault(assignment.group(1), assignment.group(2))
    return parts


def _take(parts: AwkArguments, kind: str, value: str) -> None:
    if kind == "file":
        parts.program_files.append(value)
    elif kind == "source":
        parts.programs.append(value)
    elif kind == "assign" and (assignment := _ASSIGNMENT.fullmatch(value)):
        parts.assignments[assignment.group(1)] = assignment.group(2)


def awk_files(program: str, assignments: dict[str, str]) -> tuple[list[str], list[str], bool]:
    """``(files read, files written, a file named at run time)`` by an awk ``program``."""
    if "getline" not in program and ">" not in program:
        return [], [], False
    variables = dict(assignments)
    reads: list[str] = []
    writes: list[str] = []
    unknown = False
    for match in _TOKEN.finditer(program):
        token = match.group(0)
        if match.group(1):
            variables[match.group(1)] = _joined(match.group(2))
            continue
        if token.startswith('"'):
            continue
        if token.startswith("getline"):
            target: str | None = _target(program, match.end())
        else:
            target = _print_target(program, match.end())
            if target is None:
                continue
        name = _resolve(target or "", variables)
        if name is None:
            unknown = unknown or not _INPUT_NAMES.fullmatch((target or "").strip())
        elif name not in ("-", "/dev/stdin", "/dev/stdout", "/dev/stderr"):
            (reads if token.startswith("getline") else writes).append(name)
        if len(reads) + len(writes) >= _MAX_FILES:
            break
    return reads, writes, unknown


def _target(program: str, start: int) -> str:
    """The file expression after ``<`` or ``>``/``>>``."""
    match = _NAME.match(program, start)
    return match.group(1) if match else program[start : start + 1]


def _print_target(program: str, start: int) -> str | None:
    """The file a ``print``/``printf`` statement from ``start`` redirects into (``None``: its
    output is not redirected to a file)."""
    depth = 0
    index = start
    while index < len(program):
        char = program[index]
        if char == '"':
            string = _STRING.match(program, index)
            index = string.end() if string else index + 1
            continue
        if char in "([":
            depth += 1
        elif char in ")]":
            if depth == 0:
                return None
            depth -= 1
        elif depth == 0 and char in ";}\n|":
            return None
        elif depth == 0 and char == ">":
            index += 2 if program[index + 1 : index + 2] == ">" else 1
            return _target(program, index)
        index += 1
    return None


def _resolve(target: str, variables: dict[str, str]) -> str | None:
    """The file ``target`` names, when the text shows it."""
    target = target.strip()
    if target.startswith('"'):
        return _joined(target)
    return variables.get(target)


def _joined(strings: str) -> str:
    return "".join(_unescape(part) for part in _STRING.findall(strings))


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)


__all__ = ["AwkArguments", "awk_arguments", "awk_files"]
