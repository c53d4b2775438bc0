"""A prefilter that clears most calls without deriving their targets.

Every target pattern requires some literal text in whatever it matches: ``(?i)(?:^|/)\\.env$``
cannot match a string without ``.env`` (in any case), ``/srv/**/*.sql`` none without both
``/srv/`` and ``.sql``, and ``^/$`` matches the target ``/`` only. The *necessary literals* of
every pattern a tool's rules hold go into one Aho–Corasick automaton (``ahocorasick-rs``: linear
in the text), scanned once over the raw text of a call: the values of its target parameters, and
the normalised forms of its paths when they differ. When no pattern's requirement is met, no
pattern can match any target, and the call is decided by the rules without patterns alone, as
the full evaluation would decide it.

The literals are worked out from the parsed pattern (:func:`requirement`); a pattern that
requires no literal (``.*``, ``^(?!/srv/)``), that runs on the fallback engine, or whose syntax
Python's parser might read differently from RE2, makes its tool take the full path every time.
Text that is not ASCII takes the full path too, so case folding is never in question: the
automaton holds every literal case-folded and scans the text in lower case, a superset of what
either case-sensitive or case-insensitive matching would find.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Final

import ahocorasick_rs

from pytest_harness_audit.policy.glob import translate_glob
from pytest_harness_audit.policy.param_targets import as_dict
from pytest_harness_audit.policy.path_forms import plain_path
from pytest_harness_audit.policy.patterns import excluded_prefixes
from pytest_harness_audit.policy.targets import FILE_KIND, KEY_KINDS, OTHER_KIND, screen_forms

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


#: Text longer than this that holds a literal takes the full path (all matches are not listed).
_OVERLAP_LIMIT: Final = 4096


class Prefilter:
    """The requirements of a tool's patterns: :meth:`may_match` says whether a call's target
    forms could satisfy any of them."""

    __slots__ = (
        "_automaton",
        "_by_first",
        "_excluded",
        "_multi",
        "_single",
        "_whole",
        "_whole_lengths",
        "empty",
    )

    def __init__(self, requirements: Iterable[Requirement]) -> None:
        # case-folded (`K` → k, `ſ` → s): for ASCII text, the lower-case scan then finds every
        # literal in any case, and a folded literal that stays non-ASCII can never be needed
        whole: set[str] = set()
        single: set[str] = set()  # literals of requirements of one group: one hit suffices
        multi: list[tuple[frozenset[str], ...]] = []
        excluded: list[tuple[str, ...]] = []  # exact case: only ever compared as given
        for each in requirements:
            if each.excluded is not None:
                excluded.append(each.excluded)
                continue
            if each.whole is not None:
                whole |= {text.casefold() for text, _ in each.whole}
                continue
            groups = tuple(frozenset(text.casefold() for text, _ in g) for g in each.groups)
            if len(groups) == 1:
                single |= groups[0]
            else:
                multi.append(groups)
        literals = sorted(single.union(*(g for groups in multi for g in groups)))
        self._whole = frozenset(whole)
        self._whole_lengths = frozenset(len(text) for text in whole)
        self._single = frozenset(single)
        self._multi = tuple(dict.fromkeys(multi))
        # each requirement of several groups under every literal of its first group, with its
        # other groups: only those a hit names need a look (:meth:`_met_by`)
        by_first: dict[str, list[tuple[frozenset[str], ...]]] = {}
        for groups in self._multi:
            for literal in groups[0]:
                by_first.setdefault(literal, []).append(groups[1:])
        self._by_first = {literal: tuple(rests) for literal, rests in by_first.items()}
        self._automaton: Any = ahocorasick_rs.AhoCorasick(literals) if literals else None
        self._excluded = tuple(dict.fromkeys(excluded))
        #: No requirement at all: no pattern can match anything (an empty ``targetPatterns``).
        self.empty = not whole and not literals and not excluded

    def clears(self, text: str) -> bool:
        """Whether a call whose one target form is ``text`` (ASCII) satisfies no requirement:
        :meth:`may_match` of that one form, negated."""
        for prefixes in self._excluded:
            if not text.startswith(prefixes):
                return False
        text = text.lower()
        if len(text) in self._whole_lengths and text in self._whole:  # (no hash of most texts)
            return False
        automaton = self._automaton
        if automaton is None:
            return True
        if self._multi and len(text) <= _OVERLAP_LIMIT:  # every occurrence at once (_met)
            hits = automaton.find_matches_as_strings(text, True)  # (overlapping)
            return not hits or not self._met_by(set(hits))
        found = automaton.find_matches_as_strings(text)
        return not found or not self._met(text, found)

    def may_match(self, forms: list[str], text: str) -> bool:
        """Whether the target forms (``text``: them joined, ASCII) could satisfy a requirement."""
        for prefixes in self._excluded:
            for form in forms:
                if not form.startswith(prefixes):
                    return True
        whole = self._whole
        if whole:
            lengths = self._whole_lengths  # ASCII text: lower case keeps every length
            for form in forms:
                if len(form) in lengths and form.lower() in whole:
                    return True
        automaton = self._automaton
        if automaton is None:
            return False
        text = text.lower()
        if self._multi and len(text) <= _OVERLAP_LIMIT:  # every occurrence at once (_met)
            hits = automaton.find_matches_as_strings(text, True)  # (overlapping)
            return bool(hits) and self._met_by(set(hits))
        found = automaton.find_matches_as_strings(text)
        return bool(found) and self._met(text, found)

    def matchable(self, forms: list[str], text: str) -> list[str]:
        """The forms that could each satisfy a requirement alone (``text``: them joined, ASCII):
        :meth:`may_match` of each form, from one scan of them all."""
        automaton = self._automaton
        hits: list[str] = []
        if automaton is not None:
            if len(text) > _OVERLAP_LIMIT:
                return forms if self.may_match(forms, text) else []
            # every literal in a form is in their joined text: its hits hold them all, and
            # when those meet no requirement together, none of the forms' own do either
            found = set(automaton.find_matches_as_strings(text.lower(), True))
            if found and self._met_by(found):
                hits = list(found)
        whole, excluded = self._whole, self._excluded
        if not hits and not whole and not excluded:
            return []
        single, lengths = self._single, self._whole_lengths
        kept: list[str] = []
        for form in forms:
            if excluded and self.may_match([form], form):
                kept.append(form)
                continue
            lower = form.lower()
            if whole and len(form) in lengths and lower in whole:
                kept.append(form)
                continue
            present: set[str] | None = None  # the literals of requirements of several groups
            for hit in hits:
                if hit in lower:
                    if hit in single:
                        kept.append(form)
                        break
                    if present is None:
                        present = set()
                    present.add(hit)
            else:
                # (holding every literal found, it meets what they all met)
                if present is not None and (len(present) == len(hits) or self._met_by(present)):
                    kept.append(form)
        return kept

    def _met(self, text: str, found: list[str]) -> bool:
        """Whether the literals ``found`` in ``text`` (lower case) meet a requirement."""
        if not self._multi or not self._single.isdisjoint(found):
            return True
        if len(text) > _OVERLAP_LIMIT:
            return True
        # every occurrence, overlapping ones too: each group of a requirement must be met
        return self._met_by(set(self._automaton.find_matches_as_strings(text, True)))

    def _met_by(self, hits: set[str]) -> bool:
        """Whether the literals ``hits`` (every occurrence in a text) meet a requirement."""
        if not self._single.isdisjoint(hits):
            return True
        by_first = self._by_first
        for hit in hits:
            for rest in by_first.get(hit, ()):
                for group in rest:
                    if group.isdisjoint(hits):
                        break
                else:
                    return True
        return False


def targets_may_match(prefilter: Prefilter, targets: list[str]) -> bool:
    """Whether a pattern of ``prefilter``'s tool could match one of the derived ``targets``."""
    text = targets[0] if len(targets) == 1 else "\n".join(targets)
    return not text.isascii() or prefilter.may_match(targets, text)


