"""Arrays as bash builds them: assignments, subscripts, declarations and keys.

* ``a=([0]=.env [k]=x)``: each element without its subscript; the subscripts are the array's
  keys (``${!a[@]}``), kept after :data:`~.nodes.KEY_MARK` in the assignment's word.
* ``a[k]=.env``: the element after those ``a`` held, ``k`` one more key.
* ``declare -a a='(.env)'``, ``declare "a=.env"``: :mod:`.declarations`.
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.shell.nodes import (
    KEY_MARK,
    LIST_MARK,
    Lit,
    Param,
    Word,
)

#: ``NAME=``, ``NAME+=``, ``NAME[k]=`` at the start of a word.
ASSIGNMENT: Final = re.compile(r"([A-Za-z_]\w*)(\[[^\]]*\])?(\+?)=")
_SUBSCRIPT_END: Final = re.compile(r"\]\+?=")


def assignment(word: Word) -> tuple[str, Word] | None:
    """``NAME=value`` (``NAME+=``, ``NAME[k]=``): the name and the word of its new value (an
    appended value or element after what the variable held), else ``None``."""
    first = word[0] if word else None
    if not isinstance(first, Lit) or first.quoted:
        return None
    match = ASSIGNMENT.match(first.text)
    if match is None:
        return None
    name, element, plus = match.groups()
    rest = first.text[match.end() :]
    before: Word = []
    if plus or element:  # `f+=nv`, `a+=(x)`, `a[1]=nv`: after what it held (nothing, if unset)
        before = [Param(name, False, default=[])]
        if element or any(part is LIST_MARK for part in word):
            before += [Lit(" ", False), LIST_MARK]
    value = before + ([Lit(rest, False)] if rest else []) + word[1:]
    if element and "$" not in element and "`" not in element:
        value += [KEY_MARK, Lit(element[1:-1], True)]  # `a[k]=x`: `k` is one more key
    return name, value


def subscripted(items: list[Word]) -> tuple[list[Word], list[Word]]:
    """The elements of ``a=(…)`` without their ``[KEY]=``/``[KEY]+=``, and those keys."""
    values: list[Word] = []
    keys: list[Word] = []
    for item in items:
        first = item[0] if item else None
        if not isinstance(first, Lit) or first.quoted or first.text[:1] != "[":
            values.append(item)
            continue
        for at, part in enumerate(item):
            if not isinstance(part, Lit) or part.quoted:
                continue
            found = _SUBSCRIPT_END.search(part.text, 0 if at else 1)
            if found is None:
                continue
            end = part.text[: found.start()]
            if at:  # `[$k]=x`: the key's parts up to `]`
                keys.append([Lit(first.text[1:], True), *item[1:at], Lit(end, True)])
            else:
                keys.append([Lit(end[1:], True)])
            rest = part.text[found.end() :]
            values.append([*([Lit(rest, False)] if rest else []), *item[at + 1 :]])
            break
        else:
            values.append(item)
    return values, keys


def keyed(word: Word) -> tuple[Word, Word | None]:
    """An assignment's word split at :data:`~.nodes.KEY_MARK`: its value and its keys."""
    for at, part in enumerate(word):
        if part is KEY_MARK:
            return word[:at], word[at + 1 :]
    return word, None


__all__ = ["ASSIGNMENT", "assignment", "keyed", "subscripted"]
