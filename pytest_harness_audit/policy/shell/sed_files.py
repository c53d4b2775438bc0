"""The files a sed script reads and writes by its own commands.

``r FILE`` and ``R FILE`` read ``FILE`` into the output; ``w FILE``, ``W FILE`` and the ``w FILE``
flag of ``s///`` write it (each file name runs to the end of its line). The script is read as
sed parses it, so text inside a ``s///`` or ``y///`` part, an address's regular expression or
the text of ``a``/``i``/``c`` is no command. The scripts are every ``-e``/``--expression``
value (attached, bundled ``-ne``, or an unambiguous prefix such as ``--expr=``), every
``-f``/``--file`` file's text (``-f -``: the standard input), else the first operand; the other
operands are files read. With a script file, the whole program (its ``-e`` and ``-f`` parts
joined by lines, in order) has its ``e`` commands read as :func:`.embedded.sed_script` reads
them (``-e 's/.*/rm -rf app/' -f run.sed``, ``run.sed`` holding ``e``). A program that is only
``e`` runs each line of its input: those lines are read as commands when their text is known.
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.embedded import sed_script

_LONG: Final = (
    "--expression", "--file", "--in-place", "--line-length", "--null-data", "--zero-terminated",
    "--quiet", "--silent", "--posix", "--regexp-extended", "--separate", "--sandbox",
    "--unbuffered", "--binary", "--follow-symlinks", "--debug", "--help", "--version",
)  # fmt: skip
_LONG_VALUED: Final = frozenset({"--expression", "--file", "--line-length"})
_ADDRESS: Final = re.compile(
    r"\s*(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\1)[^\\\n]|\\.)*\1[IM]*)"
)
_SECOND: Final = re.compile(
    r"\s*,\s*(?:[+~]?\d+|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\1)[^\\\n]|\\.)*\1[IM]*)"
)
_FLAGS: Final = re.compile(r"[gpiImMe0-9]*(w)?")
_SPECIAL: Final = frozenset({"/dev/stdin", "/dev/stdout", "/dev/stderr"})
_MAX_COMMANDS: Final = 256


def sed_files(args: list[str], runner: Runner) -> None:
    """Record what the ``sed`` command ``args`` reads and writes (module doc)."""
    scripts, files, operands = _scripts(args, runner)
    record = runner.reading
    for script in scripts or operands[:1]:
        reads, writes = script_files(script)
        record.reads.extend(reads)
        record.writes.extend(writes)
    if files:  # one program, its `-e` and `-f` parts joined in order, as sed joins them
        sed_script("\n".join(scripts), runner)
    inputs = operands[0 if scripts else 1 :]
    record.reads.extend(inputs)
    if "\n".join(scripts or operands[:1]).strip() == "e":
        _lines_run(inputs, runner)


def _lines_run(inputs: list[str], runner: Runner) -> None:
    """``sed e FILE``: each line of its input is run as a command (read when its text is
    known)."""
    texts = [runner.workspace_text(path) for path in inputs] if inputs else [runner.stdin_text]
    for text in texts:
        if text is None:
            runner.unknown("sed runs a line of its input as a command")
            continue
        for line in text.splitlines()[:_MAX_COMMANDS]:
            if line.strip():
                runner.script(line)


def _scripts(args: list[str], runner: Runner) -> tuple[list[str], list[str], list[str]]:
    """``(scripts in order, scripts from files, operands)`` of a ``sed`` command's
    ``args``."""
    scripts: list[str] = []
    files: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            operands.extend(args[index:])
            break
        if word.startswith("--"):
            option, equals, value = word.partition("=")
            matches = [name for name in _LONG if name.startswith(option)]
            name = option if option in _LONG else (matches[0] if len(matches) == 1 else "")
            if name in _LONG_VALUED and not equals and index < len(args):
                value, index = args[index], index + 1
            if name == "--expression":
                scripts.append(value)
            elif name == "--file":
                files.extend(text := _file_script(value, runner))
                scripts.extend(text)
            continue
        if not word.startswith("-") or word == "-":
            operands.append(word)
            continue
        for position in range(1, len(word)):
            letter = word[position]
            if letter in "efl":
                value = word[position + 1 :]
                if not value and index < len(args):
                    value, index = args[index], index + 1
                if letter == "e":
                    scripts.append(value)
                elif letter == "f":
                    files.extend(text := _file_script(value, runner))
                    scripts.extend(text)
                break
            if letter == "i":  # `-i.bak`: the rest is a suffix
                break
    return scripts, files, operands


def _file_script(path: str, runner: Runner) -> list[str]:
    """A script file's text (``""``: not known; the ``-e`` parts are still read with it)."""
    text = runner.stdin_text if path in ("-", "/dev/stdin") else runner.workspace_text(path)
    return [text if text is not None else ""]


def script_files(script: str) -> tuple[list[str], list[str]]:
    """``(files read, files written)`` by the commands of a sed ``script``."""
    reads: list[str] = []
    writes: list[str] = []
    index, end = 0, len(script)
    for _ in range(_MAX_COMMANDS):
        while index < end and script[index] in " \t\n;{}!":
            index += 1
        if index >= end:
            break
        if script[index] == "#":
            index = _line_end(script, index)
            continue
        address = _ADDRESS.match(script, index)
        if address:
            index = address.end()
            second = _SECOND.match(script, index)
            index = second.end() if second else index
        while index < end and script[index] in " \t!":
            index += 1
        if index >= end:
            break
        command = script[index]
        index += 1
        if command in "rRwW":
            line_end = _line_end(script, index)
            name = script[index:line_end].strip()
            if name and name not in _SPECIAL:
                (reads if command in "rR" else writes).append(name)
            index = line_end
        elif command in "aic":
            index = _text_end(script, index)
        elif command in "sy":
            index, closed = _parts(script, index)
            if not closed:
                break
            flags = _FLAGS.match(script, index) if command == "s" else None
            if flags:
                index = flags.end()
                if flags.group(1):  # `s/x/y/w FILE`
                    line_end = _line_end(script, index)
                    name = script[index:line_end].strip()
                    if name and name not in _SPECIAL:
                        writes.append(name)
                    index = line_end
        elif command in ":btTeqQlLv":
            index = _word_end(script, index, command in ":e")
        elif command in "{}":
            continue
    return reads, writes


def _line_end(script: str, index: int) -> int:
    found = script.find("\n", index)
    return len(script) if found < 0 else found


def _text_end(script: str, index: int) -> int:
    """The end of an ``a``/``i``/``c`` text: its line, continued by a trailing backslash."""
    while True:
        line_end = _line_end(script, index)
        if line_end >= len(script) or script[line_end - 1 : line_end] != "\\":
            return line_end
        index = line_end + 1


def _word_end(script: str, index: int, whole_line: bool) -> int:
    """The end of a label or argument: the line (``:label``, ``e cmd``), else a ``;``."""
    line_end = _line_end(script, index)
    if whole_line:
        return line_end
    semicolon = script.find(";", index, line_end)
    return line_end if semicolon < 0 else semicolon


def _parts(script: str, index: int) -> tuple[int, bool]:
    """The index after the two delimited parts of ``s``/``y`` (``False``: unterminated)."""
    if index >= len(script):
        return index, False
    delimiter = script[index]
    index += 1
    for _ in range(2):
        while index < len(script) and script[index] != delimiter:
            index += 2 if script[index] == "\\" else 1
        if index >= len(script):
            return index, False
        index += 1
    return index, True


__all__ = ["script_files", "sed_files"]
