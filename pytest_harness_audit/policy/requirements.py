"""What a target pattern requires of any text it matches: the *necessary literals*.

``(?i)(?:^|/)\\.env$`` cannot match a string without ``.env`` (in any case), ``/srv/**/*.sql``
none without both ``/srv/`` and ``.sql``, and ``^/$`` matches the target ``/`` only. The literals
are worked out from the parsed pattern (:func:`requirement`); a pattern that requires no literal
(``.*``, ``^(?!/srv/)``), or whose syntax Python's parser might read differently from RE2, has no
requirement (``None``). :class:`~.prefilter.Prefilter` scans a call's text for them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Final

from pytest_harness_audit.policy.glob import translate_glob
from pytest_harness_audit.policy.patterns import excluded_prefixes

try:  # Python 3.11+
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre_parse

#: One necessary literal: its text and whether it is matched in any case.
Literal = tuple[str, bool]

_MAX_EXACT: Final = 64  # most strings an exactly-known sub-pattern may stand for
_MAX_EXACT_LENGTH: Final = 64
# Syntax RE2 and Python's parser may both accept and read differently (POSIX classes `[[:d:]]`,
# \Q…\E, Unicode classes, `{,n}`, `\x{…}`, flags RE2 lacks): such a pattern is never prefiltered.
_DISTRUSTED: Final = re.compile(r":\]|\\[QEpPCz]|\\x\{|\{,|\(\?[a-zA-Z]*[xUuLa]")
_ZERO_WIDTH: Final = frozenset({"AT", "ASSERT", "ASSERT_NOT"})


class _Info:
    """What a sub-pattern says about the strings it matches: ``exact`` (all of them, when few),
    else ``groups``: sets of literals, every match holding one literal of each set."""

    __slots__ = ("exact", "groups")

    def __init__(
        self,
        exact: frozenset[Literal] | None = None,
        groups: tuple[frozenset[Literal], ...] = (),
    ) -> None:
        self.exact = exact
        self.groups = groups

    def required(self) -> tuple[frozenset[Literal], ...]:
        """The groups, an exact set counting as one (when it holds no empty string)."""
        if self.exact is not None:
            return () if any(not text for text, _ in self.exact) else (self.exact,)
        return self.groups


_NOTHING: Final = _Info()
_EMPTY: Final = _Info(exact=frozenset({("", False)}))


def _selectivity(group: AbstractSet[Literal]) -> tuple[int, int]:
    return (min(len(text) for text, _ in group), -len(group))


def _concat(infos: Sequence[_Info]) -> _Info:
    current: frozenset[Literal] = frozenset({("", False)})
    groups: list[frozenset[Literal]] = []
    broken = False
    for info in infos:
        if info.exact is not None:
            product = frozenset(
                (a + b, ci_a or ci_b) for a, ci_a in current for b, ci_b in info.exact
            )
            if len(product) <= _MAX_EXACT and all(len(t) <= _MAX_EXACT_LENGTH for t, _ in product):
                current = product
                continue
        broken = True
        groups.extend(_Info(exact=current).required())
        if info.exact is not None:
            current = info.exact
        else:
            groups.extend(info.groups)
            current = frozenset({("", False)})
    if not broken:
        return _Info(exact=current)
    groups.extend(_Info(exact=current).required())
    return _Info(groups=tuple(dict.fromkeys(groups)))


def _alternation(infos: Sequence[_Info]) -> _Info:
    if all(info.exact is not None for info in infos):
        union = frozenset(item for info in infos for item in info.exact or ())
        if len(union) <= _MAX_EXACT:
            return _Info(exact=union)
    merged: set[Literal] = set()
    for info in infos:
        required = info.required()
        if not required:
            return _NOTHING
        merged |= max(required, key=_selectivity)
    return _Info(groups=(frozenset(merged),))


def _class(items: Any, ci: bool) -> _Info:
    """A character class of a few literal characters is exactly those; any other, nothing."""
    chars = []
    for op, value in items:
        if str(op) != "LITERAL":
            return _NOTHING
        chars.append((chr(value), ci))
    return _Info(exact=frozenset(chars)) if 0 < len(chars) <= 8 else _NOTHING


def _sequence(items: Any, ci: bool) -> _Info:
    return _concat([_node(str(op), value, ci) for op, value in items])


def _node(op: str, value: Any, ci: bool) -> _Info:
    if op == "LITERAL":
        return _Info(exact=frozenset({(chr(value), ci)}))
    if op in _ZERO_WIDTH:
        return _EMPTY  # anchors and look-around consume nothing
    if op == "IN":
        return _class(value, ci)
    if op == "SUBPATTERN":
        _group, add_flags, del_flags, body = value
        if add_flags & re.IGNORECASE:
            ci = True
        elif del_flags & re.IGNORECASE:
            ci = False
        return _sequence(body, ci)
    if op == "ATOMIC_GROUP":
        return _sequence(value, ci)
    if op == "BRANCH":
        return _alternation([_sequence(branch, ci) for branch in value[1]])
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, body = value
        inner = _sequence(body, ci)
        if low == 0:
            if high == 1 and inner.exact is not None:
                return _Info(exact=inner.exact | {("", False)})
            return _NOTHING  # `x*`, `x{0,3}`: any number of copies, literal runs broken
        if low == high == 1:
            return inner
        return _Info(groups=inner.required())
    return _NOTHING  # `.`, classes, back-references, conditionals: nothing known


class Requirement:
    """What any target a pattern matches must be: one of ``whole`` (the pattern matches whole
    targets of a few known values), start with none of ``excluded`` (``^(?!/srv/app/)``), or
    hold a literal of each of ``groups``."""

    __slots__ = ("excluded", "groups", "whole")

    def __init__(
        self,
        groups: tuple[frozenset[Literal], ...],
        whole: frozenset[Literal] | None = None,
        excluded: tuple[str, ...] | None = None,
    ) -> None:
        self.groups = groups
        self.whole = whole
        self.excluded = excluded


_BEGIN: Final = frozenset({"AT_BEGINNING", "AT_BEGINNING_STRING"})
_END: Final = frozenset({"AT_END", "AT_END_STRING"})


def _parsed_requirement(parsed: Any, flags: int, *, anchored: bool) -> Requirement | None:
    items = list(parsed)
    ci = bool(flags & re.IGNORECASE)
    if (
        anchored
        and not flags & re.MULTILINE
        and len(items) >= 2
        and str(items[0][0]) == "AT"
        and str(items[0][1]) in _BEGIN
        and str(items[-1][0]) == "AT"
        and str(items[-1][1]) in _END
    ):
        middle = _sequence(items[1:-1], ci)
        if middle.exact is not None:
            return Requirement((), whole=middle.exact)
    groups = _sequence(items, ci).required()
    return Requirement(groups) if groups else None


def requirement(pattern: str, *, is_regex: bool) -> Requirement | None:
    """What a target matching ``pattern`` must be or hold; ``None`` when nothing is known (a
    pattern requiring no literal, or one that cannot be analysed: nothing may be cleared by it).

    A glob without wildcards matches itself only; another glob requires each of its literal
    runs (``/srv/**/*.sql`` → ``/srv/`` and ``.sql``). A regex is parsed: case-insensitive parts
    give literals matched in any case; ``^…$`` around a few known strings matches only them.
    """
    if not is_regex:
        if "*" not in pattern and "?" not in pattern:
            return Requirement((), whole=frozenset({(pattern, False)}))
        literals = translate_glob(pattern).literals
        if not literals:
            return None
        return Requirement(tuple(frozenset({(text, False)}) for text in dict.fromkeys(literals)))
    if _DISTRUSTED.search(pattern):
        return None
    try:
        parsed = _sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    return _parsed_requirement(parsed, parsed.state.flags, anchored=True)


# A pattern's requirement depends on its text alone, and parsing a regex for it is most of what
# compiling a policy costs: every session and hook event compiles its policy again.
_KNOWN_REQUIREMENTS: Final[dict[tuple[str, bool], Requirement | None]] = {}
_KNOWN_REQUIREMENTS_MAX: Final = 4096


def pattern_requirement(pattern: str, *, is_regex: bool) -> Requirement | None:
    """:func:`requirement`; for a regex ``^(?!P…)`` of plain prefixes (which requires no
    literal), the prefixes no target it matches starts with."""
    key = (pattern, is_regex)
    if key in _KNOWN_REQUIREMENTS:
        return _KNOWN_REQUIREMENTS[key]
    found: Requirement | None = None
    excluded = excluded_prefixes(pattern) if is_regex else None
    if excluded is not None:
        found = Requirement((), excluded=excluded)
    else:
        found = requirement(pattern, is_regex=is_regex)
    if len(_KNOWN_REQUIREMENTS) >= _KNOWN_REQUIREMENTS_MAX:
        _KNOWN_REQUIREMENTS.clear()
    _KNOWN_REQUIREMENTS[key] = found
    return found


def python_regex_requirement(compiled: re.Pattern[str]) -> Requirement | None:
    """:func:`requirement` of a compiled Python regex searched for (its flags honoured)."""
    try:
        parsed = _sre_parse.parse(compiled.pattern, compiled.flags)
    except (re.error, RecursionError, OverflowError, ValueError):  # pragma: no cover
        return None
    return _parsed_requirement(parsed, compiled.flags, anchored=False)
