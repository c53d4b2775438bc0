"""What a command that may not run, or runs in a subshell, sets: one value more, not another.

``x=.env; (x=a); cat $x``, ``x=.env; false && x=a; cat $x``, ``echo a | read x``, ``x=a &``,
``if …; then x=a; fi``, ``$(x=a)``, a function's body: the value before may still hold after
such a command, so each variable it changed holds both values (a list of words, one reading
too many, as a loop variable does); one it made unknown keeps the value before. ``IFS`` is not
merged (a list of separators is none of them): it takes the command's value, as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final, Protocol, TypeVar

from pytest_harness_audit.policy.shell.nodes import Command

#: Most words a variable merged so holds.
_MAX_WORDS: Final = 256
_NOT_MERGED: Final = frozenset({"IFS"})


class _Values(Protocol):
    variables: dict[str, str]
    lists: dict[str, list[str]]


_Read = TypeVar("_Read", bound=Callable[..., None])


def unsure(read: _Read) -> _Read:
    """``read(command, reading, expander, …)``, with what a ``maybe`` command (or one in a
    substitution) sets added to the values before it rather than replacing them."""

    @functools.wraps(read)
    def reading(command: Command, reading: object, expander: _Values, *rest: object) -> None:
        if not (command.maybe or command.in_substitution):
            read(command, reading, expander, *rest)
            return
        variables, lists = dict(expander.variables), dict(expander.lists)
        read(command, reading, expander, *rest)
        if variables != expander.variables or lists != expander.lists:
            merge(expander, variables, lists)

    return reading  # type: ignore[return-value]


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


__all__ = ["merge", "unsure"]
