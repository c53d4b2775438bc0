"""What ``declare``/``typeset``/``local``/``readonly``/``export`` assign, and an assignment
recorded (the keys of an array too: :mod:`.arrays`).

``declare -a a='(.env)'`` (``-A``; ``"a=(.env)"``; a value from a variable; an ``a`` already an
array with no flag): bash reads a value in parentheses as a compound assignment, expansions
inside it included (``'($(cat .env))'`` runs ``cat``). Such a value is read again as the script
``a=(…)``, as :func:`declaration` gives it. ``declare "a=.env"``: a quoted word is an assignment
all the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.arrays import ASSIGNMENT, assignment, keyed
from pytest_harness_audit.policy.shell.loops import elements
from pytest_harness_audit.policy.shell.native_loaders import NATIVE_ENV
from pytest_harness_audit.policy.shell.nodes import LIST_MARK, Lit, Param, Word
from pytest_harness_audit.policy.shell.place import Place
from pytest_harness_audit.policy.shell.searchpath import kept_text

#: Most keys kept for one array.
_MAX_KEYS: Final = 256


class _Field(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def dynamic(self) -> bool: ...


class Assigning(Protocol):
    """What an assignment needs of the expander (:class:`~.expand.Expander`)."""

    variables: dict[str, str]
    lists: dict[str, list[str]]
    keys: dict[str, list[str]]
    refs: dict[str, str]
    built: set[str]
    path_lists: dict[str, str]
    search_base: str
    dotglob: bool
    place: Place

    def chars_of(self, word: Word, out: list[tuple[str, int]]) -> bool:
        """Append the characters of ``word``; whether any is dynamic."""

    def expand(self, word: Word) -> Sequence[_Field]:
        """The fields of ``word``."""

    def assign(self, name: str, word: Word) -> None:
        """Record ``NAME=word``."""


_PATH_LISTS: Final = frozenset({"PATH", "PYTHONPATH", "NODE_PATH"})


def assign(expander: Assigning, name: str, word: Word) -> None:
    """Record ``NAME=word`` in ``expander`` (:meth:`~.expand.Assigning.assign`)."""
    if expander.refs and expander.refs.get(name):  # `declare -n r=x; r=.env`: sets `x`
        name = expander.refs[name]
    word, keys = keyed(word)
    if keys is not None or expander.keys:
        remember_keys(expander, name, word, keys)
    chars: list[tuple[str, int]] = []
    if name == "GLOBIGNORE":
        expander.dotglob = bool(word)  # bash: a GLOBIGNORE set lets `*` match dotfiles
    elif name.startswith("DIRSTACK"):
        expander.place.forget_stack()  # `DIRSTACK[1]=..`: a later `popd` goes there
    dynamic = expander.chars_of(word, chars)
    if name in _PATH_LISTS:
        expander.path_lists[name] = "".join(char for char, _ in chars)
        if name == "PATH":
            expander.search_base = expander.place.here or ""
    if dynamic:
        expander.variables.pop(name, None)
        expander.built.add(name)
        return
    expander.built.discard(name)
    items = elements(chars) if any(part is LIST_MARK for part in word) else None
    expander.variables[name] = "".join(c for c, _ in chars) if items is None else " ".join(items)
    expander.lists.pop(name, None)
    expander.lists.update({} if items is None else {name: items})


def assign_default(
    expander: Assigning, name: str, chars: list[tuple[str, int]], unknown: bool
) -> None:
    """``${name:=word}`` used with ``name`` empty: ``name`` holds the word's text from now on."""
    if unknown:
        expander.variables.pop(name, None)
    else:
        expander.variables[name] = "".join(char for char, _ in chars)
        expander.lists.pop(name, None)


def remember_keys(expander: Assigning, name: str, word: Word, keys: Word | None) -> None:
    """Record the keys ``${!name[@]}`` gives (an appended value keeps those before)."""
    appended = bool(word) and isinstance(word[0], Param) and word[0].name == name
    before = expander.keys.get(name, []) if appended else []
    if keys is None:
        if not appended:
            expander.keys.pop(name, None)
        return
    chars: list[tuple[str, int]] = []
    if expander.chars_of(keys, chars):
        expander.keys.pop(name, None)  # a key not known: none is
        return
    expander.keys[name] = (before + elements(chars))[:_MAX_KEYS]


