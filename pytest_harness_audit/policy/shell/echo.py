"""What ``echo`` and ``printf`` print, for the words the reading knows (:mod:`.expand`,
:mod:`.streams`): ``echo`` joins its operands, ``printf`` fills a template of ``%s``
and ``%b`` conversions and backslash escapes; ``basename``/``dirname`` print a part of a path."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator


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


_CONVERSION = re.compile(r"%(.)")


def _filler(values: Iterator[str]) -> Callable[[re.Match[str]], str]:
    """The replacement of each ``%s`` (the next value) and ``%%`` (a percent sign)."""
    return lambda match: "%" if match.group(1) == "%" else next(values)


def _printf_strings(template: str, values: list[str]) -> str | None:
    """``printf TEMPLATE VALUES…`` for a template whose conversions are all ``%s`` (and
    ``%%``): the template is used again while values are left, as ``printf`` does."""
    if any(c not in ("s", "b", "%") for c in _CONVERSION.findall(template)):
        return None  # (`%b`: the value's escapes, which the template's pass below reads)
    count = len(_CONVERSION.findall(template.replace("%%", "")))
    out: list[str] = []
    remaining = list(values)
    while True:
        taken, remaining = remaining[:count], remaining[count:]
        taken += [""] * (count - len(taken))
        rendered = _CONVERSION.sub(_filler(iter(taken)), template)
        out.append(_PRINTF_ESCAPE.sub(_printf_escape, rendered))
        if not remaining or not count or len(out) >= 64:
            return "".join(out)


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


_PRINTF_ESCAPE = re.compile(r"\\(?:x[0-9A-Fa-f]{1,2}|0?[0-7]{1,3}|.)")
_PRINTF_CHARS = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def _printf_escape(match: re.Match[str]) -> str:
    """One backslash escape of a ``printf`` template (``\\n``, ``\\t``, ``\\x41``, ``\\101`` …)."""
    body = match.group()[1:]
    if body[0] == "x":
        return chr(int(body[1:], 16))
    if body[0] in "01234567":
        return chr(int(body, 8) & 0xFF)
    return _PRINTF_CHARS.get(body, body)


__all__ = ["echo_output"]
