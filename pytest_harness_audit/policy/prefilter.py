"""A prefilter that clears most calls without deriving their targets.

Every target pattern requires some literal text in whatever it matches: ``(?i)(?:^|/)\\.env$``
cannot match a string without ``.env`` (in any case), ``/srv/**/*.sql`` none without both
``/srv/`` and ``.sql``, and ``^/$`` matches the target ``/`` only. The *necessary literals* of
every pattern a tool's rules hold go into one Aho–Corasick automaton (``ahocorasick-rs``: linear
in the text), scanned once over the raw text of a call: the values of its target parameters, and
the normalised forms of its paths when they differ. When no pattern's requirement is met, no
pattern can match any target, and the call is decided by the rules without patterns alone, as
the full evaluation would decide it.

The literals are worked out from the parsed pattern (:func:`~.requirements.requirement`); a
pattern that requires no literal (``.*``, ``^(?!/srv/)``), that runs on the fallback engine, or
whose syntax Python's parser might read differently from RE2, makes its tool take the full path
every time.
Text that is not ASCII takes the full path too, so case folding is never in question: the
automaton holds every literal case-folded and scans the text in lower case, a superset of what
either case-sensitive or case-insensitive matching would find.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import ahocorasick_rs

from pytest_harness_audit.policy.param_targets import as_dict
from pytest_harness_audit.policy.path_forms import plain_path

# The requirement analysis lives in its own module; its names are this module's too.
from pytest_harness_audit.policy.requirements import Literal as Literal
from pytest_harness_audit.policy.requirements import Requirement as Requirement
from pytest_harness_audit.policy.requirements import pattern_requirement as pattern_requirement
from pytest_harness_audit.policy.requirements import (
    python_regex_requirement as python_regex_requirement,
)
from pytest_harness_audit.policy.requirements import requirement as requirement
from pytest_harness_audit.policy.targets import (
    CODE_KIND,
    COMMAND_KIND,
    FILE_KIND,
    KEY_KINDS,
    OTHER_KIND,
    derived_forms,
    lone_forms,
    lone_target,
)

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
    lone = lone_target(args)
    if lone is not None:
        value, kind = lone
        if (kind == OTHER_KIND and value[:5].lower() != "file:") or (
            kind == FILE_KIND and root is None and plain_path(value)
        ):
            # the commonest shape: one path already in normal form, or one URL, whose only
            # target form is its value (as :func:`~.targets.lone_forms` finds)
            if value.isascii() and prefilter.clears(value):
                return True, None
            return False, [value]
        if kind in (COMMAND_KIND, CODE_KIND):
            return False, None  # a command's targets are known only once read (the full path)
        forms: list[str] | None = lone_forms(value, kind, root)
        exact = True
    else:
        if type(args.get("command")) is str:
            return False, None
        if root is None and len(args) == 1:
            for key, only in args.items():
                # (a glob names the sensitive files it can match: `.e?v` is `.env`, see
                # :mod:`~.search_targets`; a path in another spelling has other forms)
                if (
                    type(only) is str
                    and KEY_KINDS.get(key) == OTHER_KIND
                    and _GLOB_CHARS.isdisjoint(only)
                    and only[:5].lower() != "file:"
                ):
                    if only.isascii() and prefilter.clears(only):
                        return True, None
                    # a `pattern` or `glob` alone takes the full derivation (call_targets)
                    return False, None
        forms = derived_forms(args, root)
        exact = False
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
