"""Parameter values told apart as mappings or not without the ABC's check for JSON types: every
other mapping type is still walked (an inner call inside a read-only proxy is judged)."""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.embedded_calls import named_embedded_calls
from pytest_harness_audit.policy.param_targets import is_mapping


@pytest.mark.parametrize(
    "value", [{}, {"a": 1}, OrderedDict(a=1), MappingProxyType({"a": 1})], ids=repr
)
def test_mappings(value: object) -> None:
    assert is_mapping(value)


@pytest.mark.parametrize(
    "value", ["x", b"x", 1, 1.5, True, None, [], (), {1}, frozenset()], ids=repr
)
def test_not_mappings(value: object) -> None:
    assert not is_mapping(value)


def test_an_inner_call_inside_a_proxy_is_found_and_judged() -> None:
    inner = MappingProxyType({"name": "Bash", "arguments": {"command": "rm -rf /srv/data"}})
    found = named_embedded_calls({"calls": [inner], "timeout": 30})
    assert found == [("Bash", {"command": "rm -rf /srv/data"})]
    evaluation = Policy.preset("safety").evaluate("mcp__hub__execute", {"calls": [inner]})
    assert evaluation.decision == "deny"
