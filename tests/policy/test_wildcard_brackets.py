"""A ``[`` that closes nowhere costs no scan on from it: wildcard matching (:mod:`.wildcards`)
and the POSIX classes of a glob (:func:`.posix_brackets`) give what they gave, and a word of
many ``[`` that close nowhere (``[*[*[*…``: 30,000 of them took half a minute) reads in time
that grows with the word."""

from __future__ import annotations

import fnmatch
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy import Policy, wildcards
from pytest_harness_audit.policy.shell import fieldtext, read_command
from pytest_harness_audit.policy.shell.fieldtext import posix_brackets

_PATTERN = st.text(alphabet="[]!^-*?a.e\\", max_size=16)
_NAME = st.text(alphabet="[]!^-a.e\\", max_size=8)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(_NAME, _PATTERN)
def test_matches_as_fnmatch_matches(name: str, pattern: str) -> None:
    assert wildcards.fnmatchcase(name, pattern) == fnmatch.fnmatchcase(name, pattern)
    assert wildcards.fnmatch(name, pattern) == fnmatch.fnmatch(name, pattern)


def _former_posix_brackets(pattern: str) -> str:
    if "[:" not in pattern and "[=" not in pattern and "[." not in pattern:
        return pattern
    return fieldtext._BRACKET.sub(
        lambda m: fieldtext._CLASS.sub(fieldtext._members, m.group()), pattern
    )


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="[]:=.!^ae", max_size=24))
def test_posix_brackets_as_before(pattern: str) -> None:
    assert posix_brackets(pattern) == _former_posix_brackets(pattern)


class _Counted(str):
    """A pattern that counts the characters read from it by index."""

    reads = 0

    def __getitem__(self, key: Any) -> str:
        item = super().__getitem__(key)
        _Counted.reads += len(item)
        return item


def test_translation_reads_each_bracket_once() -> None:
    """:func:`fnmatch.translate` reads the pattern handed over by :mod:`.wildcards` a bounded
    number of times a character (the pattern as written: about once per ``[`` each)."""
    pattern = "[*" * 2_000
    reads = {}
    for name, text in (("closed", wildcards.closed_brackets(pattern)), ("as written", pattern)):
        _Counted.reads = 0
        fnmatch.translate(_Counted(text))
        reads[name] = _Counted.reads
    assert reads["closed"] <= 8 * len(pattern)
    assert reads["as written"] > 200 * len(pattern)  # the count itself tells the two apart


def test_posix_classes_are_sought_before_the_last_bracket(monkeypatch: pytest.MonkeyPatch) -> None:
    handed: list[int] = []
    expression = fieldtext._BRACKET

    class _Recorded:
        def sub(self, repl: Any, text: str) -> str:
            handed.append(len(text))
            return expression.sub(repl, text)

    monkeypatch.setattr(fieldtext, "_BRACKET", _Recorded())
    assert posix_brackets(".[[:alpha:]]nv" + "[:a:" * 5_000) == ".[a-zA-Z]nv" + "[:a:" * 5_000
    assert handed == [len(".[[:alpha:]]")]


@pytest.mark.parametrize(
    "command",
    ["cat .e[n]v", "cat .e[!x]v", "cat .e[[:alpha:]]v", "cat .e[n]v" + " [*" * 3_000],
)
def test_the_secret_is_still_named(command: str) -> None:
    assert Policy.preset("safety").evaluate("Bash", {"command": command}).decision == "deny"


@pytest.mark.slow
def test_a_long_run_of_brackets_is_read() -> None:
    for command in ("echo " + "[*" * 20_000, "ls ./" + "[../" * 15_000):
        assert read_command(command).unreadable is None
