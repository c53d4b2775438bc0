"""Command substitutions that bash runs from inside a *value*, when it evaluates the value as an
arithmetic expression or an array name, or expands it as a prompt.

``test -v 'a[$(cat .env)]'``, ``[[ -v … ]]``, ``printf -v 'a[$(…)]'``, ``read 'a[$(…)]'``,
``let 'a[$(…)]=1'``, ``declare -n r='a[$(…)]'`` and ``x='a[$(…)]'; (( x ))`` (or
``$((x))``, ``[[ $x -eq 0 ]]``, ``declare -i y=x``): the substitution is quoted, so no expansion
runs it, yet bash expands an array subscript again when it evaluates it, and runs it. A value
holding a subscript with a substitution in it (an argument, an assigned value, a here-string)
gives the text of each substitution, read as a script by the caller: harmless code stays
harmless, and text that is no script is left alone.

A prompt is expanded too: ``x='$(cat .env)'; echo "${x@P}"`` runs the substitution the quotes
kept, as do bash's prompt variables (``PS4='$(cat .env >&2)'; set -x``, ``PS0``–``PS2`` in an
interactive shell): every substitution of such a value is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.nodes import Unreadable, prompt_text

#: An opening ``[`` and, before its ``]``, the start of a substitution.
_OPENING: Final = re.compile(r"\[[^\]]*?(\$\(|`)")
#: The start of any substitution (in a prompt).
_ANY_OPENING = re.compile(r"(\$\(|`)")
#: Variables bash expands as prompts.
PROMPT_VARIABLES = frozenset({"PS0", "PS1", "PS2", "PS4"})
_MAX_TEXT: Final = 16384
_MAX_BODIES: Final = 16


class _Prompts(Protocol):
    variables: dict[str, str]
    prompts: dict[str, bool]


def subscript_code(texts: Iterable[str], prompt: bool = False) -> Iterator[str]:
    """The bodies of the substitutions inside subscripts of ``texts`` (``prompt``: anywhere in
    them; at most :data:`_MAX_BODIES` of them)."""
    found = 0
    opening = _ANY_OPENING if prompt else _OPENING
    for text in texts:
        if prompt:  # `p='\\044(cat .env)'`: bash decodes the escapes, then expands the text
            text = prompt_text(text)[0]
        if ("$(" not in text and "`" not in text) or len(text) > _MAX_TEXT:
            continue
        if not prompt and "[" not in text:
            continue
        for match in opening.finditer(text):
            body = _body(text, match.end(), match.group(1))
            if body is None or not body.strip():
                continue
            yield body
            found += 1
            if found >= _MAX_BODIES:
                return


def read_subscript_code(
    texts: Iterable[str], read: Callable[..., None], depth: int, budget: object, expander: _Prompts
) -> None:
    """Give each body :func:`subscript_code` finds in ``texts`` (and in the values the command
    expanded as prompts) to ``read`` (with ``depth``, ``budget`` and ``expander``:
    ``Reading.script``); a body that is no script (it does not parse) is left alone, as the
    text around it is."""
    bodies = list(subscript_code(texts))
    prompts, variables = expander.prompts, expander.variables
    for name in PROMPT_VARIABLES:  # however the script set it (`read PS4 <<< …; set -x`)
        if (value := variables.get(name)) is not None:
            prompts.setdefault(value, False)
    if prompts:
        new = [value for value, done in prompts.items() if not done]
        bodies += subscript_code(new, prompt=True)
        prompts.update(dict.fromkeys(new, True))
    for body in bodies:
        try:
            read(body, depth, budget, expander)
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


__all__ = ["PROMPT_VARIABLES", "read_subscript_code", "subscript_code"]
