"""Whatever a policy document holds, loading it gives a Policy or one PolicyError — never another
exception."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy import Policy

KEYS = [
    "defaultPolicy",
    "enforce",
    "rules",
    "preset",
    "toolCategories",
    "auditLevel",
    "plugins",
    "web4-governance",
    "policy",
    "id",
    "name",
    "priority",
    "decision",
    "reason",
    "match",
    "tools",
    "categories",
    "targetPatterns",
    "targetPatternsAreRegex",
    "rateLimit",
    "maxCount",
    "windowMs",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 5),
    st.floats(allow_nan=True),
    st.sampled_from(["allow", "deny", "warn", "safety", "nope", "Bash", "file_read", "(", "**"]),
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), children, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(document=DOCUMENTS)
def test_any_document_loads_or_raises_policy_error(document: Any) -> None:
    try:
        Policy.from_dict(document)
    except PolicyError as error:
        assert "\n" not in str(error)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(alphabet="{}[]:,-\"' \nab1#&*!|>", max_size=40))
def test_any_file_text_loads_or_raises_policy_error(tmp_path: Path, text: str) -> None:
    for suffix in (".yaml", ".json"):
        path = tmp_path / f"p{suffix}"
        path.write_text(text, encoding="utf-8")
        try:
            Policy.load(path)
        except PolicyError as error:
            assert str(error).startswith(str(path))


@pytest.mark.parametrize(
    "document",
    [
        {"plugins": {"web4-governance": {"policy": "safety"}}},
        {"plugins": {"web4-governance": {"policy": [1]}}},
        {"rules": [{"id": "r", "name": "n", "priority": 1, "decision": "deny", "match": None}]},
        {"toolCategories": {"X": 1}},
        {"preset": None},
    ],
)
def test_documents_that_once_escaped_validation(document: Any) -> None:
    with pytest.raises(PolicyError):
        Policy.from_dict(document)


PARAM_KEYS = ["file_path", "path", "pattern", "command", "url", "paths", "source", "to", "x"]
PARAM_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=30)),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=3), children, max_size=2)
    ),
    max_leaves=6,
)
SAFETY = Policy.preset("safety")


@settings(max_examples=150, deadline=None)
@given(
    tool=st.sampled_from(["Bash", "Read", "Write", "mcp__fs__write_file", "WebFetch", "X"]),
    params=st.dictionaries(st.sampled_from(PARAM_KEYS), PARAM_VALUES, max_size=4),
    root=st.sampled_from([None, "/ws", "/ws/", "/"]),
)
def test_any_parameters_evaluate(tool: str, params: dict[str, Any], root: str | None) -> None:
    evaluation = SAFETY.evaluate(tool, params, root=root)
    assert evaluation.decision in ("allow", "deny", "warn")
    assert all(isinstance(target, str) for target in evaluation.targets)
    assert evaluation.to_dict()["decision"] == evaluation.decision
