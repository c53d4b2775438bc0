"""The Aho–Corasick scan of necessary literals: whether a text could satisfy any of a set of
pattern requirements (:mod:`.requirements`), the test of the prefilter (:mod:`.prefilter`) and
of the literal gates of slow regexes (:mod:`.literal_gate`).

The automaton holds every literal case-folded and scans ASCII text in lower case: a superset of
what either case-sensitive or case-insensitive matching would find (text that is not ASCII is
left to the full path by the callers).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import ahocorasick_rs

from pytest_harness_audit.policy.requirements import Requirement

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


__all__ = ["Prefilter"]
