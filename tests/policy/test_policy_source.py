"""The one policy-source resolver: a Policy, a preset name, a file path, or None."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.source import resolve_policy

POLICY = "defaultPolicy: deny\nenforce: true\nrules: []\n"


def test_none_is_the_safety_preset() -> None:
    assert resolve_policy(None).content_hash == Policy.preset("safety").content_hash


def test_a_policy_is_used_as_it_is() -> None:
    policy = Policy.preset("strict")
    assert resolve_policy(policy) is policy


def test_a_preset_name_with_overrides() -> None:
    policy = resolve_policy("safety", enforce=False, default_policy="warn")
    assert (policy.name, policy.enforce, policy.default_policy) == ("safety", False, "warn")
    assert policy.spec.preset == "safety"


def test_a_relative_file_is_read_from_base_dir(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(POLICY, encoding="utf-8")
    policy = resolve_policy("rules.yaml", base_dir=tmp_path)
    assert (policy.name, policy.default_policy, policy.enforce) == ("rules", "deny", True)
    changed = resolve_policy(tmp_path / "rules.yaml", enforce=False)
    assert (changed.name, changed.enforce, changed.default_policy) == ("rules", False, "deny")


def test_a_path_object_is_never_a_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PolicyError, match="not found"):
        resolve_policy(Path("safety"))


def test_a_name_that_is_neither_names_the_value(tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        resolve_policy("safe", base_dir=tmp_path)
    message = str(caught.value)
    assert "'safe'" in message
    assert "not found" in message
    assert "Available: permissive, safety, strict, audit-only" in message


def test_overrides_apply_to_a_policy_object() -> None:
    policy = resolve_policy(Policy.preset("permissive"), default_policy="deny")
    assert (policy.name, policy.default_policy) == ("permissive", "deny")


def test_anything_else_is_refused() -> None:
    with pytest.raises(PolicyError, match="expected a Policy, a preset name or a policy file"):
        resolve_policy(3)  # type: ignore[arg-type]
