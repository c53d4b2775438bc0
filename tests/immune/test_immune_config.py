"""The ``immune:`` policy section: defaults, presets, round trip and clear errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.immune import (
    DEFAULT_IMMUNE,
    CallEvent,
    CallPattern,
    ImmuneConfig,
    RepeatedFailure,
    default_immune,
)


def test_an_empty_section_means_the_safety_defaults() -> None:
    assert ImmuneConfig.from_dict({}) == ImmuneConfig.for_preset("safety")


@pytest.mark.parametrize("preset", ["safety", "strict"])
def test_guarding_presets_are_on_with_exfiltration_flows(preset: str) -> None:
    config = ImmuneConfig.for_preset(preset)
    assert config.enabled
    assert config.thresholds.notice < config.thresholds.quarantine
    assert {f.id for f in config.triggers.flows} == {"exfiltration", "secret-then-send"}
    assert config.triggers.enforced_deny > 0
    assert isinstance(config.triggers.repeated_failure, RepeatedFailure)


@pytest.mark.parametrize("preset", ["permissive", "audit-only"])
def test_observing_presets_are_off(preset: str) -> None:
    assert not ImmuneConfig.for_preset(preset).enabled


def test_strict_escalates_sooner_than_safety() -> None:
    safety, strict = ImmuneConfig.for_preset("safety"), ImmuneConfig.for_preset("strict")
    assert strict.thresholds.quarantine < safety.thresholds.quarantine
    assert strict.thresholds.notice < safety.thresholds.notice


def test_unknown_preset_is_a_policy_error() -> None:
    with pytest.raises(PolicyError, match="unknown preset 'paranoid'"):
        ImmuneConfig.for_preset("paranoid")


def test_default_immune_gives_a_private_copy() -> None:
    copied = default_immune("safety")
    copied["triggers"]["flows"].clear()
    assert DEFAULT_IMMUNE["safety"]["triggers"]["flows"]


@pytest.mark.parametrize("preset", sorted(DEFAULT_IMMUNE))
def test_to_dict_reads_back_equal(preset: str) -> None:
    config = ImmuneConfig.for_preset(preset)
    assert ImmuneConfig.from_dict(config.to_dict()) == config


def test_a_full_section_is_read_as_written() -> None:
    config = ImmuneConfig.from_dict(
        {
            "enabled": True,
            "window": {"seconds": 30.5},
            "triggers": {
                "warn": 0.5,
                "repeated_failure": {"weight": 3, "count": 4},
                "flows": [
                    {
                        "id": "read-then-send",
                        "first": {"tools": ["Read"], "statuses": ["success"]},
                        "then": {"categories": ["message"]},
                        "weight": 7,
                    }
                ],
            },
            "thresholds": {"notice": 1, "quarantine": 1},
            "quarantine_scope": "tool",
        }
    )
    assert config.window.calls is None and config.window.seconds == 30.5
    assert config.triggers.warn == 0.5
    assert config.triggers.enforced_deny == 0.0, "a present triggers mapping lists all triggers"
    assert config.triggers.repeated_failure == RepeatedFailure(weight=3.0, count=4)
    (flow,) = config.triggers.flows
    assert flow.name == "flow:read-then-send"
    assert flow.first == CallPattern(tools=("Read",), statuses=("success",))
    assert config.quarantine_scope == "tool"


def test_call_patterns_and_within_or_across_lists() -> None:
    pattern = CallPattern(categories=("network", "message"), alerts=("credential_access",))
    event = CallEvent("a", "WebFetch", "network", "h", "allow", True, "success", ())
    assert not pattern.matches(event)
    assert pattern.matches(
        CallEvent("a", "WebFetch", "network", "h", "allow", True, "success", ("credential_access",))
    )
    assert CallPattern().matches(event), "an empty pattern matches any call"


_BASE: dict[str, Any] = {
    "window": {"calls": 10},
    "triggers": {"flows": [{"id": "f", "first": {"tools": ["Read"]}, "then": {}, "weight": 1}]},
    "thresholds": {"notice": 1, "quarantine": 2},
}


def _with(path: str, value: Any) -> Any:
    data = copy.deepcopy(_BASE)
    *parents, last = path.split(".")
    node = data
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return data


@pytest.mark.parametrize(
    ("data", "field", "shown"),
    [
        ("on", "immune", "'on'"),
        ({"enable": True}, "immune.enable", "unknown key 'enable'"),
        (_with("enabled", "yes"), "immune.enabled", "'yes'"),
        (_with("window", {}), "immune.window", "empty"),
        (_with("window", {"calls": 10, "minutes": 5}), "immune.window.minutes", "'minutes'"),
        (_with("window.calls", 0), "immune.window.calls", "0"),
        (_with("window.calls", 2.5), "immune.window.calls", "2.5"),
        (_with("window.calls", True), "immune.window.calls", "True"),
        (_with("window.seconds", -1), "immune.window.seconds", "-1"),
        (_with("window.seconds", float("nan")), "immune.window.seconds", "nan"),
        (_with("triggers.deny", 1), "immune.triggers.deny", "unknown key 'deny'"),
        (_with("triggers.warn", "high"), "immune.triggers.warn", "'high'"),
        (_with("triggers.warn", -0.5), "immune.triggers.warn", "-0.5"),
        (_with("triggers.repeated_failure", 3), "immune.triggers.repeated_failure", "3"),
        (
            _with("triggers.repeated_failure", {"weight": 1}),
            "immune.triggers.repeated_failure.count",
            "required",
        ),
        (
            _with("triggers.repeated_failure", {"weight": 1, "count": 0}),
            "immune.triggers.repeated_failure.count",
            "0",
        ),
        (_with("triggers.flows", {"id": "f"}), "immune.triggers.flows", "list"),
        (_with("triggers.flows.0.id", ""), "immune.triggers.flows[0].id", "''"),
        (
            _with("triggers.flows.0.then", {"category": ["network"]}),
            "immune.triggers.flows[0].then.category",
            "unknown key 'category'",
        ),
        (
            _with("triggers.flows.0.first", {"alerts": ["secret_read"]}),
            "immune.triggers.flows[0].first.alerts",
            "'secret_read'",
        ),
        (
            _with("triggers.flows.0.first", {"tools": "Read"}),
            "immune.triggers.flows[0].first.tools",
            "'Read'",
        ),
        (
            _with("triggers.flows.0.first", {"tools": []}),
            "immune.triggers.flows[0].first.tools",
            "[]",
        ),
        (
            _with("triggers.flows.0.then", {"statuses": ["denied"]}),
            "immune.triggers.flows[0].then.statuses",
            "'denied'",
        ),
        (
            _with("triggers.flows", [{"id": "f", "first": {}, "then": {}}]),
            "immune.triggers.flows[0].weight",
            "required",
        ),
        (
            _with(
                "triggers.flows",
                [
                    {"id": "f", "first": {}, "then": {}, "weight": 1},
                    {"id": "f", "first": {}, "then": {}, "weight": 2},
                ],
            ),
            "immune.triggers.flows[1].id",
            "duplicate flow id 'f'",
        ),
        (_with("thresholds", {"notice": 1}), "immune.thresholds.quarantine", "required"),
        (_with("thresholds.notice", 0), "immune.thresholds.notice", "0"),
        (_with("thresholds.quarantine", 0.5), "immune.thresholds.quarantine", "0.5"),
        (_with("quarantine_scope", "agent"), "immune.quarantine_scope", "'agent'"),
    ],
)
def test_bad_config_names_source_field_and_value(data: Any, field: str, shown: str) -> None:
    with pytest.raises(PolicyError) as caught:
        ImmuneConfig.from_dict(data, source="policy.yaml", line=7)
    error = caught.value
    assert error.field == field
    assert error.source == "policy.yaml"
    message = str(error)
    assert message.startswith(f"policy.yaml:7, field '{field}': ")
    assert shown in message


def test_known_categories_catch_a_misspelt_category() -> None:
    data = _with("triggers.flows.0.then", {"categories": ["netwrok"]})
    ImmuneConfig.from_dict(data)  # without a category list any name is accepted
    with pytest.raises(PolicyError, match="unknown name 'netwrok'") as caught:
        ImmuneConfig.from_dict(data, known_categories={"network", "file_read"})
    assert caught.value.field == "immune.triggers.flows[0].then.categories"
