"""What ``echo`` and ``printf`` print, for the words the reading knows (:mod:`.expand`,
:mod:`.streams`): ``echo`` joins its operands, ``printf`` fills a template of ``%s``
conversions and backslash escapes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator


def echo_output(argv: list[str]) -> str | None:
    """What ``echo``/``printf '%s…'`` prints for ``argv``, without the final newline."""
    name = argv[0].rsplit("/", 1)[-1] if argv else ""
    args = argv[1:]
    if name == "echo":
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            args = args[1:]
        return " ".join(args)
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
    if any(c not in ("s", "%") for c in _CONVERSION.findall(template)):
        return None
    count = template.replace("%%", "").count("%s")
    out: list[str] = []
    remaining = list(values)
    while True:
        taken, remaining = remaining[:count], remaining[count:]
        taken += [""] * (count - len(taken))
        rendered = _CONVERSION.sub(_filler(iter(taken)), template)
        out.append(_PRINTF_ESCAPE.sub(_printf_escape, rendered))
        if not remaining or not count or len(out) >= 64:
            return "".join(out)


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
