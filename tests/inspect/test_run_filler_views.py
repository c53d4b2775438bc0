"""The filler views of a text (every second … eighth character) searched for runs in one pass
find what searching each view on its own finds, in the same order."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.inspect import _skeleton
from pytest_harness_audit.inspect._runs import MAX_FILLER_STRIDE, MAX_HITS, RunIndex

_VALUES = [
    (0, "sk-test-4f9a1c2e8b7d6a5f3e2d1c0b9a8f7e6d"),
    (1, "whsec_Zq8vK2mN5pR7tW1yB4dF6hJ9"),
    (2, "9b2f6c1e8a7d4e3bb5c02d4f6a8e1c3b"),
]
_INDEX = RunIndex(_VALUES)


def _one_view_at_a_time(skeleton: str) -> list[int]:
    """Each view searched on its own, its first ``MAX_HITS`` matches read."""
    automaton = _INDEX._automaton
    assert automaton is not None
    found: dict[int, None] = {}
    for stride in range(2, MAX_FILLER_STRIDE + 1):
        for offset in range(stride):
            matches = automaton.find_matches_as_indexes(skeleton[offset::stride], overlapping=True)
            for gram, _, _ in matches[:MAX_HITS]:
                for secret in _INDEX._owners[gram]:
                    found.setdefault(secret)
    return list(found)


@st.composite
def _texts(draw: st.DrawFn) -> str:
    """Text, and values spread with filler after each of their characters."""
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            value = draw(st.sampled_from([v for _, v in _VALUES]))
            stride = draw(st.integers(1, MAX_FILLER_STRIDE + 1))
            start = draw(st.integers(0, 12))
            filler = draw(st.text(string.ascii_letters + string.digits + " -_", max_size=8))
            parts.append("".join(c + (filler * 3)[: stride - 1] for c in value[start:]))
        else:
            parts.append(draw(st.text(string.printable, max_size=120)))
    return " ".join(parts)


@settings(max_examples=400, deadline=None)
@given(_texts())
def test_one_pass_over_the_views_finds_what_each_view_finds(text: str) -> None:
    skeleton = _skeleton.skeleton_text(text)
    assert _INDEX._filler_hits(skeleton) == _one_view_at_a_time(skeleton)


def test_a_value_spread_with_filler_is_found_and_a_short_text_finds_nothing() -> None:
    value = _VALUES[0][1][8:]
    spread = "".join(c + "xq" for c in value)
    assert _INDEX._filler_hits(_skeleton.skeleton_text(spread)) == [0]
    assert _INDEX._filler_hits("readmemd") == []


def test_no_run_is_found_across_two_views() -> None:
    """Half a run at the end of one view and the rest at the start of the next is no run."""
    run = _skeleton.skeleton_text(_VALUES[0][1][8:])[:16]
    evens = "0" * 12 + run[:8]
    odds = run[8:] + "0" * 12
    skeleton = "".join(e + o for e, o in zip(evens, odds, strict=True))
    assert _one_view_at_a_time(skeleton) == []
    assert _INDEX._filler_hits(skeleton) == []
