"""Every form of a known value the matcher looks for, worked out once per value, and the
automata over them, built once per set of values."""

from __future__ import annotations

import functools
import itertools

from pytest_harness_audit.inspect import _encodings, _matcher, _near, _skeleton, _substitution

#: The automata of a set of values with at most this many forms are kept for the process (each
#: session of a template learns the same values); a bigger set's are built for its registry
#: alone, their memory outweighing a second build.
KEPT_FORMS = 200_000

Values = tuple[tuple[str, ...], ...]
"""The values of a registry, in the order it learned them: each as its pieces."""


@functools.lru_cache(maxsize=1024)
def piece_forms(piece: str) -> tuple[tuple[str, str, str], ...]:
    """``(transform, form, normalised form)`` of every form of ``piece`` the matcher looks for
    (its hundreds of substitutions among them): a pure function of the value, worked out once
    per process for a value several registries know (each session of a template learns the
    same secrets)."""
    found = []
    for transform, form in itertools.chain(
        _matcher.forms(piece),
        _skeleton.extra_forms(piece),
        _encodings.more_forms(piece),
        _substitution.substitution_forms(piece),
        _near.grams(piece),
    ):
        key = _matcher.normalise(form)
        if len(key) >= _matcher.MIN_PATTERN or transform == _near.NEAR:
            found.append((transform, form, key))
    return tuple(found)


def automata(values: Values) -> tuple[_matcher.Automaton, _matcher.Automaton]:
    """The automaton of every form of ``values`` (each pattern naming its value by its place)
    and the automaton of their skeletons (:mod:`._skeleton`). Both are read-only once built,
    so registries that know the same values in the same order share them."""
    if sum(len(piece_forms(piece)) for pieces in values for piece in pieces) > KEPT_FORMS:
        return _built(values)
    return _kept(values)


@functools.lru_cache(maxsize=16)
def _kept(values: Values) -> tuple[_matcher.Automaton, _matcher.Automaton]:
    return _built(values)


def _built(values: Values) -> tuple[_matcher.Automaton, _matcher.Automaton]:
    forms = _matcher.Automaton(
        [
            _matcher.Pattern(index, transform, form, key)
            for index, pieces in enumerate(values)
            for piece in pieces
            for transform, form, key in piece_forms(piece)
        ]
    )
    skeletons = _matcher.Automaton(
        [
            _matcher.Pattern(index, transform, key, key)
            for index, pieces in enumerate(values)
            for piece in pieces
            for transform, key in _skeleton.skeleton_forms(piece)
        ]
    )
    return forms, skeletons
