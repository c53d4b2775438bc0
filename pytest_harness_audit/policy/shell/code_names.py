"""Program text with its variables of literal values written in as those literals.

``a='.e'; b='nv'; open(a+b)`` (Python, Ruby), ``const a=".e", b="nv"; readFileSync(a+b)``
(Node), ``$a=".e"; $b="nv"; open F, $a.$b`` (Perl, PHP): the path is built from variables, so no
literal of the text names it. Each variable given one literal (``name = '…'`` ending its
statement, ``my``/``const``/``let``/``var``/``local`` allowed) is written in as that literal
wherever the code (outside its string literals) uses it, and the joins of literals
(:func:`.code._folded`) then put the path together. A heuristic like the rest of :mod:`.code`:
a variable given a value twice, or any other way, is left as it is.
"""

from __future__ import annotations

import re
from typing import Final

#: ``name = 'literal'`` as a whole statement (or one of a ``const a = …, b = …`` list).
_ASSIGNED: Final = re.compile(
    r"""(?:\b(?:my|our|local|const|let|var)\s+)?(?<![\w$@.])(\$?[A-Za-z_]\w*)\s*=(?![=~>])\s*"""
    r"""(['"])([^'"\\\n$]{1,64})\2(?=\s*(?:$|[;,)\n]))""",
    re.MULTILINE,
)
_ANY_ASSIGNMENT: Final = re.compile(r"(?<![\w$@.])(\$?[A-Za-z_]\w*)\s*(?:[-+.]|\|\|)?=(?![=~>])")
_STRING: Final = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`[^`]*`""")
#: Most variables written in, and most characters of text rewritten.
_MAX_NAMES: Final = 64
_MAX_TEXT: Final = 1 << 16


def with_literal_names(text: str) -> str:
    """``text`` with each variable given exactly one literal written in as that literal where
    it is used (``text`` itself when there is none)."""
    if len(text) > _MAX_TEXT or "=" not in text:
        return text
    values: dict[str, str] = {}
    for match in _ASSIGNED.finditer(text):
        values.setdefault(match.group(1), match.group(3))
        if len(values) > _MAX_NAMES:
            return text
    if not values:
        return text
    assigned_count: dict[str, int] = {}
    for match in _ANY_ASSIGNMENT.finditer(text):
        assigned_count[match.group(1)] = assigned_count.get(match.group(1), 0) + 1
    known = {name: value for name, value in values.items() if assigned_count.get(name) == 1}
    if not known:
        return text
    # a bare name after `.` is an attribute (`obj.a`); a `$name` after `.` is joined (Perl, PHP)
    names = sorted(known, key=len, reverse=True)
    use = re.compile(
        "|".join(
            rf"(?<![\w$@{'' if name.startswith('$') else '.'}])({re.escape(name)})\b(?!\s*=(?!=))"
            for name in names
        )
    )

    def written_in(match: re.Match[str]) -> str:
        value = known[match.group(match.lastindex or 0)]
        return f"'{value}'" if "'" not in value else f'"{value}"'

    parts: list[str] = []
    position = 0
    for string in _STRING.finditer(text):
        parts.append(use.sub(written_in, text[position : string.start()]))
        parts.append(string.group())
        position = string.end()
    parts.append(use.sub(written_in, text[position:]))
    return "".join(parts)
