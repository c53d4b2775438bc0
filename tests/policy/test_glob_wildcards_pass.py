"""A glob's wildcards are found in one pass, as the regular expression finds them, and a part
of many ``[`` that close nowhere costs no scan from each of them."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy.sensitive import _without_wildcards, glob_candidates

#: The regular expression the one pass stands for.
_WILD = re.compile(r"\[[^\]/]*\]|[*?]")


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="[]/*?a.e", max_size=24))
def test_one_pass_gives_what_the_expression_gives(text: str) -> None:
    assert _without_wildcards(text) == (_WILD.sub("", text), _WILD.search(text) is not None)


def test_glob_candidates_still_name_the_secret() -> None:
    assert glob_candidates("app/.[e]nv") == ["app/.env"]
    assert glob_candidates("x/" + "[" * 20_000 + ".env") == []  # no wildcard: a name
