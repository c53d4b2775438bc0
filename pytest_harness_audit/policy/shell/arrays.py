"""Arrays as bash builds them: assignments, subscripts, declarations and keys.

* ``a=([0]=.env [k]=x)``: each element without its subscript; the subscripts are the array's
  keys (``${!a[@]}``), kept after :data:`~.nodes.KEY_MARK` in the assignment's word.
* ``a[k]=.env``: the element after those ``a`` held, ``k`` one more key.
* ``declare -a a='(.env)'``, ``declare "a=.env"``: :mod:`.declarations`.
* ``${a[0]-word}``, ``${a[@]:-word}``, ``${a[1]=word}`` and ``${a-word}`` of an array (its
  element 0): the word when the element is unset, whatever the others hold (``a=()``,
  ``a=(x)`` for ``${a[1]-…}``, ``a[1]=x`` for ``${a-…}``).
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
#: ``[k]`` followed by a default, assignment, error or alternative operator.
_ELEMENT_OPERATOR: Final = re.compile(r"(\[[^\]]*\])(:?[-=?+])")


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


def element_operator(op: str) -> tuple[str, str, int] | None:
    """``[k]-word`` (the text after ``${NAME`` of ``${NAME[k]-word}``): the subscript, the
    operator (``-``, ``:-``, ``=``, ``:=``, ``?``, ``:?``, ``+``, ``:+``) and where the word
    starts; ``None`` for any other operator."""
    match = _ELEMENT_OPERATOR.match(op)
    return None if match is None else (match[1], match[2], match.end())


def unset_element(
    part: Param,
    value: str,
    variables: dict[str, str],
    lists: dict[str, list[str]],
    keys: dict[str, list[str]],
) -> bool | None:
    """Whether ``${NAME[k]-word}`` (``${NAME-word}``: element 0 of an array) gives its word:
    ``True`` when the element is unset or empty, ``False`` when it holds ``value``, ``None``
    when that is not known."""
    items = lists.get(part.name)
    if not value or (part.op is None and items is None):
        return not value
    sub = (part.op or "[0]")[1:-1].strip()
    if items is None:  # a scalar: its element 0
        if sub in ("0", "@", "*"):
            return False
        return True if sub.isdigit() else None
    if sub in ("@", "*"):
        return not items
    known = keys.get(part.name)
    if known is None or len(known) != len(items):
        return int(sub) >= len(items) if sub.isdigit() else None
    if sub.isdigit():
        return str(int(sub)) not in known
    if "$" in sub or "`" in sub or all(key.isdigit() for key in known):
        return None  # an index computed at run time
    return sub not in known


__all__ = [
    "ASSIGNMENT",
    "assignment",
    "element_operator",
    "keyed",
    "subscripted",
    "unset_element",
]
