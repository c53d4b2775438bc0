"""The directory stack of ``pushd``, ``popd`` and ``dirs``, as bash keeps it.

The stack as ``dirs`` prints it is the working directory (entry 0) and then the saved
directories, the last pushed first. :class:`~.place.Place` keeps the saved ones (``stack``, the
last pushed at the end) and asks :func:`stack_move` what a ``pushd``/``popd``/``dirs`` does:

* ``pushd DIR`` saves the working directory and goes to ``DIR``; ``pushd`` alone swaps the two
  top entries; ``pushd +N``/``-N`` turns the stack so that entry ``N`` (from the left, or from
  the right) is on top, and goes there; ``-n`` saves ``DIR`` (or turns the saved entries)
  without going anywhere.
* ``popd`` drops entry 0 and goes to the next; ``popd +N``/``-N`` drops entry ``N`` (``+0``:
  as ``popd``); ``-n`` drops the first saved entry and stays.
* ``dirs -c`` empties the stack.

Each move that goes somewhere sets ``$OLDPWD`` (the caller does, from the :class:`Move`). A
stack turned by ``-n`` is not modelled: its saved entries become unknown, so a later ``popd``
goes somewhere not known (every directory above is read), never to a wrong known one.
"""

from __future__ import annotations

from typing import Final, NamedTuple

#: A directory of the stack: ``(cwd, unknown, home)`` as :class:`~.place.Place` keeps them.
Spot = tuple[str, bool, str]
#: Somewhere not known.
UNKNOWN_SPOT: Final[Spot] = (".", True, "")


class Move(NamedTuple):
    """What a stack command does: ``go`` (the directory it goes to, ``None``: it stays) and
    ``stack`` (the saved directories after it, the last pushed at the end); ``operand`` is the
    directory ``pushd DIR`` names (for the caller to resolve, go to and save ``here`` on top
    of ``stack``); ``dynamic`` whether it is only known at run time; ``None`` for other moves."""

    go: Spot | None
    stack: list[Spot]
    operand: str | None = None
    dynamic: bool = False
    #: ``pushd -n DIR``: ``DIR`` is saved on top of ``stack``, and the shell stays.
    save_only: bool = False


def _index(word: str, size: int) -> int | None:
    """The entry ``+N``/``-N`` names in a stack of ``size`` entries (``None``: not a number,
    or beyond the stack: bash refuses it and nothing moves)."""
    if not word[1:].isdigit():
        return None
    number = int(word[1:])
    index = number if word[0] == "+" else size - 1 - number
    return index if 0 <= index < size else None


def stack_move(
    name: str, args: list[str], dynamic: list[bool], here: Spot, stack: list[Spot]
) -> Move:
    """The :class:`Move` of ``name`` (``pushd``, ``popd`` or ``dirs``) given ``args`` (its
    words after the name, ``dynamic`` for each) from ``here`` with the saved ``stack``."""
    no_cd = False
    numbered = ""
    operands: list[tuple[str, bool]] = []
    ended = False
    for word, dyn in zip(args, dynamic, strict=False):
        if not ended and word == "--":
            ended = True
        elif not ended and word[:1] in "+-" and len(word) > 1 and word[1:].isdigit():
            numbered = word
        elif not ended and word[:1] == "-" and len(word) > 1:
            no_cd = no_cd or "n" in word
            if name == "dirs" and "c" in word:
                return Move(None, [])
        else:
            operands.append((word, dyn))
    if name == "dirs":
        return Move(None, stack)
    full = [here, *reversed(stack)]  # as `dirs` prints it
    if name == "popd":
        if not stack:  # (bash: "directory stack empty"; a stack the reading did not see)
            return Move(None if no_cd else UNKNOWN_SPOT, stack)
        index = 0 if not numbered else _index(numbered, len(full))
        if index is None:
            return Move(None, stack)
        if no_cd and index == 0:
            index = 1  # `popd -n`: the first saved entry goes
        if index == 0:
            return Move(full[1], stack[:-1])
        del full[index]
        return Move(None, full[:0:-1])
    if operands and not numbered:  # `pushd DIR`, `pushd -n DIR`
        word, dyn = operands[0]
        return Move(None, list(stack) if no_cd else [*stack, here], word, dyn, no_cd)
    if not numbered:  # `pushd` alone: the two top entries swap
        if not stack:
            return Move(None if no_cd else UNKNOWN_SPOT, stack)
        if no_cd:
            return Move(None, [UNKNOWN_SPOT for _ in stack])
        return Move(full[1], [*stack[:-1], here])
    index = _index(numbered, len(full))
    if index is None:
        return Move(None, stack)
    if no_cd:
        return Move(None, [UNKNOWN_SPOT for _ in stack])
    turned = full[index:] + full[:index]
    return Move(turned[0], turned[:0:-1])


__all__ = ["UNKNOWN_SPOT", "Move", "Spot", "stack_move"]
