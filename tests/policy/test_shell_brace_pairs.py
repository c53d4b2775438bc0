"""Brace expansion pairs each brace with its match in one pass: the same expandable brace as
scanning on from every brace, and no second scan of nested braces (a word of 20,000 nested
braces reads in milliseconds, not minutes)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy.shell import read_command
from pytest_harness_audit.policy.shell.braces import BRACE, Chars, _first_brace, _sequence


def _scanning_on(chars: Chars) -> tuple[int, list[int], int] | None:
    """The former reading: from each brace, scan on to its match."""
    for index, (char, flags) in enumerate(chars):
        if char != "{" or not flags & BRACE:
            continue
        depth, commas, cursor = 0, [], index
        while cursor < len(chars):
            inner, inner_flags = chars[cursor]
            if inner_flags & BRACE:
                if inner == "{":
                    depth += 1
                elif inner == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif inner == "," and depth == 1:
                    commas.append(cursor)
            cursor += 1
        if cursor < len(chars) and (commas or _sequence(chars[index + 1 : cursor])):
            return index, commas, cursor
    return None


_CHARS = st.lists(
    st.tuples(st.sampled_from(list("{},.a1-9z")), st.sampled_from([0, BRACE, BRACE, BRACE])),
    max_size=40,
)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(_CHARS)
def test_one_pass_finds_the_brace_the_scan_found(chars: Chars) -> None:
    assert _first_brace(chars) == _scanning_on(chars)


def test_sequences_and_lists_still_expand() -> None:
    (argv,) = read_command("echo {a,b}{1..3} x{y{z,w}} {a,{b}} }{a,b} {a{b,c} {-2..1}").commands
    bash_gives = "a1 a2 a3 b1 b2 b3 x{yz} x{yw} a {b} }a }b {ab {ac -2 -1 0 1"
    assert " ".join(argv[1:]) == bash_gives


class _Counted(list[tuple[str, int]]):
    """A word's characters that count how many are read (by index, slice or iteration)."""

    reads = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        for item in super().__iter__():
            _Counted.reads += 1
            yield item

    def __getitem__(self, key):  # type: ignore[no-untyped-def]
        item = super().__getitem__(key)
        _Counted.reads += len(item) if isinstance(key, slice) else 1
        return item


def test_nested_braces_are_read_once() -> None:
    """The work grows with the word, not with its square (the former scan read 200 million
    characters of this word: about a minute)."""
    for scan in (_first_brace, _scanning_on):
        _Counted.reads = 0
        assert scan(_Counted([("{", BRACE)] * 2_000 + [("}", BRACE)] * 2_000)) is None
        reads = _Counted.reads
        if scan is _first_brace:
            assert reads <= 8_000  # each character once, and a short sequence twice
        else:
            assert reads > 1_000_000  # the check itself can tell the two apart
