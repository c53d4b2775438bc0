"""Every form of a known value the matcher looks for, and the automata over them, worked out
once per value (or set of values) in a process."""

from __future__ import annotations

import functools
import itertools

from pytest_harness_audit.inspect import (
    _encodings,
    _fragments,
    _matcher,
    _near,
    _skeleton,
    _substitution,
)


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


Values = tuple[tuple[str, ...], ...]
"""The pieces of each known value, in the order the values were learnt (a pattern's index)."""


#: The automata of a set of values with at most this many forms are kept for the process; a
#: bigger set's are built for its registry alone (their memory outweighs a second build).
KEPT_FORMS = 200_000


def _kept(values: Values) -> bool:
    return sum(len(piece_forms(piece)) for pieces in values for piece in pieces) <= KEPT_FORMS


# The automata below are pure functions of the values and are only read once built: the
# sessions of one template learn the same values, and each would build the same automata again
# (some 40 ms a session). A few are kept: a process's sessions use a handful of templates.
def automaton(values: Values) -> _matcher.Automaton:
    """The automaton of every form of every piece of ``values``."""
    return _kept_automaton(values) if _kept(values) else _automaton(values)


def skeleton_automaton(values: Values) -> _matcher.Automaton:
    """The automaton of the skeletons of ``values`` (separators ignored: :mod:`._skeleton`)."""
    return _kept_skeletons(values) if _kept(values) else _skeletons(values)


def fragment_index(values: Values) -> _fragments.FragmentIndex:
    """The automaton of the prefixes and suffixes of ``values`` (:mod:`._fragments`)."""
    return _kept_fragments(values) if _kept(values) else _fragment_index(values)


def _automaton(values: Values) -> _matcher.Automaton:
    return _matcher.Automaton(
        [
            _matcher.Pattern(index, transform, form, key)
            for index, pieces in enumerate(values)
            for piece in pieces
            for transform, form, key in piece_forms(piece)
        ]
    )


def _skeletons(values: Values) -> _matcher.Automaton:
    return _matcher.Automaton(
        [
            _matcher.Pattern(index, transform, key, key)
            for index, pieces in enumerate(values)
            for piece in pieces
            for transform, key in _skeleton.skeleton_forms(piece)
        ]
    )


def _fragment_index(values: Values) -> _fragments.FragmentIndex:
    return _fragments.FragmentIndex(
        [
            (index, _matcher.normalise(piece))
            for index, pieces in enumerate(values)
            for piece in pieces
        ]
    )


_kept_automaton = functools.lru_cache(maxsize=16)(_automaton)
_kept_skeletons = functools.lru_cache(maxsize=16)(_skeletons)
_kept_fragments = functools.lru_cache(maxsize=16)(_fragment_index)
