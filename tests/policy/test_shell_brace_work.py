"""Brace expansion reads a bounded number of characters for a word: past the bound the command
is unreadable (a word of 12,000 ``{a,b}`` read for minutes, one step a pair before its first
field, each step rereading the word); a word below it expands as before."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell import braces, read_command
from pytest_harness_audit.policy.shell.braces import (
    BRACE,
    MAX_FIELDS,
    MAX_WORK,
    Chars,
    brace_expand,
)
from pytest_harness_audit.policy.shell.nodes import Unreadable


def _unbounded(chars: Chars) -> list[Chars]:
    """The former expansion: no bound on the characters read."""
    if not any(flags & BRACE and char == "{" for char, flags in chars):
        return [chars]
    results: list[Chars] = []
    pending = [chars]
    while pending and len(results) < MAX_FIELDS:
        current = pending.pop()
        found = braces._first_brace(current)
        if found is None:
            results.append(current)
            continue
        start, commas, end = found
        head, tail = current[:start], current[end + 1 :]
        if commas:
            bounds = [start, *commas, end]
            options = [current[a + 1 : b] for a, b in itertools.pairwise(bounds)]
        else:
            options = braces._sequence(current[start + 1 : end])
        pending.extend(head + option + tail for option in reversed(options))
    return results[:MAX_FIELDS]


_CHARS = st.lists(
    st.tuples(st.sampled_from(list("{},.a1-9z")), st.sampled_from([0, BRACE, BRACE, BRACE])),
    max_size=48,
)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(_CHARS)
def test_expands_as_before(chars: Chars) -> None:
    assert brace_expand(chars) == _unbounded(chars)


def _word(text: str) -> Chars:
    return [(char, BRACE) for char in text]


def test_many_fields_of_a_long_word_still_expand() -> None:
    word = _word("x" * 3_000 + "{a,b}" * 8)
    assert brace_expand(word) == _unbounded(word)
    assert len(brace_expand(word)) == MAX_FIELDS


def test_the_characters_read_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    read = [0]
    first_brace = braces._first_brace

    def counted(chars: Chars) -> tuple[int, list[int], int] | None:
        read[0] += len(chars)
        return first_brace(chars)

    monkeypatch.setattr(braces, "_first_brace", counted)
    word = _word("{a,b}" * 12_000)
    with pytest.raises(Unreadable, match="braces expand too far"):
        brace_expand(word)
    assert read[0] <= MAX_WORK
    read[0] = 0
    assert len(_unbounded(_word("{a,b}" * 2_000))) == MAX_FIELDS
    assert read[0] > 5 * MAX_WORK  # unbounded, the same word's sixth is read far past it


@pytest.mark.parametrize("word", ["{a,b}" * 12_000, "{1..2}" * 10_000])
def test_a_word_past_the_bound_is_unreadable(word: str) -> None:
    assert read_command("echo " + word).unreadable == "braces expand too far"
    decision = Policy.preset("safety").evaluate("Bash", {"command": "echo " + word}).decision
    assert decision != "allow"
    assert Policy.preset("safety").evaluate("Bash", {"command": "cat {.e,x}nv"}).decision == "deny"