#: Flags of a declaration that make its variables arrays.
_ARRAY_FLAGS: Final = re.compile(r"[-+][a-zA-Z]*[aA]")


def declaration(
    argv: list[str], words: list[Word], expander: Assigning
) -> tuple[dict[str, str | None], list[str]]:
    """Record what ``declare``/``typeset``/``local``/``readonly``/``export`` (``argv[0]``, its
    words ``words``) assign: the variables it exports (name: value, ``None`` when not known),
    and the compound values to read as the scripts ``NAME=(…)`` (module doc)."""
    exported: dict[str, str | None] = {}
    compounds: list[str] = []
    exports = argv[0] == "export" or any(a[:1] == "-" and "x" in a for a in argv[1:])
    arrays = argv[0] != "export" and any(_ARRAY_FLAGS.match(a) for a in argv[1:])
    for word in words:
        found = assignment(word) or _quoted_assignment(word, expander)
        if found is not None:
            name, value = found
            name = expander.refs.get(name) or name  # `declare -n r=x; declare -a r=…`
            held, items = expander.variables.get(name), expander.lists.get(name)
            text = None  # `export LD_PRELOAD=./x.so:$LD_PRELOAD`: its known entries count
            if exports and name in NATIVE_ENV:
                kept = kept_text(name, value, expander.variables)
                text = " ".join(f.text for f in expander.expand(kept))
            expander.assign(name, value)
            if (
                (arrays or items is not None)
                and argv[0] != "export"
                and name not in expander.lists
                and name in expander.variables
                and (own := _own_value(word, expander)) is not None
            ):  # read again as `NAME=(…)`, from what the variable held before
                _restore(expander, name, held, items)
                compounds.append(f"{name}{'+' if own[0] else ''}={own[1]}")
            if exports:
                exported[name] = expander.variables.get(name, text)
        elif exports and len(word) == 1 and isinstance(word[0], Lit):
            name = word[0].text  # `GIT_DIR=x; export GIT_DIR`: the value set before
            if name in expander.variables or name in expander.path_lists:
                exported[name] = expander.variables.get(name)
    return exported, compounds


def _restore(expander: Assigning, name: str, held: str | None, items: list[str] | None) -> None:
    """Put back the value and list ``name`` held."""
    expander.variables.pop(name, None)
    expander.lists.pop(name, None)
    if held is not None:
        expander.variables[name] = held
    if items is not None:
        expander.lists[name] = items


def _quoted_assignment(word: Word, expander: Assigning) -> tuple[str, Word] | None:
    """``declare "a=.env"``, ``declare 'a=(x y)'``: a word whose name is quoted, as the
    assignment it is once expanded (one known field)."""
    if not word or not any(isinstance(part, Lit) and part.quoted for part in word):
        return None
    fields = expander.expand(word)
    if len(fields) != 1 or fields[0].dynamic:
        return None
    match = ASSIGNMENT.match(fields[0].text)
    if match is None:
        return None
    text = fields[0].text
    return assignment([Lit(text[: match.end()], False), Lit(text[match.end() :], True)])


def _own_value(word: Word, expander: Assigning) -> tuple[bool, str] | None:
    """Whether ``word`` appends (``+=``), and the value it gives when that is ``(…)``."""
    first = word[0] if word and isinstance(word[0], Lit) else None
    text = first.text if first is not None and not first.quoted else ""
    match = ASSIGNMENT.match(text)
    if match is not None:
        rest: Word = [Lit(text[match.end() :], False), *word[1:]]
    else:
        fields = expander.expand(word)
        if len(fields) != 1 or fields[0].dynamic:
            return None
        match = ASSIGNMENT.match(fields[0].text)
        if match is None:
            return None
        rest = [Lit(fields[0].text[match.end() :], True)]
    if match.group(2):
        return None  # `declare a[0]='(x)'`: an element, set as written
    chars: list[tuple[str, int]] = []
    if expander.chars_of(rest, chars):
        return None
    value = "".join(char for char, _ in chars)
    if len(value) < 2 or value[0] != "(" or value[-1] != ")":
        return None
    return bool(match.group(3)), value


__all__ = ["Assigning", "assign", "assign_default", "declaration", "remember_keys"]
