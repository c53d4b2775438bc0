"""What a command that may not run, or runs in a subshell, sets: one value more, not another.

``x=.env; (x=a); cat $x``, ``x=.env; false && x=a; cat $x``, ``echo a | read x``, ``x=a &``,
``if …; then x=a; fi``, ``$(x=a)``, a function's body: the value before may still hold after
such a command, so each variable it changed holds both values (a list of words, one reading
too many, as a loop variable does); one it made unknown keeps the value before. ``IFS`` is not
merged (a list of separators is none of them): it takes the command's value, as before.

A variable made read-only (``readonly x``, ``declare -r x=.env``) keeps its value: ``read``,
``printf -v``, ``declare``, ``mapfile``, ``let``, ``export`` and ``unset`` fail on it and the
script goes on (``readonly x=.env; read x <<< a; cat $x`` reads ``.env``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final, Protocol, TypeVar

from pytest_harness_audit.policy.shell.nodes import Command, plain_text

#: Most words a variable merged so holds.
_MAX_WORDS: Final = 256
_NOT_MERGED: Final = frozenset({"IFS"})


class _Values(Protocol):
    variables: dict[str, str]
    lists: dict[str, list[str]]
    readonly: set[str]


_Read = TypeVar("_Read", bound=Callable[..., None])


def unsure(read: _Read) -> _Read:
    """``read(command, reading, expander, …)``, with what a ``maybe`` command (or one in a
    substitution) sets added to the values before it rather than replacing them."""

    @functools.wraps(read)
    def reading(command: Command, reading: object, expander: _Values, *rest: object) -> None:
        maybe = command.maybe or command.in_substitution
        fixed = set(expander.readonly)
        if not (maybe or fixed):
            read(command, reading, expander, *rest)
            if command.words and plain_text(command.words[0]) in _READONLY_MAKERS:
                expander.readonly |= _made_readonly(command)
            return
        variables, lists = dict(expander.variables), dict(expander.lists)
        read(command, reading, expander, *rest)
        if maybe and (variables != expander.variables or lists != expander.lists):
            merge(expander, variables, lists)
        for name in fixed:  # `readonly x`: what the command set failed
            restore(expander, name, variables.get(name), lists.get(name))
        if not maybe and command.words and plain_text(command.words[0]) in _READONLY_MAKERS:
            expander.readonly |= _made_readonly(command)

    return reading  # type: ignore[return-value]


_READONLY_MAKERS: Final = frozenset({"readonly", "declare", "typeset", "local"})


def _made_readonly(command: Command) -> set[str]:
    """The names ``readonly NAME…`` (``declare -r``, ``typeset -r``, ``local -r``) makes
    read-only."""
    words = [plain_text(word) for word in command.words]
    options = [w for w in words[1:] if w[:1] in ("-", "+")]
    if words[0] != "readonly" and not any(o[:1] == "-" and "r" in o for o in options):
        return set()
    if any(o[:1] == "-" and "f" in o for o in options):
        return set()  # (functions)
    names = {w.partition("=")[0].partition("[")[0] for w in words[1:] if w[:1] not in "-+"}
    return {name for name in names if name.isidentifier()}


def restore(expander: _Values, name: str, value: str | None, words: list[str] | None) -> None:
    """Give ``name`` its ``value`` again (``None``: not known), as a list of ``words`` if so."""
    if value is None:
        expander.variables.pop(name, None)
    else:
        expander.variables[name] = value
    if words is None:
        expander.lists.pop(name, None)
    else:
        expander.lists[name] = words


def merge(expander: _Values, variables: dict[str, str], lists: dict[str, list[str]]) -> None:
    """Give each variable known in ``variables`` (``lists``: as lists) before a command that may
    not have set it the values before and after the command."""
    for name, old in variables.items():
        new = expander.variables.get(name)
        if name in _NOT_MERGED or (new == old and expander.lists.get(name) == lists.get(name)):
            continue
        before = lists.get(name, [old])
        if new is None:  # made unknown: the value before may hold
            expander.variables[name] = old
            expander.lists.update({name: before} if name in lists else {})
            continue
        words = list(dict.fromkeys([*before, *expander.lists.get(name, [new])]))[:_MAX_WORDS]
        expander.lists[name] = words
        expander.variables[name] = " ".join(words)


__all__ = ["merge", "restore", "unsure"]
