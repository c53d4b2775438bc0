"""Names program text builds from string literals by other means than ``+``.

``open(".e" "nv")`` (adjacent literals, joined by Python and C), ``'vne.'[::-1]`` (a literal
reversed), ``''.join(['.e', 'nv'])`` and ``['.e', 'nv'].join('')`` (literals joined by a
literal), ``'.%s' % 'env'``, ``'.%s%s' % ('e', 'nv')`` and ``'.{}'.format('env')`` (a format of
literals): each names ``.env`` though no literal of the text does. A heuristic like the rest of
:mod:`.code`: only literals (of at most 256 characters, no escapes) are followed, in a bounded
number of rounds; anything computed otherwise is not known.
"""

from __future__ import annotations

import re
from typing import Final

_LIT: Final = r"""(?:'[^'\\\n]{0,256}'|"[^"\\\n]{0,256}")"""
_LITS: Final = rf"""{_LIT}(?:\s*,\s*{_LIT}){{0,31}}"""
_EACH: Final = re.compile(_LIT)
#: Two literals side by side (Python's and C's implicit joining): not after a word character,
#: which would make the first the end of a prefixed literal or a call's argument list.
_ADJACENT: Final = re.compile(rf"""({_LIT})[ \t]+({_LIT})""")
_REVERSED: Final = re.compile(rf"""({_LIT})\[\s*:\s*:\s*-1\s*\]""")
_JOIN: Final = re.compile(rf"""({_LIT})\.join\(\s*[\[(]\s*({_LITS})\s*,?\s*[\])]\s*\)""")
_JS_JOIN: Final = re.compile(rf"""\[\s*({_LITS})\s*,?\s*\]\.join\(\s*({_LIT})?\s*\)""")
_PERCENT: Final = re.compile(rf"""({_LIT})\s*%\s*(?:\(\s*({_LITS})\s*,?\s*\)|({_LIT}))""")
_FORMAT: Final = re.compile(rf"""({_LIT})\.format\(\s*({_LITS})?\s*,?\s*\)""")
_ROUNDS: Final = 8
_MAX_BUILT: Final = 64


def built_literals(text: str) -> list[str]:
    """The literals ``text`` builds (module doc), each quoted, for :func:`.code.code_paths`."""
    if not _cheap(text):
        return []
    before = set(_EACH.findall(text))
    for _ in range(_ROUNDS):
        step = _REVERSED.sub(lambda m: _quoted(_value(m.group(1))[::-1]), text)
        step = _JOIN.sub(lambda m: _quoted(_value(m.group(1)).join(_values(m.group(2)))), step)
        step = _JS_JOIN.sub(
            lambda m: _quoted(
                (_value(m.group(2)) if m.group(2) else ",").join(_values(m.group(1)))
            ),
            step,
        )
        step = _PERCENT.sub(_percent, step)
        step = _FORMAT.sub(_format, step)
        step = _ADJACENT.sub(lambda m: _quoted(_value(m.group(1)) + _value(m.group(2))), step)
        if step == text:
            break
        text = step
    built = [word for word in _EACH.findall(text) if word not in before]
    return [word for word in built if word[1:-1].strip()][:_MAX_BUILT]


def _cheap(text: str) -> bool:
    """Whether ``text`` may hold one of the forms (the test before any regex)."""
    return (
        "::-1" in text
        or "join(" in text
        or "%" in text
        or ".format(" in text
        or "' '" in text
        or '" "' in text
        or "' \"" in text
        or "\" '" in text
    )


def _value(literal: str) -> str:
    return literal[1:-1]


def _values(literals: str) -> list[str]:
    return [_value(literal) for literal in _EACH.findall(literals)]


def _quoted(text: str) -> str:
    if "'" not in text:
        return f"'{text}'"
    if '"' not in text:
        return f'"{text}"'
    return "''"


def _percent(match: re.Match[str]) -> str:
    template = _value(match.group(1))
    values = _values(match.group(2)) if match.group(2) else [_value(match.group(3))]
    if template.count("%s") != len(values) or template.replace("%s", "").count("%"):
        return match.group()
    for value in values:
        template = template.replace("%s", value, 1)
    return _quoted(template)


def _format(match: re.Match[str]) -> str:
    template = _value(match.group(1))
    values = _values(match.group(2)) if match.group(2) else []
    if template.count("{}") != len(values) or template.replace("{}", "").count("{"):
        return match.group()
    for value in values:
        template = template.replace("{}", value, 1)
    return _quoted(template)


__all__ = ["built_literals"]
