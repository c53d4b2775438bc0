"""The forms of a known value, and the automata over the values a registry knows, are worked
out once per process: every session of a template learns the same secrets, and the
substitutions alone are hundreds per value."""

from __future__ import annotations

import pytest

from pytest_harness_audit.inspect import _forms
from pytest_harness_audit.inspect._forms import piece_forms
from pytest_harness_audit.inspect.secrets import SecretRegistry

KEY = "sk-test-0a1b2c3d4e5f60718293a4b5c6d7e8f9"
OTHER = "ghp_Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"


def test_a_second_registry_of_the_same_value_reuses_its_forms() -> None:
    first = SecretRegistry()
    first.add(KEY, "API_KEY")
    assert first.scan(f"token {KEY}").findings
    forms, automata = piece_forms.cache_info(), _forms._kept_automaton.cache_info()
    second = SecretRegistry()
    second.add(KEY, "API_KEY")
    found = second.scan(f"token {KEY}").findings
    assert piece_forms.cache_info().misses == forms.misses
    after = _forms._kept_automaton.cache_info()
    assert after.hits > automata.hits and after.misses == automata.misses
    assert [f.transform for f in found] == [
        f.transform for f in first.scan(f"token {KEY}").findings
    ]


def test_the_forms_hold_substitutions_of_the_value() -> None:
    transforms = {transform for transform, _, _ in piece_forms(KEY)}
    assert "xor" in transforms and any(t.startswith("shifted_") for t in transforms)


def test_a_shared_automaton_still_names_each_registry_s_own_values() -> None:
    # the same two values learnt in the other order: each finding keeps its registry's label
    first, second = SecretRegistry(), SecretRegistry()
    first.add(KEY, "API_KEY")
    first.add(OTHER, "GH_TOKEN")
    second.add(OTHER, "GH_TOKEN")
    second.add(KEY, "API_KEY")
    for registry in (first, second):
        [finding] = registry.scan(f"token {OTHER}").findings
        assert finding.label == "GH_TOKEN"


def test_a_value_added_after_a_scan_is_found() -> None:
    registry = SecretRegistry()
    registry.add(KEY, "API_KEY")
    assert not registry.scan(f"token {OTHER}").findings
    registry.add(OTHER, "GH_TOKEN")
    [finding] = registry.scan(f"token {OTHER}").findings
    assert finding.label == "GH_TOKEN"


def test_a_set_of_values_with_too_many_forms_is_built_for_its_registry_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_forms, "KEPT_FORMS", len(piece_forms(KEY)) - 1)
    first, second = SecretRegistry(), SecretRegistry()
    for registry in (first, second):
        registry.add(KEY, "API_KEY")
        [finding] = registry.scan(f"token {KEY}").findings
        assert finding.label == "API_KEY"
    assert first._current() is not second._current()
    assert first._skeleton_automaton() is not second._skeleton_automaton()
    monkeypatch.setattr(_forms, "KEPT_FORMS", len(piece_forms(KEY)))
    third, fourth = SecretRegistry(), SecretRegistry()
    for registry in (third, fourth):
        registry.add(KEY, "API_KEY")
    assert third._current() is fourth._current()
