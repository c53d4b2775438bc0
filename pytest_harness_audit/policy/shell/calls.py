"""A call of a function the script defined, read with its arguments.

The body of ``f(){ …; }`` is read where it is defined, with ``$1`` … not known. A call is read
too: its operands are files it may read, as an unknown program's are, whatever name the
function has (``echo(){ command cat "$@"; }; echo .env``), and its body is read again with the
call's arguments as ``$1`` … (``f(){ cat "$1$2"; }; f .e nv``), a bounded number of times.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

from pytest_harness_audit.policy.shell.builtins import positional, restore
from pytest_harness_audit.policy.shell.context import Record
from pytest_harness_audit.policy.shell.expand import Expander
from pytest_harness_audit.policy.shell.nodes import MAX_DEPTH, Budget, Command
from pytest_harness_audit.policy.shell.tools import reads

Reading = TypeVar("Reading", bound=Record)
_FOUND: Final = ("reads", "writes", "deletes", "destroys", "notes", "code")
#: Most calls of the script's functions whose bodies are read again with their arguments.
MAX_CALLS: Final = 16


def call(
    body: list[Command],
    argv: list[str],
    reading: Reading,
    expander: Expander,
    depth: int,
    budget: Budget,
    read: Callable[[Command, Reading, Expander, Budget, int], None],
) -> None:
    """Read the call ``argv`` of a function whose body is ``body`` (``read``: how one simple
    command is read)."""
    reads(argv[1:], reading)
    if expander.calls >= MAX_CALLS or depth >= MAX_DEPTH or id(body) in expander.calling:
        return  # (a function calling itself: its body is being read already)
    expander.calls += 1
    expander.calling.add(id(body))
    before = positional(expander, argv)
    counts = {name: len(getattr(reading, name)) for name in _FOUND}
    try:
        for each in body:
            read(each, reading, expander, budget, depth + 1)
    finally:
        expander.calling.discard(id(body))
        restore(expander, before)
        for name, count in counts.items():  # what the body's first reading found, once
            found: list[str] = getattr(reading, name)
            seen = set(found[:count])
            found[count:] = [v for v in dict.fromkeys(found[count:]) if v not in seen]


__all__ = ["MAX_CALLS", "call"]
