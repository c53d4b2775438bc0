"""Glob target patterns (DESIGN §4): the settled table, literal characters, and a reference
matcher compared with the engine on random patterns and targets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from policy_support import glob_policy, hits, policy, reference_match, rule

from pytest_harness_audit.policy.glob import suffix_literal, translate_glob

GLOB_TABLE = [
    # (pattern, target, matches)
    ("/src/*.ts", "/src/index.ts", True),
    ("/src/*.ts", "/src/sub/index.ts", False),
    ("/src/*.ts", "/src/.ts", True),
    ("**/.env", ".env", True),
    ("**/.env", "/p/.env", True),
    ("**/.env", "/home/u/app/.env", True),
    ("**/.env", "/p/prod.env", False),
    ("**/.env", "/p/.env.local", False),
    ("**/.env*", "/project/.env.local", True),
    ("file?.ts", "file1.ts", True),
    ("file?.ts", "fileAB.ts", False),
    ("file?.ts", "file.ts", False),
    ("file?.ts", "file/.ts", False),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "a/xb", False),
    ("a/**", "a/x/y", True),
    ("a/**", "a", False),
    ("/src/**/*.ts", "/src/foo.ts", True),
    ("/src/**/*.ts", "/src/a/b/c.ts", True),
    ("/src/**/*.ts", "/lib/a.ts", False),
    ("*.py", "main.py", True),
    ("*.py", "/src/main.py", False),
    ("**/*secret*", "/p/my-secret-file.txt", True),
    ("**/*secret*", "secret", True),
    ("**/*secret*", "/secret/x.txt", False),
    ("**/*secret*", "/p/secrets/notes", False),
    ("**", "", True),
    ("**", "/any/thing", True),
    ("*", "", True),
    ("*", "a/b", False),
    ("?", "", False),
    # whole-target matching: no implicit prefix or suffix
    ("src/*.ts", "/src/index.ts", False),
    ("/src/*.ts", "/src/index.tsx", False),
    # case-sensitive
    ("**/.ENV", "/p/.env", False),
]


@pytest.mark.parametrize(("pattern", "target", "expected"), GLOB_TABLE)
def test_glob_table(pattern: str, target: str, expected: bool) -> None:
    assert hits(glob_policy(pattern), target) is expected


LITERALS = [
    ("a{b}.ts", "a{b}.ts", "ab.ts"),
    ("[ab].txt", "[ab].txt", "a.txt"),
    ("a+b", "a+b", "aab"),
    ("a.b", "a.b", "axb"),
    ("(x)|y", "(x)|y", "x"),
    ("^a$", "^a$", "a"),
    ("a\\b", "a\\b", "ab"),
    ("{a,b}*", "{a,b}c", "ac"),
    ("[!a]*", "[!a]x", "bx"),
    ("x.*", "x.py", "xapy"),
    # no way out of the group a glob is wrapped in: `\A(?s:…)\z`
    ("*)|(.*", "a)|(.b", "anything"),
    ("a\\z)|\\A(", "a\\z)|\\A(", "a"),
]


@pytest.mark.parametrize(("pattern", "literal_target", "not_a_match"), LITERALS)
def test_special_characters_in_globs_are_literal(
    pattern: str, literal_target: str, not_a_match: str
) -> None:
    p = glob_policy(pattern)
    assert hits(p, literal_target)
    assert not hits(p, not_a_match)


def test_a_glob_with_no_wildcard_matches_only_the_same_string() -> None:
    p = glob_policy("/etc/passwd")
    assert hits(p, "/etc/passwd")
    assert not hits(p, "/etc/passwd2")
    assert not hits(p, "x/etc/passwd")


def test_any_pattern_of_the_list_may_match() -> None:
    p = glob_policy("*.ts", "*.js")
    assert hits(p, "a.js")
    assert hits(p, "a.ts")
    assert not hits(p, "a.py")


def test_wildcards_match_newlines_and_non_ascii_characters() -> None:
    assert hits(glob_policy("a*b"), "a\nb")
    assert hits(glob_policy("file?.ts"), "fileé.ts")
    assert hits(glob_policy("?"), "€")


def test_suffix_literal_recognises_the_commonest_form() -> None:
    assert suffix_literal("**/.env") == ".env"
    assert suffix_literal("**/.ssh/config") == ".ssh/config"
    assert suffix_literal("**/*.env") is None
    assert suffix_literal("a/**/.env") is None
    assert suffix_literal("**/") is None


def test_translate_glob_reports_the_required_literals() -> None:
    parts = translate_glob("/src/**/*.ts")
    assert parts.literals == ("/src/", ".ts")


@pytest.mark.parametrize(("pattern", "target", "expected"), GLOB_TABLE)
def test_the_reference_matcher_agrees_with_the_table(
    pattern: str, target: str, expected: bool
) -> None:
    assert reference_match(pattern, target) is expected


PATTERN_ALPHABET = st.sampled_from(["a", "b", ".", "/", "*", "?", "**/", "{", "+"])
TARGET_ALPHABET = st.sampled_from(["a", "b", ".", "/", "{", "+", "\n"])


@settings(max_examples=150, deadline=None)
@given(
    pattern=st.lists(PATTERN_ALPHABET, max_size=8).map("".join),
    targets=st.lists(st.lists(TARGET_ALPHABET, max_size=10).map("".join), min_size=1, max_size=6),
)
def test_engine_globs_agree_with_the_reference_matcher(pattern: str, targets: list[str]) -> None:
    p = glob_policy(pattern)
    for target in targets:
        assert hits(p, target) is reference_match(pattern, target), (pattern, target)


LITERAL_CHARS = [" ", "\\", "é", "[", "]", "(", ")", "$", "^", "|", "\n", "#", "{", "}"]


@settings(max_examples=100, deadline=None)
@given(
    pattern=st.lists(
        st.sampled_from([*LITERAL_CHARS, "a", "/", "*", "?", "**", "**/"]), max_size=8
    ).map("".join),
    target=st.lists(st.sampled_from([*LITERAL_CHARS, "a", "/"]), max_size=10).map("".join),
)
def test_every_other_character_is_literal(pattern: str, target: str) -> None:
    p = glob_policy(pattern)
    assert hits(p, target) is reference_match(pattern, target)
    if "*" not in pattern and "?" not in pattern:
        assert hits(p, pattern)


GLOB_BESIDE_REGEX = [
    # (target, the rule that decides): the glob matches whole targets only, the regex anywhere
    ("main.py", "glob"),
    ("src/main.py", "regex"),  # `*` stops at `/`; the regex `src` is found
    ("main.py\nsrc", "regex"),  # the glob must end the whole target, not a line
    ("x\nmain.py", "glob"),  # `*` spans a newline, from the very start
    ("main.pyc", None),
    ("\nmain.pyc", None),
]


@pytest.mark.parametrize(("target", "decided_by"), GLOB_BESIDE_REGEX)
def test_globs_and_regexes_in_one_policy_keep_their_own_anchoring(
    target: str, decided_by: str | None
) -> None:
    # both kinds are matched by one RE2 set: a glob's anchors must hold there
    both = policy(
        rule("glob", priority=1, targetPatterns=["*.py"]),
        rule("regex", priority=2, targetPatterns=["src"], targetPatternsAreRegex=True),
    )
    assert both.evaluate("Grep", {"pattern": target}).rule_id == decided_by
