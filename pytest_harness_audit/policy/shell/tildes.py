"""The tilde prefixes of the working directories: ``~+`` is ``$PWD``, ``~-`` is ``$OLDPWD``,
``~N``/``~+N``/``~-N`` an entry of the directory stack, ``~`` the ``$HOME`` a script set.

Bash expands them at the start of a word (followed by ``/`` or nothing, unquoted) before any
other expansion, as the variables' values (not split, not globbed): ``cd .. && rm -rf ~+/*``
deletes what is beside the workspace, ``cd ..; cd /srv; rm -rf ~-/*`` the same. The word is
read as if ``"$PWD"``/``"$OLDPWD"`` stood there, so the reading's place gives them their values
(``$PWD`` is where the script is, ``$OLDPWD`` where the last move left, or not known). When
the last move left a folder reached by ``~``, a path from ``$OLDPWD`` is also read from the
user's home (:func:`home_fields`), as a relative path is after ``cd ~`` (:mod:`.place`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pytest_harness_audit.policy.shell.fieldtext import Field
from pytest_harness_audit.policy.shell.nodes import Lit, Param, Word
from pytest_harness_audit.policy.shell.place import Place

_NAMES = {"+": "PWD", "-": "OLDPWD"}
#: ``~N``, ``~+N``, ``~-N``: an entry of the directory stack (``dirs +N``, ``dirs -N``).
_ENTRY = re.compile(r"~([+-]?)(\d{1,4})")


def tilde_word(word: Word, variables: Mapping[str, str]) -> Word:
    """``word`` with a leading ``~+``/``~-`` as the variable it names, ``~N``/``~+N``/``~-N``
    as ``${DIRSTACK[…]}`` and ``~`` as ``$HOME`` when the script set it (``variables``; else
    ``~`` stays: :mod:`.place`), or ``word`` itself."""
    first = word[0] if word else None
    if not isinstance(first, Lit) or first.quoted or first.text[:1] != "~":
        return word
    text = first.text
    prefix, slash, rest = text.partition("/")
    if len(word) > 1 and not slash:
        return word  # (`~+"/x"`: a quoted part in the prefix, no expansion)
    tail = [Lit(slash + rest, False)] if slash else []
    name = _NAMES.get(prefix[1:]) if len(prefix) == 2 else None
    if name is not None:
        return [Param(name, True), *tail, *word[1:]]
    if prefix == "~":
        return [Param("HOME", True), *tail, *word[1:]] if "HOME" in variables else word
    entry = _ENTRY.fullmatch(prefix)
    if entry is None:
        return word  # `~user`: a user's home
    index = int(entry[2]) if entry[1] != "-" else -int(entry[2]) - 1
    return [Param("DIRSTACK", True, opaque=True, op=f"[{index}]"), *tail, *word[1:]]


def home_fields(fields: list[Field], place: Place, root: str | None) -> list[Field]:
    """The forms from the user's home of ``fields`` that start at ``$OLDPWD`` when the script
    went there by ``~`` (:meth:`Place.home_forms`), as more fields (one reading too many)."""
    if not place.previous_home:
        return []
    texts = [field.text for field in fields]
    return [Field(form, True) for form in place.home_forms(texts, root)]


__all__ = ["home_fields", "tilde_word"]
