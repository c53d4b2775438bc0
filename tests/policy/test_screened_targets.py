"""A call the prefilter does not clear keeps the forms it scanned as its targets only when they
are exactly its targets (one target parameter, no command): those of the full derivation. The
one-form scan and :func:`plain_path` keep their meaning in their faster spelling."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.path_forms import plain_path
from pytest_harness_audit.policy.prefilter import Prefilter, requirement, screen
from pytest_harness_audit.policy.targets import call_targets

PREFILTER = Prefilter(
    [
        r
        for r in (requirement(p, is_regex=False) for p in ("**/.env", "**/id_rsa", "https://x/**"))
        if r is not None
    ]
)

ONE_TARGET = [
    {"file_path": ".env"},
    {"file_path": "a/../.env"},
    {"file_path": "./.ENV"},
    {"file_path": "keys/id_rsa", "offset": 3, "limit": 9},
    {"file_path": "/w/.env", "old_string": "a", "new_string": "b"},
    {"file_path": "file:///w/.env", "content": "x"},
    {"url": "https://x/y", "prompt": "read it"},
    {"url": "file:///w/.env"},
    {"path": "id_rsa"},
]


@pytest.mark.parametrize("root", [None, "/w"])
@pytest.mark.parametrize("params", ONE_TARGET)
def test_kept_forms_are_the_targets(params: dict[str, Any], root: str | None) -> None:
    clear, known = screen(PREFILTER, params, root)
    assert not clear, params
    assert known == call_targets(params, root)[0], (params, root)


@pytest.mark.parametrize(
    "params",
    [
        {"pattern": ".env"},  # a search: its targets need the full derivation
        {"glob": ".env"},
        {"pattern": "KEY", "path": ".env"},  # a pattern beside a path is no target
        {"file_path": ".env", "paths": ["a"]},
        {"command": "cat .env"},
        {"code": "open('.env')"},
    ],
)
def test_other_shapes_keep_no_forms(params: dict[str, Any]) -> None:
    assert screen(PREFILTER, params, None) == (False, None)


def test_a_cleared_call_keeps_no_forms() -> None:
    assert screen(PREFILTER, {"file_path": "src/app.py", "content": "x"}, None) == (True, None)


@pytest.mark.parametrize("root", [None, "/w"])
@pytest.mark.parametrize("params", ONE_TARGET)
def test_decisions_equal_the_full_path(params: dict[str, Any], root: str | None) -> None:
    document = {
        "defaultPolicy": "allow",
        "rules": [
            {
                "id": "env",
                "name": "env",
                "decision": "deny",
                "priority": 1,
                "match": {"targetPatterns": ["**/.env", "**/id_rsa", "https://x/**"]},
            }
        ],
    }
    fast, full = Policy.from_dict(document), Policy.from_dict(document)
    full.prefilter_enabled = False
    fast.prefilter_after = 0  # the prefilter from the first call
    for tool in ("Edit", "Read", "WebFetch"):
        seen, expected = (
            fast.evaluate(tool, params, root=root),
            full.evaluate(tool, params, root=root),
        )
        assert (seen.decision, seen.rule_id, seen.targets) == (
            expected.decision,
            expected.rule_id,
            expected.targets,
        ), (tool, params)


def test_presets_are_unchanged_on_a_benign_edit() -> None:
    decided = Policy.preset("safety").evaluate(
        "Edit", {"file_path": "src/app.py", "old_string": ".env", "new_string": "x"}
    )
    assert decided.decision == "allow" and decided.targets == ("src/app.py",)


def _plain_reference(path: str) -> bool:
    """:func:`plain_path` as first written, with slices."""
    return not (
        path[:1] == "."
        or "/." in path
        or "//" in path
        or path[-1:] in ("/", ".", " ")
        or "\\" in path
        or path[:5].lower() == "file:"
        or ("_" in path and not path.islower())
    )


@settings(max_examples=200, deadline=None)
@given(path=st.text(alphabet="fFiIİlLeE:/._ \\a", max_size=8))
def test_plain_path_keeps_its_meaning(path: str) -> None:
    assert plain_path(path) == _plain_reference(path)


@pytest.mark.parametrize("path", ["FILE:/a", "File:x", "file:", "fİle:x", "fil:e", "a.txt", ""])
def test_plain_path_of_schemes(path: str) -> None:
    assert plain_path(path) == _plain_reference(path)


def test_alternatives_without_braces_are_the_pattern() -> None:
    from pytest_harness_audit.policy.search_targets import _alternatives

    assert _alternatives("**/*.py") == ["**/*.py"]
    assert _alternatives("{.env,x}/a") == [".env/a", "x/a"]


def test_simple_commands_cover_their_text() -> None:
    from pytest_harness_audit.policy.shell.simple import parse_simple

    assert parse_simple("cat a.txt | grep x") is not None
    assert parse_simple("cat a.txt $(x)") is None  # a character no token covers
