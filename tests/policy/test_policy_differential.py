"""The compiled engine (RE2 sets, per-tool index, exact-string shortcut) against a naive evaluator
written straight from DESIGN §4, on random policies and calls."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from policy_support import reference_match

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.categories import mcp_tool_parts
from pytest_harness_audit.policy.param_targets import is_path_like
from pytest_harness_audit.policy.sensitive import is_credential_path
from pytest_harness_audit.policy.targets import call_targets

FAST = 30  # examples in the default run; the slow variant tries SLOW
SLOW = 100  # as many as the default run tried before it was split
GLOBS = ["**/.env", "*.py", "src/**", "/p/*", "**/*secret*", "a?c", "exact.txt", "**", "/p/.env"]
REGEXES = ["^rm", r"\.env$", "secret", "(?i)SOUL", "foo(?=bar)", "x{2}", r"(\w)\1"]
TOOLS = ["Bash", "Read", "Write", "WebFetch", "mcp__fs__read_file", "mcp__x__y", "Custom", "Grep"]
CATEGORIES = ["file_read", "file_write", "command", "network", "mcp", "credential_access"]
KEYS = ["file_path", "path", "command", "url", "pattern", "repo_path"]
VALUES = [
    "/p/.env",
    "src/a.py",
    "src/../.env",
    "rm -rf /",
    "cat ~/.ssh/id_rsa",
    "foobar",
    "xx",
    "abc",
    "aac",
    "exact.txt",
    "/p/SOUL.md",
    "my_secret",
    "/p/a.py",
]


@st.composite
def rules(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for index in range(draw(st.integers(0, 6))):
        match: dict[str, Any] = {}
        if draw(st.booleans()):
            match["tools"] = draw(st.lists(st.sampled_from(TOOLS), max_size=3, unique=True))
        if draw(st.booleans()):
            match["categories"] = draw(
                st.lists(st.sampled_from(CATEGORIES), max_size=2, unique=True)
            )
        if draw(st.booleans()):
            is_regex = draw(st.booleans())
            pool = REGEXES if is_regex else GLOBS
            match["targetPatterns"] = draw(st.lists(st.sampled_from(pool), max_size=3))
            match["targetPatternsAreRegex"] = is_regex
        out.append(
            {
                "id": f"r{index}",
                "name": f"R{index}",
                "priority": draw(st.integers(0, 3)),
                "decision": draw(st.sampled_from(["allow", "deny", "warn"])),
                "match": match,
            }
        )
    return out


calls = st.lists(
    st.tuples(
        st.sampled_from(TOOLS),
        st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2),
    ),
    min_size=1,
    max_size=8,
)


def naive_decision(
    document: dict[str, Any], category: str, tool: str, params: dict[str, Any]
) -> str | None:
    """The id of the first matching rule, or ``None`` for the default.

    A call with a command is a credential access by the files its reading found (not by the
    command's text); any other call by any of its targets. A tool with no category (``unknown``,
    ``mcp``) takes the deny of a rule on commands when it is given a ``command`` (it may run it),
    else the deny of a rule on writes of a path it names, when a rule names ``file_write``
    without ``command``."""
    found = naive_first(document, category, tool, params)
    by_id = {rule["id"]: rule for rule in document["rules"]}
    if category not in ("unknown", "mcp"):
        return found
    if found is not None and by_id[found]["decision"] == "deny":
        return found
    command = params.get("command")
    if isinstance(command, str) and command.strip():
        seen = naive_first(document, "command", tool, params)
        if seen is not None and by_id[seen]["decision"] == "deny":
            return seen
    wants_writes = any(
        "file_write" in rule["match"].get("categories", ())
        and "command" not in rule["match"].get("categories", ())
        for rule in document["rules"]
    )
    if not wants_writes:
        return found
    targets, _ = call_targets(params)
    paths = [t for t in dict.fromkeys(targets) if "://" not in t and is_path_like(t)]
    for path in paths[:16]:
        seen = naive_first(document, "file_write", tool, {"file_path": path})
        if seen is not None and by_id[seen]["decision"] == "deny":
            return seen
    return found


def naive_first(
    document: dict[str, Any], category: str, tool: str, params: dict[str, Any]
) -> str | None:
    """The id of the first rule matching the call in ``category``, or ``None``."""
    targets, files = call_targets(params)
    categories = {category}
    if mcp_tool_parts(tool) is not None:
        categories.add("mcp")
    if any(is_credential_path(t) for t in (targets if files is None else files)):
        categories.add("credential_access")
    for rule in sorted(document["rules"], key=lambda r: r["priority"]):
        match = rule["match"]
        if "tools" in match and tool not in match["tools"]:
            continue
        if "categories" in match and not categories & set(match["categories"]):
            continue
        if "targetPatterns" in match:
            if match["targetPatternsAreRegex"]:
                found = any(re.search(p, t) for p in match["targetPatterns"] for t in targets)
            else:
                found = any(reference_match(p, t) for p in match["targetPatterns"] for t in targets)
            if not found:
                continue
        return str(rule["id"])
    return None


def _agreement(examples: int) -> Any:
    @settings(max_examples=examples, deadline=None)
    @given(
        rule_list=rules(),
        call_list=calls,
        tool_categories=st.sampled_from([{}, {"Custom": "network"}, {"mcp__fs__*": "file_write"}]),
    )
    def check(
        rule_list: list[dict[str, Any]],
        call_list: list[tuple[str, dict[str, Any]]],
        tool_categories: dict[str, str],
    ) -> None:
        document = {"rules": rule_list, "toolCategories": tool_categories}
        policy = Policy.from_dict(document)
        for tool, params in call_list:
            expected = naive_decision(document, policy.category_of(tool), tool, params)
            evaluation = policy.evaluate(tool, params)
            assert evaluation.rule_id == expected, (tool, params)
            if expected is None:
                assert evaluation.decision == "allow"
            else:
                decision = next(r["decision"] for r in rule_list if r["id"] == expected)
                assert evaluation.decision == decision

    return check


def test_the_engine_agrees_with_a_naive_evaluator() -> None:
    _agreement(FAST)()


@pytest.mark.slow
def test_the_engine_agrees_with_a_naive_evaluator_many() -> None:
    _agreement(SLOW)()
