"""Loading policies: YAML and JSON files, the reference plugin's config, presets with extra rules,
``Policy.preset`` overrides, and the content hash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from policy_support import README_POLICY, decide, rule

import pytest_harness_audit
from pytest_harness_audit.policy import Match, Policy, Rule

BARE = {
    "defaultPolicy": "warn",
    "enforce": False,
    "rules": [
        rule(
            "no-rm",
            priority=1,
            reason="No rm",
            tools=["Bash"],
            targetPatterns=[r"rm\s+-"],
            targetPatternsAreRegex=True,
        ),
        rule("no-env", priority=5, categories=["file_read"], targetPatterns=["**/.env"]),
    ],
}

# The "Example: Full Policy Config" of the reference plugin's README.
REFERENCE_CONFIG = {
    "plugins": {
        "web4-governance": {
            "auditLevel": "verbose",
            "showR6Status": True,
            "storagePath": "~/.moltbot/extensions/web4-governance/",
            "policy": README_POLICY,
        }
    }
}


def write(path: Path, data: Any) -> Path:
    if path.suffix == ".json":
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def check_bare(p: Policy) -> None:
    assert (p.default_policy, p.enforce) == ("warn", False)
    assert [r.id for r in p.rules] == ["no-rm", "no-env"]
    assert p.rules[0] == Rule(
        "no-rm",
        "Rule no-rm",
        1,
        "deny",
        Match(tools=("Bash",), target_patterns=(r"rm\s+-",), target_patterns_are_regex=True),
        "No rm",
    )
    assert decide(p, "Bash", command="rm -f x") == ("deny", "no-rm")
    assert decide(p, "Read", file_path="/p/.env") == ("deny", "no-env")
    assert decide(p, "Read", file_path="/p/a") == ("warn", None)


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json"])
def test_load_a_bare_policy(tmp_path: Path, suffix: str) -> None:
    path = write(tmp_path / f"rules{suffix}", BARE)
    p = Policy.load(path)
    check_bare(p)
    assert p.source == str(path)
    assert p.name == "rules"
    assert Policy.load(str(path)).content_hash == p.content_hash


def test_yaml_and_json_of_the_same_policy_are_the_same_policy(tmp_path: Path) -> None:
    from_yaml = Policy.load(write(tmp_path / "a.yaml", BARE))
    from_json = Policy.load(write(tmp_path / "a.json", BARE))
    assert from_yaml.content_hash == from_json.content_hash == Policy.from_dict(BARE).content_hash


def test_from_dict(tmp_path: Path) -> None:
    check_bare(Policy.from_dict(BARE))


def test_a_policy_may_carry_a_name(tmp_path: Path) -> None:
    assert Policy.load(write(tmp_path / "f.yaml", {**BARE, "name": "team"})).name == "team"


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_load_the_reference_plugin_config(tmp_path: Path, suffix: str) -> None:
    p = Policy.load(write(tmp_path / f"moltbot{suffix}", REFERENCE_CONFIG))
    assert [r.id for r in p.rules] == ["deny-destructive-commands", "deny-secrets", "warn-network"]
    assert p.audit_level == "verbose"
    assert decide(p, "Bash", command="rm -rf /tmp") == ("deny", "deny-destructive-commands")
    assert decide(p, "Read", file_path="/project/.env") == ("deny", "deny-secrets")
    assert decide(p, "WebFetch", url="https://x") == ("warn", "warn-network")
    assert decide(p, "Read", file_path="/project/src/index.ts") == ("allow", None)
    assert p.evaluate("WebFetch", {"url": "u"}).reason == "Matched rule: Warn on network access"


def test_the_reference_config_without_a_policy_is_the_empty_policy() -> None:
    p = Policy.from_dict({"plugins": {"web4-governance": {}}})
    assert (p.default_policy, p.enforce, p.rules) == ("allow", True, ())


def test_an_empty_file_is_the_empty_policy(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    p = Policy.load(path)
    assert (p.default_policy, p.enforce, p.rules) == ("allow", True, ())


def test_json_numbers_are_read_as_json(tmp_path: Path) -> None:
    path = tmp_path / "rate.json"
    path.write_text(
        '{"rules": [{"id": "r", "name": "n", "priority": 1, "decision": "deny",'
        ' "match": {"rateLimit": {"maxCount": 2, "windowMs": 1.5e4}}}]}',
        encoding="utf-8",
    )
    rate = Policy.load(path).rules[0].match.rate_limit
    assert rate is not None
    assert rate.window_ms == 15000.0


def test_a_json_file_yaml_cannot_read_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "escaped.json"
    path.write_text('{"defaultPolicy": "deny", "description": "a\\/b"}', encoding="utf-8")
    assert Policy.load(path).default_policy == "deny"


def test_a_file_may_name_a_preset_and_add_rules(tmp_path: Path) -> None:
    path = write(
        tmp_path / "team.yaml",
        {
            "preset": "safety",
            "enforce": False,
            "rules": [
                rule(
                    "no-curl",
                    priority=0,
                    reason="No curl",
                    tools=["Bash"],
                    targetPatterns=["curl **"],
                ),
                rule("tie", decision="allow", priority=1),
            ],
        },
    )
    p = Policy.load(path)
    safety = Policy.preset("safety")
    ids = [r.id for r in p.rules]
    assert ids[0] == "no-curl"
    assert ids[1:3] == ["deny-destructive-commands", "tie"]  # tie at priority 1: preset first
    assert set(ids) == {r.id for r in safety.rules} | {"no-curl", "tie"}
    assert p.enforce is False
    assert p.default_policy == "allow"
    assert p.spec.preset == "safety"
    assert decide(p, "Bash", command="curl https://x") == ("deny", "no-curl")
    evaluation = p.evaluate("Bash", {"command": "rm -rf /"})
    assert (evaluation.rule_id, evaluation.blocked) == ("deny-destructive-commands", False)
    assert decide(p, "Bash", command="ls") == ("allow", "tie")


def test_a_preset_file_in_the_reference_wrapper(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.json",
        {"plugins": {"web4-governance": {"policy": {"preset": "strict"}}}},
    )
    assert Policy.load(path).rules == Policy.preset("strict").rules


def test_preset_appends_rules_after_the_presets_own() -> None:
    extra: list[Rule | dict[str, Any]] = [
        rule("mine-first", decision="warn", priority=0),
        Rule("tie-with-1", "Tie", 1, "allow", Match(tools=("Bash",))),
        rule("last", decision="warn", priority=99),
    ]
    p = Policy.preset("safety", default_policy="deny", enforce=False, rules=extra)
    ids = [r.id for r in p.rules]
    assert ids[:3] == ["mine-first", "deny-destructive-commands", "tie-with-1"]
    assert ids[-1] == "last"
    assert (p.default_policy, p.enforce) == ("deny", False)
    assert len(p.rules) == len(Policy.preset("safety").rules) + 3
    only_bash = Policy.preset("safety", rules=[extra[1]])
    # at the same priority the preset's rule wins
    assert decide(only_bash, "Bash", command="rm -rf /") == ("deny", "deny-destructive-commands")
    assert decide(only_bash, "Bash", command="ls") == ("allow", "tie-with-1")


def test_preset_without_overrides_is_the_preset() -> None:
    a, b = Policy.preset("safety"), Policy.preset("safety", rules=())
    assert a.content_hash == b.content_hash
    assert (a.default_policy, a.enforce) == ("allow", True)


def test_policy_is_exported_from_the_package() -> None:
    assert pytest_harness_audit.Policy is Policy
    assert pytest_harness_audit.PolicyError.__name__ == "PolicyError"


def test_to_dict_round_trips() -> None:
    p = Policy.preset("safety")
    again = Policy.from_dict(p.to_dict())
    assert again.rules == p.rules
    assert again.content_hash == p.content_hash


# -- content hash ----------------------------------------------------------------------------

BASE_RULE = rule(
    "r",
    decision="deny",
    priority=3,
    name="N",
    reason="R",
    tools=["Bash"],
    categories=["command"],
    targetPatterns=["x"],
    rateLimit={"maxCount": 2, "windowMs": 1000},
)


def with_change(path: str, value: Any) -> dict[str, Any]:
    changed: dict[str, Any] = json.loads(json.dumps(BASE_RULE))
    node = changed
    *parents, last = path.split(".")
    for key in parents:
        node = node[key]
    node[last] = value
    return changed


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("id", "r2"),
        ("name", "N2"),
        ("priority", 4),
        ("decision", "warn"),
        ("reason", "R2"),
        ("match.tools", ["Read"]),
        ("match.categories", ["file_read"]),
        ("match.targetPatterns", ["y"]),
        ("match.targetPatternsAreRegex", True),
        ("match.rateLimit", {"maxCount": 3, "windowMs": 1000}),
        ("match.rateLimit", {"maxCount": 2, "windowMs": 2000}),
    ],
)
def test_content_hash_changes_when_any_rule_field_changes(path: str, value: Any) -> None:
    base = Policy.from_dict({"rules": [BASE_RULE]}).content_hash
    changed = Policy.from_dict({"rules": [with_change(path, value)]}).content_hash
    assert len(base) == 64
    assert changed != base


def test_content_hash_covers_the_policy_level_fields_and_is_stable() -> None:
    base = Policy.from_dict({"rules": [BASE_RULE]})
    assert base.content_hash == Policy.from_dict({"rules": [BASE_RULE]}).content_hash
    for top in ({"defaultPolicy": "deny"}, {"enforce": False}, {"toolCategories": {"X": "state"}}):
        assert Policy.from_dict({"rules": [BASE_RULE], **top}).content_hash != base.content_hash
    assert Policy.from_dict({"rules": []}).content_hash != base.content_hash
