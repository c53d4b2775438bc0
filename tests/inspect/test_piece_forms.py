"""The forms of a known value are worked out once per process, and the automata over a set of
values once per set: every session of a template learns the same secrets, and the substitutions
alone are hundreds per value."""

from __future__ import annotations

import pytest

from pytest_harness_audit.inspect import _forms
from pytest_harness_audit.inspect._forms import piece_forms
from pytest_harness_audit.inspect.secrets import SecretRegistry

KEY = "sk-test-0a1b2c3d4e5f60718293a4b5c6d7e8f9"


def test_a_second_registry_of_the_same_value_reuses_its_forms() -> None:
    first = SecretRegistry()
    first.add(KEY, "API_KEY")
    assert first.scan(f"token {KEY}").findings
    before = piece_forms.cache_info()
    second = SecretRegistry()
    second.add(KEY, "API_KEY")
    found = second.scan(f"token {KEY}").findings
    after = piece_forms.cache_info()
    assert after.hits > before.hits and after.misses == before.misses
    assert [f.transform for f in found] == [
        f.transform for f in first.scan(f"token {KEY}").findings
    ]


def test_the_forms_hold_substitutions_of_the_value() -> None:
    transforms = {transform for transform, _, _ in piece_forms(KEY)}
    assert "xor" in transforms and any(t.startswith("shifted_") for t in transforms)


OTHER = "ghp_Zq8vN3mT5rL0wX2cY7bK4dJ9hF6sA1eP"


def _registry(*pairs: tuple[str, str]) -> SecretRegistry:
    registry = SecretRegistry()
    for value, label in pairs:
        registry.add(value, label)
    return registry


def test_registries_of_the_same_values_share_their_automata() -> None:
    first = _registry((KEY, "API_KEY"), (OTHER, "GH_TOKEN"))
    second = _registry((KEY, "API_KEY"), (OTHER, "GH_TOKEN"))
    text = f"a {OTHER} b {KEY[::-1]}"
    assert [f.label for f in first.scan(text).findings] == ["GH_TOKEN", "API_KEY"]
    assert second._current() is first._current()
    assert second._skeleton_automaton() is first._skeleton_automaton()
    assert second.scan(text).findings == first.scan(text).findings


def test_the_same_values_in_another_order_name_each_its_own_secret() -> None:
    forward = _registry((KEY, "API_KEY"), (OTHER, "GH_TOKEN"))
    backward = _registry((OTHER, "GH_TOKEN"), (KEY, "API_KEY"))
    assert backward._current() is not forward._current()
    for registry in (forward, backward):
        found = registry.scan(f"x {KEY} y").findings
        assert [f.label for f in found] == ["API_KEY"]


def test_a_value_one_registry_learns_later_is_not_the_other_s() -> None:
    first = _registry((KEY, "API_KEY"))
    second = _registry((KEY, "API_KEY"))
    assert first._current() is second._current()
    first.add(OTHER, "GH_TOKEN")
    assert [f.label for f in first.scan(f"{OTHER}").findings] == ["GH_TOKEN"]
    assert not second.scan(f"{OTHER}").findings
    assert first._current() is not second._current()


def test_a_set_of_values_with_too_many_forms_is_built_for_its_registry_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_forms, "KEPT_FORMS", len(piece_forms(KEY)) - 1)
    first = _registry((KEY, "API_KEY"))
    second = _registry((KEY, "API_KEY"))
    assert first._current() is not second._current()
    assert [f.label for f in second.scan(KEY).findings] == ["API_KEY"]
