"""The tilde prefixes of the working directories: ``~+`` is ``$PWD``, ``~-`` is ``$OLDPWD``.

Bash expands them at the start of a word (followed by ``/`` or nothing, unquoted) before any
other expansion, as the variables' values (not split, not globbed): ``cd .. && rm -rf ~+/*``
deletes what is beside the workspace, ``cd ..; cd /srv; rm -rf ~-/*`` the same. The word is
read as if ``"$PWD"``/``"$OLDPWD"`` stood there, so the reading's place gives them their values
(``$PWD`` is where the script is, ``$OLDPWD`` where the last move left, or not known). When
the last move left a folder reached by ``~``, a path from ``$OLDPWD`` is also read from the
user's home (:func:`home_fields`), as a relative path is after ``cd ~`` (:mod:`.place`).
"""

from __future__ import annotations

from pytest_harness_audit.policy.shell.fieldtext import Field
from pytest_harness_audit.policy.shell.nodes import Lit, Param, Word
from pytest_harness_audit.policy.shell.place import Place

_NAMES = {"+": "PWD", "-": "OLDPWD"}


def tilde_word(word: Word) -> Word:
    """``word`` with a leading ``~+``/``~-`` as the variable it names (else ``word`` itself)."""
    first = word[0] if word else None
    if not isinstance(first, Lit) or first.quoted:
        return word
    text = first.text
    name = _NAMES.get(text[1:2]) if text[:1] == "~" else None
    if name is None or text[2:3] not in ("", "/") or (len(text) == 2 and len(word) > 1):
        return word  # (`~+x`, `~+"/x"`: a user's name, or a quoted prefix: no expansion)
    rest = [Lit(text[2:], False)] if len(text) > 2 else []
    return [Param(name, True), *rest, *word[1:]]


def home_fields(fields: list[Field], place: Place, root: str | None) -> list[Field]:
    """The forms from the user's home of ``fields`` that start at ``$OLDPWD`` when the script
    went there by ``~`` (:meth:`Place.home_forms`), as more fields (one reading too many)."""
    if not place.previous_home:
        return []
    texts = [field.text for field in fields]
    return [Field(form, True) for form in place.home_forms(texts, root)]


__all__ = ["home_fields", "tilde_word"]
