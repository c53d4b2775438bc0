"""What ``sed`` prints from a text the command holds: its ``s///`` and ``y///`` commands.

``$(echo xenv | sed 's/x/./')``, ``$(sed 's/^/./' <<< env)``, ``$(echo $v | sed 'y/X/./')``: a
name edited by ``sed`` from a known text is still a constant, as one translated by ``tr`` is
(:mod:`.filters`). A script of ``s`` commands (any delimiter; basic or extended expressions,
with ``-E``/``-r``; the flags ``g``, ``p``, ``i``/``I`` and a count; ``&``, ``\\1``…``\\9``,
``\\n``, ``\\xHH``/``\\oNNN``/``\\dNNN`` and the case conversions ``\\U``/``\\L``/``\\u``/``\\l``/
``\\E`` in the replacement), ``y``, ``p``, ``d`` and ``q`` commands, each for every line or the
line of one address (a number, ``$``, ``/RE/``), joined by ``;``, newlines or ``-e``, with
``-n`` or not, is worked out line by line; anything else (a range, a block, another command, a
file operand, a back-reference in an expression) gives ``None``: not worked out. Expressions
are matched by RE2 (leftmost-longest, as POSIX ``sed`` matches), in time linear in the text
whatever the expression.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

import re2

#: Most commands of one script worked out.
_MAX_COMMANDS: Final = 32
_BRE_SPECIAL: Final = {"(": "(", ")": ")", "{": "{", "}": "}", "+": "+", "?": "?", "|": "|"}
_PERL_CLASSES: Final = frozenset("wWsSbB")
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_PLAIN_OPTIONS: Final = frozenset({"-u", "--unbuffered", "-s", "--separate"})


_NUMERIC: Final = {"x": (16, 2, "0123456789abcdefABCDEF"), "o": (8, 3, "01234567"),
                   "d": (10, 3, "0123456789")}  # fmt: skip


def _numeric(text: str, index: int) -> tuple[str, int] | None:
    """GNU ``sed``'s ``\\xHH``, ``\\oNNN``, ``\\dNNN`` at ``text[index]`` (the letter): the
    character and the index after it; ``None``: no such escape."""
    base, most, digits = _NUMERIC.get(text[index], (0, 0, ""))
    end = index + 1
    while end < len(text) and end - index - 1 < most and text[end] in digits:
        end += 1
    if not base or end == index + 1:
        return None
    value = int(text[index + 1 : end], base)
    return (chr(value), end) if value < 256 else None


class _Unknown(Exception):
    """The script holds something not worked out."""


def sed_output(args: list[str], stdin: str, ordered: bool = False) -> str | None:
    """What ``sed args`` prints given ``stdin`` (module doc), ``None``: not worked out;
    ``ordered``: the order of the lines is known (not a listing's, whose order is the
    locale's), so a script that picks lines by their place (``3p``, ``$d``, ``q``) is worked
    out too."""
    scripts: list[str] = []
    extended = quiet = False
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            operands.extend(args[index:])
            break
        if word in ("-e", "--expression") and index < len(args):
            scripts.append(args[index])
            index += 1
        elif word.startswith("--expression="):
            scripts.append(word.partition("=")[2])
        elif word in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif word in _PLAIN_OPTIONS:
            continue
        elif word in ("--quiet", "--silent"):
            quiet = True
        elif word[:1] == "-" and word != "-" and word[1:2] != "-":
            letters = word[1:]
            if letters.endswith("e") and set(letters[:-1]) <= set("Ern") and index < len(args):
                scripts.append(args[index])  # `-ne SCRIPT`
                index += 1
                letters = letters[:-1]
            elif not set(letters) <= set("Ern"):
                return None  # `-i`, `-z`, `-f FILE` …
            extended = extended or bool(set(letters) & set("Er"))
            quiet = quiet or "n" in letters
        elif word[:1] == "-" and word != "-":
            return None
        else:
            operands.append(word)
    if not scripts:
        if not operands:
            return None
        scripts, operands = operands[:1], operands[1:]
    if any(o != "-" for o in operands):
        return None  # a file is edited, not the known text
    try:
        commands = _parse("\n".join(scripts), extended)
    except (_Unknown, re2.error):
        return None
    if not ordered and any(c.kind == "q" or type(c.address) in (int, str) for c in commands):
        return None
    return _run(commands, stdin, quiet)


class _Command(NamedTuple):
    """One command: ``s`` (``expression`` compiled, replacement ``pieces``), ``y`` (``table``),
    ``p``, ``d`` or ``q``, for the lines of its ``address`` (a number, ``$``, an expression)."""

    kind: str
    table: dict[int, int] | None = None
    expression: Any = None
    pieces: tuple[tuple[str, str], ...] = ()
    nth: int = 1
    every: bool = False
    printing: bool = False
    address: Any = None


def _parse(script: str, extended: bool) -> list[_Command]:
    commands: list[_Command] = []
    index = 0
    while index < len(script):
        char = script[index]
        if char in " \t\n;":
            index += 1
            continue
        if len(commands) >= _MAX_COMMANDS:
            raise _Unknown
        address, index = _address(script, index, extended)
        char = script[index : index + 1]
        if char in ("p", "d", "q"):
            commands.append(_Command(char, address=address))
            index += 1
            continue
        if char not in ("s", "y") or index + 1 >= len(script):
            raise _Unknown
        delim = script[index + 1]
        if delim in "\n\\":
            raise _Unknown
        first, index = _part(script, index + 2, delim)
        second, index = _part(script, index, delim)
        if char == "y":
            source, target = _y_set(first, delim), _y_set(second, delim)
            if len(source) != len(target):
                raise _Unknown
            commands.append(_Command("y", str.maketrans(source, target), address=address))
            continue
        flags_end = index
        while flags_end < len(script) and script[flags_end] not in ";\n}":
            flags_end += 1
        flags = script[index:flags_end].strip()
        index = flags_end
        command = _substitution(first, second, flags, extended, delim)
        commands.append(command._replace(address=address))
    return commands


def _address(script: str, index: int, extended: bool) -> tuple[Any, int]:
    """The address before a command (``3``, ``$``, ``/RE/``; ``None``: every line)."""
    char = script[index]
    if char.isdigit():
        end = index
        while end < len(script) and script[end].isdigit():
            end += 1
        return int(script[index:end][:9]), end
    if char == "$":
        return "$", index + 1
    if char == "/":
        pattern, end = _part(script, index + 1, "/")
        if not pattern:
            raise _Unknown
        return _compiled(pattern, extended, "/", re2.Options()), end
    return None, index


def _part(script: str, index: int, delim: str) -> tuple[str, int]:
    """The text up to the next unescaped ``delim`` (escapes kept), and the index after it."""
    start = index
    while index < len(script):
        if script[index] == "\\":
            index += 2
            continue
        if script[index] == delim:
            return script[start:index], index + 1
        if script[index] == "\n":
            break
        index += 1
    raise _Unknown


def _y_set(text: str, delim: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            if following in _ESCAPES:
                out.append(_ESCAPES[following])
            elif following in ("\\", delim):
                out.append(following)
            else:
                raise _Unknown
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _substitution(
    pattern: str, replacement: str, flags: str, extended: bool, delim: str
) -> _Command:
    options = re2.Options()
    count, every, printing = 1, False, False
    digits = ""
    for flag in flags:
        if flag == "g":
            every = True
        elif flag in "iI":
            options.case_sensitive = False
        elif flag.isdigit():
            digits += flag
        elif flag == "p":
            printing = True
        else:
            raise _Unknown  # `e`, `w FILE`, `m` …
    if digits:
        count = int(digits[:6])
        if count < 1:
            raise _Unknown
    if not pattern:
        raise _Unknown  # the last expression used
    compiled = _compiled(pattern, extended, delim, options)
    pieces = _replacement(replacement)
    if any(kind == "group" and int(value) > compiled.groups for kind, value in pieces):
        raise _Unknown  # sed refuses the script: `\2` of one group
    return _Command("s", None, compiled, pieces, count, every, printing)


def _compiled(pattern: str, extended: bool, delim: str, options: Any) -> Any:
    options.longest_match = True
    return re2.compile(_expression(pattern, extended, delim), options)


def _expression(pattern: str, extended: bool, delim: str) -> str:
    """``pattern`` (POSIX basic or extended) in RE2's syntax."""
    out: list[str] = []
    index = 0
    length = len(pattern)
    while index < length:
        char = pattern[index]
        at_start = not out or out[-1] in ("(", "|", "^")
        if char == "\\":
            if index + 1 >= length:
                raise _Unknown
            following = pattern[index + 1]
            numeric = _numeric(pattern, index + 1)
            if numeric is not None:
                out.append(re2.escape(numeric[0]))
                index = numeric[1]
                continue
            index += 2
            if following == delim:
                out.append(re2.escape(following))
            elif not extended and following in _BRE_SPECIAL:
                out.append(_BRE_SPECIAL[following])
            elif following in _ESCAPES:
                out.append(re2.escape(_ESCAPES[following]))
            elif following in _PERL_CLASSES:
                out.append("\\" + following)
            elif following.isalnum():
                raise _Unknown  # a back-reference, `\<`, `\cX` …
            else:
                out.append(re2.escape(following))
            continue
        if char == "[":
            end = _bracket_end(pattern, index)
            body = pattern[index + 1 : end]
            if "[=" in body or "[." in body:
                raise _Unknown
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = end + 1
            continue
        index += 1
        if not extended and char in _BRE_SPECIAL:
            out.append(re2.escape(char))  # `(`, `+`, `|` … are plain characters
        elif char == "*" and at_start:
            if extended:
                raise _Unknown
            out.append("\\*")
        elif char == "^" and not extended and not at_start:
            out.append("\\^")
        elif (
            char == "$"
            and not extended
            and index < length
            and not pattern.startswith(("\\)", "\\|"), index)
        ):
            out.append("\\$")
        else:
            out.append(char)
    return "".join(out)


def _bracket_end(pattern: str, start: int) -> int:
    """The index of the ``]`` closing the bracket expression opened at ``start``."""
    index = start + 1
    if pattern[index : index + 1] == "^":
        index += 1
    if pattern[index : index + 1] == "]":
        index += 1
    while index < len(pattern):
        if pattern.startswith(("[:", "[=", "[."), index):
            close = pattern.find(pattern[index + 1] + "]", index + 2)
            if close < 0:
                raise _Unknown
            index = close + 2
            continue
        if pattern[index] == "]":
            return index
        index += 1
    raise _Unknown


def _replacement(text: str) -> tuple[tuple[str, str], ...]:
    """The pieces of a replacement: ``("text", s)``, ``("group", n)`` or ``("case", c)``."""
    pieces: list[tuple[str, str]] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "&":
            pieces.append(("group", "0"))
        elif char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            numeric = _numeric(text, index + 1)
            if numeric is not None:
                pieces.append(("text", numeric[0]))
                index = numeric[1]
                continue
            index += 1
            if following.isdigit():
                pieces.append(("group", following))
            elif following in "ULulE":
                pieces.append(("case", following))
            elif following in _ESCAPES:
                pieces.append(("text", _ESCAPES[following]))
            elif following.isalpha():
                raise _Unknown
            else:
                pieces.append(("text", following))  # `\&`, `\\`, `\/`, the delimiter
        elif char == "\\":
            raise _Unknown
        else:
            pieces.append(("text", char))
        index += 1
    return tuple(pieces)


def _replace(match: Any, pieces: tuple[tuple[str, str], ...]) -> str:
    out: list[str] = []
    mode, once = "", ""
    for kind, value in pieces:
        if kind == "case":
            if value in "ul":
                once = value
            else:
                mode, once = ("" if value == "E" else value), ""
            continue
        if kind == "group":
            group = match.group(int(value))
            chunk = "" if group is None else str(group)
        else:
            chunk = value
        chunk = chunk.upper() if mode == "U" else chunk.lower() if mode == "L" else chunk
        if once and chunk:
            chunk = (chunk[0].upper() if once == "u" else chunk[0].lower()) + chunk[1:]
            once = ""
        out.append(chunk)
    return "".join(out)


def _run(commands: list[_Command], stdin: str, quiet: bool) -> str:
    lines = stdin.split("\n")
    ending = lines[-1] == ""
    if ending:
        lines.pop()
    out: list[str] = []
    last = len(lines)
    for number, line in enumerate(lines, start=1):
        newline = "\n" if number < last or ending else ""
        printed, space, stop = _cycle(commands, line, number == last, number)
        out.extend(text + newline for text in printed)
        if space is not None and not quiet:
            out.append(space + newline)  # the pattern space, printed at the end of the cycle
        if stop:
            break
    return "".join(out)


def _cycle(
    commands: list[_Command], line: str, last: bool, number: int
) -> tuple[list[str], str | None, bool]:
    """One line through the script: what ``p`` printed, the pattern space at the end
    (``None``: deleted), and whether ``q`` ended the input."""
    printed: list[str] = []
    for command in commands:
        address = command.address
        if address is not None:
            if address == "$":
                if not last:
                    continue
            elif isinstance(address, int):
                if address != number:
                    continue
            elif address.search(line) is None:
                continue
        kind = command.kind
        if kind == "y" and command.table is not None:
            line = line.translate(command.table)
        elif kind == "s":
            line, made = _substitute(line, command)
            if made and command.printing:
                printed.append(line)
        elif kind == "p":
            printed.append(line)
        elif kind == "d":
            return printed, None, False
        else:  # `q`
            return printed, line, True
    return printed, line, False


def _substitute(line: str, command: _Command) -> tuple[str, bool]:
    made = False
    out: list[str] = []
    last, previous, number = 0, -1, 0
    for match in command.expression.finditer(line):
        if match.start() == match.end() == previous:
            continue  # sed takes no empty match right after a match
        previous = match.end()
        number += 1
        if number < command.nth:
            continue
        if number > command.nth and not command.every:
            break
        out.append(line[last : match.start()])
        out.append(_replace(match, command.pieces))
        last = match.end()
        made = True
    out.append(line[last:])
    return "".join(out), made


#: A command of a script (for other programs' substitutions: :mod:`.perl_text`).
SedCommand = _Command
#: What a script of commands prints from a text.
run_commands = _run

__all__ = ["SedCommand", "run_commands", "sed_output"]
