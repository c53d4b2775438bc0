"""The forms of a known value are worked out once per process: every session of a template
learns the same secrets, and the substitutions alone are hundreds per value."""

from __future__ import annotations

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
