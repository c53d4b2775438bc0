"""A gated regex answers as the regex does: the gate only skips texts with no possible match."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy import sensitive
from pytest_harness_audit.policy.literal_gate import LiteralGate
from pytest_harness_audit.policy.shell import native_code, program_strings, sql_meta

GATED = [
    sensitive._CREDENTIAL_GATE,
    native_code._MAY_LOAD_GATE,
    program_strings._PY_DYNAMIC_GATE,
    program_strings._JS_DYNAMIC_GATE,
    sql_meta._META_GATE,
    LiteralGate(re.compile(r"(?i)\bfoo(?:bar|baz)\s*\(")),
    LiteralGate(re.compile(r"(?<![.\w])rm\s+-rf|sec(?:ret)?\.(?:json|ya?ml)")),
    LiteralGate(re.compile(r"a.*b")),  # requires `a` and `b`
    LiteralGate(re.compile(r".*")),  # requires nothing: never gated
]
# pieces that make matches likely: every pattern's words, in either case, and separators
_PIECES = st.sampled_from(
    ["exec", "EVAL", "ctypes", "CDLL", "dlopen", ".env", "secret", "Credentials", "id_rsa",
     ".pem", "/", "\\", ".", "(", " ", "\t", "\\o", "\\!", "pager", "foo", "FOOBAZ", "bar",
     "rm", "-rf", "sec.json", "a", "b", "x", "ſ", "K", "é", "subprocess", "[", "eval("]
)  # fmt: skip
_TEXTS = st.one_of(st.text(max_size=40), st.lists(_PIECES, max_size=12).map("".join))


@settings(max_examples=400, deadline=None)
@given(text=_TEXTS)
def test_a_gated_search_finds_what_the_regex_finds(text: str) -> None:
    for gate in GATED:
        found = gate.search(text)
        expected = gate.pattern.search(text)
        assert (found and found.span()) == (expected and expected.span()), (gate.pattern, text)
        assert [m.span() for m in gate.finditer(text)] == [
            m.span() for m in gate.pattern.finditer(text)
        ]


def test_texts_without_the_literals_are_cleared_and_others_are_not() -> None:
    gate = LiteralGate(re.compile(r"(?i)\bfoo(?:bar|baz)\s*\("))
    assert not gate.may_match("print('hello world')")
    assert gate.may_match("x = FOOBAZ (1)")
    assert not gate.may_match("fooBar")  # `(` missing: each group must be met
    assert gate.may_match("xfooBar (")  # the literals present: the regex decides (no match)
    assert gate.search("xfooBar (") is None


def test_non_ascii_text_and_patterns_requiring_nothing_always_run_the_regex() -> None:
    # `ſ` matches `s` and the Kelvin sign `k` when the case is ignored: never cleared
    gate = LiteralGate(re.compile(r"(?i)secret"))
    assert gate.may_match("ſecret")
    assert gate.search("ſecret") is not None
    assert LiteralGate(re.compile(r".*")).may_match("anything")


def test_credential_names_are_still_recognised() -> None:
    for path in ["/w/.env", "C:\\w\\.ENV", "~/.ssh/id_rsa", "deploy/key.pem", "a/.aws/credentials"]:
        assert sensitive.is_credential_path(path), path
    for path in ["/w/src/app.py", "README.md", "src/secret_manager.py", ".env.example"]:
        assert not sensitive.is_credential_path(path), path
