"""Command substitutions that bash runs from inside a *value*, when it evaluates the value as an
arithmetic expression or an array name.

``test -v 'a[$(cat .env)]'``, ``[[ -v … ]]``, ``printf -v 'a[$(…)]'``, ``read 'a[$(…)]'``,
``let 'a[$(…)]=1'``, ``declare -n r='a[$(…)]'`` and ``x='a[$(…)]'; (( x ))`` (or
``$((x))``, ``[[ $x -eq 0 ]]``, ``declare -i y=x``): the substitution is quoted, so no expansion
runs it, yet bash expands an array subscript again when it evaluates it, and runs it. A value
holding a subscript with a substitution in it (an argument, an assigned value, a here-string)
gives the text of each substitution, read as a script by the caller: harmless code stays
harmless, and text that is no script is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from pytest_harness_audit.policy.shell.nodes import Unreadable

#: An opening ``[`` and, before its ``]``, the start of a substitution.
_OPENING: Final = re.compile(r"\[[^\]]*?(\$\(|`)")
_MAX_TEXT: Final = 16384
_MAX_BODIES: Final = 16


def subscript_code(texts: Iterable[str]) -> Iterator[str]:
    """The bodies of the substitutions inside subscripts of ``texts`` (at most
    :data:`_MAX_BODIES` of them)."""
    found = 0
    for text in texts:
        if "[" not in text or ("$(" not in text and "`" not in text) or len(text) > _MAX_TEXT:
            continue
        for match in _OPENING.finditer(text):
            body = _body(text, match.end(), match.group(1))
            if body is None or not body.strip():
                continue
            yield body
            found += 1
            if found >= _MAX_BODIES:
                return


def read_subscript_code(
    texts: Iterable[str], read: Callable[..., None], depth: int, *state: object
) -> None:
    """Give each body :func:`subscript_code` finds in ``texts`` to ``read`` (with ``depth``
    and ``state``: ``Reading.script``); a body that is no script (it does not parse) is left
    alone, as the text around it is."""
    for body in subscript_code(texts):
        try:
            read(body, depth, *state)
        except Unreadable:
            continue


def _body(text: str, start: int, opener: str) -> str | None:
    """The text of the substitution opened by ``opener`` just before ``start`` (``None``: it is
    never closed)."""
    if opener == "`":
        end = text.find("`", start)
        return None if end < 0 else text[start:end]
    depth = 1
    for index in range(start, len(text)):
        char = text[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return text[start:index]
    return None


__all__ = ["read_subscript_code", "subscript_code"]
