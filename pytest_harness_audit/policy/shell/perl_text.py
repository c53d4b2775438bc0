"""What ``perl -pe 's/…/…/'`` prints from a text the command holds.

``$(echo xenv | perl -pe 's/x/./')``: a name edited by Perl's substitution from a known text is
a constant, as one edited by ``sed`` is (:mod:`.sed_text`). A ``-p`` program of ``s`` commands
(``/``, ``|``, ``#``, ``,``, ``!`` or ``:`` as delimiter; the flags ``g`` and ``i``; ``$1``…
``$9``, ``$&``, ``\\n``, ``\\t`` and ``\\U``/``\\L``/``\\u``/``\\l``/``\\E`` in the replacement),
joined by ``;``, is worked out line by line (Perl's expressions are RE2's, matched leftmost
first as Perl matches); anything else (another statement, a variable, ``-n``, ``-i``, the
``e`` flag) gives ``None``: not worked out.
"""

from __future__ import annotations

import re
from typing import Final

import re2

from pytest_harness_audit.policy.shell.sed_text import SedCommand, run_commands

_STATEMENT: Final = re.compile(
    r"""\s*s([/|#,!:])((?:\\.|(?!\1).){0,512})\1((?:\\.|(?!\1).){0,512})\1([gi]{0,4})\s*(?:;|$)""",
    re.S,
)
_CASES: Final = "ULulE"
#: What may match a line's newline (or its end differently), which Perl keeps on the line
#: without ``-l``: a negated class, a class of blanks or of non-word characters, ``\z``, ``(?s)``.
_NEWLINE: Final = re.compile(r"\[\^|\\[sDWRvhVHzZN]|\(\?[a-z]*s")
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r"}


def perl_output(args: list[str], stdin: str) -> str | None:
    """What ``perl args`` prints given ``stdin`` (module doc), ``None``: not worked out."""
    program = _program(args)
    if program is None or "\n" in program:
        return None
    chomped = any(a[:1] == "-" and "l" in a for a in args)
    commands: list[SedCommand] = []
    index = 0
    while index < len(program) and len(commands) < 32:
        match = _STATEMENT.match(program, index)
        if match is None or match.end() == index:
            return None
        if not chomped and _NEWLINE.search(match[2]):
            return None  # without `-l` the line holds its newline, which this could match
        command = _substitution(match[2], match[3], match[4], match[1])
        if command is None:
            return None
        commands.append(command)
        index = match.end()
    if not commands or program[index:].strip():
        return None
    return run_commands(commands, stdin, False)


def _program(args: list[str]) -> str | None:
    """The program of ``perl -pe PROGRAM`` (``-p -e``, ``-lpe``), ``None`` for anything else."""
    printing, program = False, None
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word[:1] != "-" or word[1:2] == "-" or not set(word[1:]) <= set("ple"):
            return None
        printing = printing or "p" in word
        if word.endswith("e"):
            if index >= len(args) or program is not None:
                return None
            program = args[index]
            index += 1
    return program if printing else None


def _substitution(pattern: str, replacement: str, flags: str, delim: str) -> SedCommand | None:
    if not pattern or "$" in pattern[:-1] or "@" in pattern or "\\n" in pattern:
        return None  # a variable interpolated, or a newline Perl keeps on the line
    options = re2.Options()
    options.case_sensitive = "i" not in flags
    try:
        compiled = re2.compile(pattern.replace("\\" + delim, re2.escape(delim)), options)
    except re2.error:
        return None
    pieces = _pieces(replacement, delim)
    if pieces is None or any(k == "group" and int(v) > compiled.groups for k, v in pieces):
        return None
    return SedCommand("s", None, compiled, tuple(pieces), 1, "g" in flags)


def _pieces(text: str, delim: str) -> list[tuple[str, str]] | None:
    pieces: list[tuple[str, str]] = []
    index = 0
    while index < len(text):
        char = text[index]
        following = text[index + 1 : index + 2]
        if char == "$":
            if following == "&":
                pieces.append(("group", "0"))
            elif following.isdigit() and following != "0":
                pieces.append(("group", following))
            else:
                return None  # a variable
            index += 2
        elif char == "\\" and following:
            if following in _CASES:
                pieces.append(("case", following))
            elif following in _ESCAPES:
                pieces.append(("text", _ESCAPES[following]))
            elif following.isalnum():
                return None
            else:
                pieces.append(("text", following))  # `\$`, `\@`, `\\`, the delimiter
            index += 2
        elif char in "@\\":
            return None  # an array interpolated
        else:
            pieces.append(("text", char))
            index += 1
    return pieces


__all__ = ["perl_output"]
