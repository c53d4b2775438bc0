"""Field splitting: the characters that came from unquoted expansions are split at the
characters of ``IFS`` (a blank, a tab or a newline unless the script set it)."""

from __future__ import annotations

from typing import Final

from pytest_harness_audit.policy.shell.braces import Chars

#: The field separators when a script has not set ``IFS``.
IFS: Final = " \t\n"
#: The flag of a character that field splitting applies to (:mod:`.expand`).
SPLIT: Final = 2


def split_fields(chars: Chars, ifs: str = IFS) -> list[Chars]:
    """Field splitting of the characters that came from unquoted expansions (on ``ifs``, the
    value of ``IFS`` when a script set it)."""
    if not any(flags & SPLIT for _, flags in chars):
        return [chars]
    fields: list[Chars] = []
    current: Chars = []
    started = False
    for char, flags in chars:
        if flags & SPLIT and char in ifs:
            if current or started:
                fields.append(current)
            current, started = [], False
            continue
        current.append((char, flags))
        started = True
    if current:
        fields.append(current)
    return fields


__all__ = ["IFS", "SPLIT", "split_fields"]
