"""Every form of a known value the matcher looks for, worked out once per value."""

from __future__ import annotations

import functools
import itertools

from pytest_harness_audit.inspect import _encodings, _matcher, _near, _skeleton, _substitution


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
