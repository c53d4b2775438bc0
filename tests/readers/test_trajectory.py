"""Trajectory matching: agentevals' modes and argument modes, per-tool overrides, matchers
inside expected parameters, and a failure message naming the first differing call and field."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest

from pytest_harness_audit import Policy
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.readers.trajectory import (
    Step,
    expected_steps,
    step_matches,
    trajectory_matches,
)
from pytest_harness_audit.readers.trajectory_diff import difference
from pytest_harness_audit.session.harness import Harness

GIT_LOG = Step("Bash", {"command": "git log", "timeout": 30})
READ = Step("Read", {"file_path": "a.py"})


def steps(*items: Any) -> list[Step]:
    return expected_steps(list(items))


# -- argument modes, as agentevals defines them (from the recorded call's side) ------------------
@pytest.mark.parametrize(
    ("expected", "args", "ok"),
    [
        ({"command": "git log", "timeout": 30}, "exact", True),
        ({"command": "git log"}, "exact", False),
        ({"command": "git log", "timeout": 30, "cwd": "."}, "exact", False),
        # superset: the recorded parameters hold every expected one (extras recorded are fine)
        ({"command": "git log"}, "superset", True),
        ({"command": "git log", "cwd": "."}, "superset", False),
        ({"command": "git status"}, "superset", False),
        # subset: every recorded parameter is expected (the expected may list more)
        ({"command": "git log", "timeout": 30, "cwd": "."}, "subset", True),
        ({"command": "git log"}, "subset", False),
        ({"command": "git log", "timeout": 31, "cwd": "."}, "subset", False),
        ({"command": "anything"}, "ignore", True),
    ],
)
def test_argument_modes(expected: dict[str, Any], args: str, ok: bool) -> None:
    assert step_matches(Step("Bash", expected), GIT_LOG, args) is ok


def test_tool_names_always_count() -> None:
    assert not step_matches(Step("Read", None), GIT_LOG, "ignore")
    assert step_matches(Step("Bash", None), GIT_LOG, "exact")


# -- per-tool overrides --------------------------------------------------------------------------
def test_per_tool_modes_with_a_default() -> None:
    expected = steps(("Read", {"file_path": "a.py"}), ("Bash", {"command": "other"}))
    actual = [READ, GIT_LOG]
    assert trajectory_matches(expected, actual, "strict", {"Bash": "ignore"})
    # tools not named use exact (agentevals' default) …
    loose_read = steps(("Read", {}), ("Bash", {"command": "other"}))
    assert not trajectory_matches(loose_read, actual, "strict", {"Bash": "ignore"})
    # … or the "*" entry
    assert trajectory_matches(loose_read, actual, "strict", {"Bash": "ignore", "*": "superset"})
    assert not trajectory_matches(expected, actual, "strict", {"Bash": "exact", "*": "ignore"})


def test_per_tool_callable_override() -> None:
    def same_program(recorded: Any, expected: Any) -> bool:
        return bool(recorded["command"].split()[0] == expected["command"].split()[0])

    assert trajectory_matches(
        steps(("Bash", {"command": "git status"})), [GIT_LOG], "strict", {"Bash": same_program}
    )
    assert not trajectory_matches(
        steps(("Bash", {"command": "ls"})), [GIT_LOG], "strict", {"Bash": same_program}
    )
    message = difference(
        steps(("Bash", {"command": "ls"})), [GIT_LOG], "strict", {"Bash": same_program}
    )
    assert message == "call 1 (Bash): parameters rejected by args['Bash']"


# -- matchers inside expected parameters ---------------------------------------------------------
@pytest.mark.parametrize(
    ("matcher", "ok"),
    [
        (ANY, True),
        (str, True),
        (int, False),
        (lambda c: c.startswith("git "), True),
        (lambda c: c.startswith("rm "), False),
        (re.compile(r"git (log|status)"), True),
        (re.compile(r"git"), False),  # a full match, not a search
        ("git log", True),
        ("git status", False),
    ],
)
def test_value_matchers(matcher: Any, ok: bool) -> None:
    expected = steps(("Bash", {"command": matcher}))
    assert trajectory_matches(expected, [GIT_LOG], "strict", "superset") is ok


def test_a_matcher_that_raises_is_a_mismatch_with_its_reason() -> None:
    expected = steps(("Bash", {"timeout": lambda t: t.startswith("3")}))
    assert not trajectory_matches(expected, [GIT_LOG], "strict", "superset")
    message = difference(expected, [GIT_LOG], "strict", "superset")
    assert message.startswith("call 1 (Bash): field 'timeout': matcher <")
    assert "raised AttributeError" in message and "on 30" in message


def test_nested_values_are_compared_recursively() -> None:
    recorded = Step("Edit", {"file_path": "a.py", "edits": [{"old": "a", "new": "b", "n": 1}]})
    wanted = ("Edit", {"file_path": ANY, "edits": [{"old": "a", "new": str}]})
    assert trajectory_matches(steps(wanted), [recorded], "strict", "superset")
    # exact applies inside nested mappings too: the recorded "n" is not expected
    assert not trajectory_matches(steps(wanted), [recorded], "strict", "exact")
    assert difference(steps(wanted), [recorded], "strict", "exact") == (
        "call 1 (Edit): field 'edits[0].n': recorded 1, not expected"
    )
    wrong = ("Edit", {"edits": [{"old": "x"}]})
    assert difference(steps(wrong), [recorded], "strict", "superset") == (
        "call 1 (Edit): field 'edits[0].old': expected 'x', got 'a'"
    )
    short = ("Edit", {"edits": []})
    assert "field 'edits': expected 0 items, got 1" in difference(
        steps(short), [recorded], "strict", "superset"
    )


# -- the difference message ----------------------------------------------------------------------
def test_strict_names_the_first_differing_call_and_field() -> None:
    expected = steps("Read", ("Bash", {"command": "git status"}))
    actual = [READ, Step("Bash", {"command": "git log"})]
    assert difference(expected, actual, "strict", "exact") == (
        "call 2 (Bash): field 'command': expected 'git status', got 'git log'"
    )
    assert difference(steps("Read", "Read"), actual, "strict", "ignore") == (
        "call 2 (Bash): expected tool Read, got Bash"
    )
    assert difference(steps("Read"), actual, "strict", "ignore") == (
        "call 2 (Bash): recorded, not expected"
    )
    assert difference(steps("Read", "Bash", "Glob"), actual, "strict", "ignore") == (
        "call 3: expected Glob(), not recorded"
    )
    missing = steps(("Bash", {"command": "git log", "cwd": "."}))
    assert difference(missing, actual[1:], "strict", "superset") == (
        "call 1 (Bash): field 'cwd': expected '.', not recorded"
    )


def test_unordered_names_the_unmatched_call_and_the_closest_candidate() -> None:
    actual = [
        Step("Bash", {"command": "ls", "timeout": 5}),
        READ,
        Step("Bash", {"command": "git log", "timeout": 30}),
    ]
    expected = steps(
        ("Read", {"file_path": "a.py"}),
        ("Bash", {"command": "ls", "timeout": 5}),
        ("Bash", {"command": "git status", "timeout": 30}),
    )
    assert not trajectory_matches(expected, actual, "unordered", "exact")
    assert difference(expected, actual, "unordered", "exact") == (
        "expected call 3 Bash(command='git status', timeout=30) was not recorded; closest "
        "unmatched recorded call 3 (Bash): field 'command': expected 'git status', got 'git log'"
    )
    assert difference(steps("Glob"), actual, "superset", "ignore") == (
        "expected call 1 Glob() was not recorded; no unmatched recorded call of Glob"
    )
    assert difference(steps("Read"), actual, "subset", "ignore") == (
        "recorded call 1 Bash(command='ls', timeout=5) was not expected; "
        "no unmatched expected call of Bash"
    )


def test_modes_over_call_lists() -> None:
    actual = [READ, GIT_LOG]
    assert trajectory_matches(steps("Bash", "Read"), actual, "unordered", "ignore")
    assert not trajectory_matches(steps("Bash", "Read"), actual, "strict", "ignore")
    assert trajectory_matches(steps("Bash"), actual, "superset", "ignore")
    assert not trajectory_matches(steps("Bash"), actual, "subset", "ignore")
    assert trajectory_matches(steps("Bash", "Read", "Glob"), actual, "subset", "ignore")
    assert not trajectory_matches(steps("Bash", "Read", "Glob"), actual, "superset", "ignore")
    # one recorded call cannot satisfy two expected ones
    assert not trajectory_matches(steps("Bash", "Bash"), actual, "superset", "ignore")


# -- bad input: one line naming the argument -----------------------------------------------------
@pytest.mark.parametrize(
    ("expected", "mode", "args", "message"),
    [
        (["Read"], "sorted", "ignore", "mode must be one of strict, unordered, subset, superset"),
        (["Read"], "strict", "fuzzy", "args must be one of exact, ignore, subset, superset"),
        (["Read"], "strict", {"Bash": "fuzzy"}, "args['Bash'] must be one of"),
        (["Read"], "strict", {"Bash": 3}, "args['Bash'] must be one of"),
        (["Read"], "strict", {3: "exact"}, "args: keys must be tool names"),
        (["Read"], "strict", 3, "args must be one of"),
        (
            [("Bash", {"command": {1, 2}})],
            "strict",
            "exact",
            "expected[0] (Bash) params['command']",
        ),
        ([("Bash", {"x": [object()]})], "strict", "exact", "expected[0] (Bash) params['x'][0]"),
        ([42], "strict", "exact", "expected[0]: use a tool name"),
        ("Read", "strict", "exact", "expected: a list of calls"),
    ],
)
def test_bad_input_is_one_line_naming_the_argument(
    tmp_path: Path, expected: Any, mode: str, args: Any, message: str
) -> None:
    harness = Harness.create(tmp_path, policy=Policy.from_dict({"defaultPolicy": "allow"}))
    try:
        with pytest.raises(UsageError) as caught:
            harness.assert_trajectory(expected, mode=mode, args=args)
    finally:
        harness.close()
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


# -- through a real session ----------------------------------------------------------------------
def test_assert_trajectory_on_a_session(tmp_path: Path) -> None:
    harness = Harness.create(
        tmp_path, template="python-service", policy=Policy.from_dict({"defaultPolicy": "allow"})
    )
    try:
        harness.call("Read", file_path="README.md")
        harness.call("Bash", command="git status")
        harness.assert_trajectory(
            ["Read", ("Bash", {"command": lambda c: c.startswith("git ")})], args="superset"
        )
        harness.assert_trajectory(
            [("Read", {"file_path": ANY}), ("Bash", {"command": "ls"})],
            args={"Bash": "ignore", "*": "exact"},
        )
        with pytest.raises(AssertionError) as caught:
            harness.assert_trajectory(["Read", ("Bash", {"command": "git log"})], args="superset")
    finally:
        harness.close()
    first, *rest = str(caught.value).splitlines()
    assert first == (
        "trajectory does not match (mode=strict, args=superset): "
        "call 2 (Bash): field 'command': expected 'git log', got 'git status'"
    )
    assert "  ✓ 1: Read(file_path='README.md')" in rest
    assert any(line.startswith("  ✗ 2: Bash(command='git status'") for line in rest)


def test_per_tool_list_of_keys_compares_only_those() -> None:
    recorded = Step("Edit", {"file_path": "a.py", "options": {"mode": "fast", "n": 1}})
    wanted = steps(("Edit", {"file_path": "a.py", "options": {"mode": "fast", "n": 2}}))
    assert not trajectory_matches(wanted, [recorded], "strict", "exact")
    assert trajectory_matches(wanted, [recorded], "strict", {"Edit": ["file_path", "options.mode"]})
    assert difference(wanted, [recorded], "strict", {"Edit": ["options.n"]}) == (
        "call 1 (Edit): field 'options.n': expected 2, got 1"
    )
    assert difference(wanted, [recorded], "strict", {"Edit": ["options.depth", "timeout"]}) == (
        "no difference"
    )
    extra = steps(("Edit", {"timeout": 3}))
    assert difference(extra, [recorded], "strict", {"Edit": ["timeout"]}) == (
        "call 1 (Edit): field 'timeout': expected 3, not recorded"
    )


@pytest.mark.parametrize("keys", [[], [""], ["file_path", 3]])
def test_a_bad_list_of_keys_is_refused(keys: list[Any]) -> None:
    with pytest.raises(UsageError, match=r"args\['Edit'\] must be one of .* or a list of keys"):
        trajectory_matches(steps("Edit"), [], "strict", {"Edit": keys})
