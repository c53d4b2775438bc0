"""What ``echo`` and ``printf`` print, for the words the reading knows (:mod:`.expand`,
:mod:`.streams`): ``echo`` joins its operands, ``printf`` fills a template of string,
character and integer conversions (``%s``, ``%b``, ``%c``, ``%x`` …, with width and precision:
``printf '.e%cv' n`` and ``printf '%.4s' .envXYZ`` print ``.env``) and backslash escapes;
``basename``/``dirname`` print a part of a path."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Final

from pytest_harness_audit.policy.shell.sql_output import SQL_CLIENTS, client_output


def echo_output(argv: list[str]) -> str | None:
    """What ``echo``/``printf '%s…'`` prints for ``argv``, without the final newline."""
    name = argv[0].rsplit("/", 1)[-1] if argv else ""
    args = argv[1:]
    if name == "echo":
        escapes = False
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            escapes = escapes or "e" in args[0]
            args = args[1:]
        text = " ".join(args)
        return _PRINTF_ESCAPE.sub(_printf_escape, text) if escapes else text
    if name in ("basename", "dirname") and args and not args[0].startswith("-"):
        return _path_part(name, args)
    if name == "printf" and args:
        template = args[0]
        if template == "%s":
            return "".join(args[1:])
        if template in ("%s\\n", "%s\n"):  # a value a line (the last newline left out)
            return "\n".join(args[1:])
        if "%" not in template:
            return _PRINTF_ESCAPE.sub(_printf_escape, template)
        return _printf_strings(template, args[1:])
    return None


#: A conversion of a ``printf`` template: flags, width, precision and its letter.
_CONVERSION: Final = re.compile(r"%([-+ #0]*)(\*|\d*)(?:\.(\*|\d*))?(.)")
_NUMBERS: Final = frozenset("diouxX")
#: A value ``%q`` prints as it is.
_PLAIN_WORD: Final = re.compile(r"[\w./@%+=:,-]+")


def printed_text(
    argv: list[str],
    stdin: Callable[[], str | None],
    files: Callable[[str], str | None] | None = None,
) -> str | None:
    """What the command ``argv`` prints, when its words give it: ``echo``'s and ``printf``'s
    text (``echo``'s with its newline), a SQL client's constant rows (:mod:`.sql_output`;
    ``stdin``: its standard input, asked for when needed; ``files``: a file's text, for a
    client's ``-f`` file)."""
    text = echo_output(argv)
    if text is not None:
        return text + "\n"
    name = argv[0].rsplit("/", 1)[-1] if argv else ""
    return client_output(name, argv[1:], stdin, files) if name in SQL_CLIENTS else None


def _printf_strings(template: str, values: list[str]) -> str | None:
    """``printf TEMPLATE VALUES…``: each conversion (``%s``, ``%b``, ``%c``, ``%q`` of a plain
    word, ``%d``/``%i``/``%u``/``%o``/``%x``/``%X``, with flags, width and precision) filled with
    the next value, the template used again while values are left, as ``printf`` does; ``None``
    for another conversion (``%f``, ``%(…)T``) or a number that is none."""
    specs = _CONVERSION.findall(template)
    if any(spec[3] not in "sbcq%" and spec[3] not in _NUMBERS for spec in specs):
        return None  # (`%b`: the value's escapes, which the template's pass below reads)
    count = sum((spec[3] != "%") + (spec[1] == "*") + (spec[2] == "*") for spec in specs)
    out: list[str] = []
    remaining = list(values)
    while True:
        taken, remaining = remaining[:count], remaining[count:]
        taken += [""] * (count - len(taken))
        try:
            rendered = _CONVERSION.sub(functools.partial(_converted, values=iter(taken)), template)
        except ValueError:
            return None
        out.append(_PRINTF_ESCAPE.sub(_printf_escape, rendered))
        if not remaining or not count or len(out) >= 64:
            return "".join(out)


def _converted(match: re.Match[str], values: Iterator[str]) -> str:
    """One conversion filled with the next of ``values`` (``ValueError``: not known)."""
    flags, width, precision, letter = match.groups()
    if letter == "%":
        return "%"
    if width == "*":
        width = str(_number(next(values)))
    if precision == "*":
        precision = str(_number(next(values)))
    value = next(values)
    dot = "" if precision is None else "." + precision
    if letter in _NUMBERS:
        return f"%{flags}{width}{dot}{letter}" % _number(value)
    if letter == "c":
        value, dot = value[:1], ""
    elif letter == "q" and value and not _PLAIN_WORD.fullmatch(value):
        raise ValueError(value)  # shell quoting: not worked out here
    return f"%{flags.replace('0', '')}{width}{dot}s" % value


def _number(value: str) -> int:
    """A ``printf`` number: decimal, ``0x…`` hex, ``0…`` octal, ``'c`` a character's code
    (empty: 0)."""
    value = value.strip()
    if not value:
        return 0
    if value[0] in "'\"":
        return ord(value[1]) if len(value) > 1 else 0
    return int(value, 0) if not re.fullmatch(r"[+-]?0\d+", value) else int(value, 8)


def _path_part(name: str, args: list[str]) -> str | None:
    """``basename PATH [SUFFIX]`` and ``dirname PATH`` (one path)."""
    path = args[0]
    if len(args) > (2 if name == "basename" else 1):
        return None
    if path.rstrip("/").rpartition("/")[2] in (".", ".."):
        return None  # (`$PWD` is read as `.`: the folder it names is not known)
    stripped = path.rstrip("/") or path[:1]
    if name == "dirname":
        head = stripped.rpartition("/")[0].rstrip("/")
        return head or ("/" if stripped.startswith("/") else ".")
    base = stripped.rpartition("/")[2] or stripped
    suffix = args[1] if len(args) == 2 else ""
    return base[: -len(suffix)] if suffix and base.endswith(suffix) and base != suffix else base


_PRINTF_ESCAPE: Final = re.compile(
    r"\\(?:x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|0?[0-7]{1,3}|.)"
)
_PRINTF_CHARS: Final = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def _printf_escape(match: re.Match[str]) -> str:
    """One backslash escape of a ``printf`` template (``\\n``, ``\\t``, ``\\x41``, ``\\101``,
    ``\\u002e`` …)."""
    body = match.group()[1:]
    if body[0] in "xuU" and len(body) > 1:
        try:
            return chr(int(body[1:], 16))
        except (ValueError, OverflowError):
            return ""
    if body[0] in "01234567":
        return chr(int(body, 8) & 0xFF)
    return _PRINTF_CHARS.get(body, body)


__all__ = ["echo_output", "printed_text"]