def worth_matching(prefilter: Prefilter, targets: list[str]) -> list[str]:
    """The derived ``targets`` a pattern of ``prefilter``'s tool could match, each on its own
    (a pattern matches one target, so it needs its literals in that one): a command's many
    targets then take the RE2 sets only where they can match. Empty when none can."""
    if len(targets) == 1:
        return targets if targets_may_match(prefilter, targets) else []
    text = "\n".join(targets)
    if not text.isascii():
        return targets  # case folding is left to the full path
    return prefilter.matchable(targets, text)


_GLOB_CHARS: Final = frozenset("*?[{")


def cleared(prefilter: Prefilter, params: Mapping[str, Any], root: str | None) -> bool:
    """Whether no target of the call can hold a literal of ``prefilter`` (so none can match)."""
    return screen(prefilter, params, root)[0]


def screen(
    prefilter: Prefilter, params: Mapping[str, Any], root: str | None
) -> tuple[bool, list[str] | None]:
    """:func:`cleared`, and for a call not cleared whose forms scanned are exactly its targets
    (one target parameter, no command: :func:`~.targets.screen_forms`), those targets: known
    then to be worth matching, they need no second derivation nor a second scan."""
    args = as_dict(params)
    if type(args.get("command")) is str:
        return False, None  # a command's targets are known only once read (the full path)
    if root is None and len(args) == 1:
        # the commonest shape: one path already in normal form, or one pattern or URL, whose
        # only target form is its value (as :func:`~.targets.prefilter_forms` finds)
        ((key, value),) = args.items()
        if type(value) is str:
            kind = KEY_KINDS.get(key)
            # (a glob names the sensitive files it can match: `.e?v` is `.env`, see
            # :mod:`~.search_targets`; a path in another spelling has other forms)
            if (
                kind == OTHER_KIND
                and _GLOB_CHARS.isdisjoint(value)
                and value[:5].lower() != "file:"
            ) or (kind == FILE_KIND and plain_path(value)):
                if value.isascii() and prefilter.clears(value):
                    return True, None
                # a `pattern` or `glob` alone takes the full derivation (:func:`call_targets`)
                return False, ([value] if key != "pattern" and key != "glob" else None)
    forms, exact = screen_forms(args, root)
    if forms is None:
        return False, None
    if len(forms) == 1:  # one form: the one-form test (`{"file_path": …, "offset": …}`)
        text = forms[0]
        if text.isascii() and prefilter.clears(text):
            return True, None
        return False, (forms if exact else None)
    text = "\n".join(forms)
    # not ASCII: case folding (`ſ` for `s`, `K` for `k`) is left to the full path
    if text.isascii() and not prefilter.may_match(forms, text):
        return True, None
    return False, (forms if exact else None)
