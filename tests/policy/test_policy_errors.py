"""Bad input: one PolicyError naming the file, the line where known, the rule id and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from policy_support import rule

from pytest_harness_audit.errors import HarnessAuditError, PolicyError
from pytest_harness_audit.policy import Policy


def load_error(tmp_path: Path, text: str, name: str = "policy.yaml") -> PolicyError:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyError) as caught:
        Policy.load(path)
    error = caught.value
    assert isinstance(error, HarnessAuditError)
    assert error.source == str(path)
    assert str(error).startswith(str(path))
    assert "\n" not in str(error)
    return error


def dict_error(data: Any) -> PolicyError:
    with pytest.raises(PolicyError) as caught:
        Policy.from_dict(data)
    assert "\n" not in str(caught.value)
    return caught.value


YAML_RULES = """\
defaultPolicy: allow
rules:
  - id: first
    name: First
    priority: 1
    decision: deny
    match: {{tools: [Bash]}}
  - id: second
{second}
"""


def second_rule(**fields: str) -> str:
    base = {"name": "Second", "priority": "2", "decision": "warn", "match": "{}"}
    base.update(fields)
    return "\n".join(f"    {k}: {v}" for k, v in base.items() if v != "<absent>")


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"decision": "block"}, "decision", "allow, deny, warn"),
        ({"priority": '"2"'}, "priority", "integer"),
        ({"priority": "true"}, "priority", "integer"),
        ({"priority": "1.5"}, "priority", "integer"),
        ({"name": "[a]"}, "name", "string"),
        ({"reason": "{x: 1}"}, "reason", "string"),
        ({"colour": "red"}, "colour", "unknown key"),
        ({"name": "<absent>"}, "name", "missing"),
        ({"priority": "<absent>"}, "priority", "missing"),
        ({"decision": "<absent>"}, "decision", "missing"),
        ({"match": "<absent>"}, "match", "missing"),
        ({"match": "{tools: Bash}"}, "match.tools", "list of strings"),
        ({"match": "{tools: [1]}"}, "match.tools", "list of strings"),
        ({"match": "{categories: [files]}"}, "match.categories", "unknown category"),
        ({"match": "{targetPatterns: x}"}, "match.targetPatterns", "list of strings"),
        ({"match": "{targetPatternsAreRegex: yes please}"}, "match.targetPatternsAreRegex", "true"),
        ({"match": "{glob: ['*']}"}, "glob", "unknown key"),
        (
            {"match": "{rateLimit: {maxCount: 0, windowMs: 5}}"},
            "match.rateLimit.maxCount",
            "positive",
        ),
        ({"match": "{rateLimit: {maxCount: 1}}"}, "match.rateLimit.windowMs", "positive"),
        ({"match": "{rateLimit: {maxCount: 1, windowMs: 5, burst: 2}}"}, "burst", "unknown key"),
        ({"match": "{rateLimit: 5}"}, "match.rateLimit", "mapping"),
        (
            {"match": "{targetPatterns: ['(oops'], targetPatternsAreRegex: true}"},
            "match.targetPatterns",
            "'(oops'",
        ),
    ],
)
def test_a_bad_rule_field_names_file_line_rule_and_field(
    tmp_path: Path, fields: dict[str, str], field: str, words: str
) -> None:
    error = load_error(tmp_path, YAML_RULES.format(second=second_rule(**fields)))
    assert error.rule_id == "second"
    assert error.field == field
    assert error.line is not None and 8 <= error.line <= 12
    assert f":{error.line}," in str(error)
    assert "rule 'second'" in str(error)
    assert f"field '{field}'" in str(error)
    assert words in str(error)


def test_a_bad_value_in_the_match_of_a_later_rule_reports_that_rules_line(tmp_path: Path) -> None:
    text = YAML_RULES.format(second=second_rule(match="\n      tools: Bash"))
    error = load_error(tmp_path, text)
    assert (error.rule_id, error.field, error.line) == ("second", "match.tools", 13)


def test_a_duplicate_rule_id(tmp_path: Path) -> None:
    text = YAML_RULES.replace("  - id: second", "  - id: first").format(second=second_rule())
    error = load_error(tmp_path, text)
    assert (error.rule_id, error.field, error.line) == ("first", "id", 8)
    assert "duplicate" in str(error)


def test_a_rule_id_that_repeats_one_of_the_presets(tmp_path: Path) -> None:
    text = (
        "preset: safety\nrules:\n  - id: warn-network\n    name: n\n    priority: 1\n"
        "    decision: allow\n    match: {}\n"
    )
    error = load_error(tmp_path, text)
    assert (error.rule_id, error.field, error.line) == ("warn-network", "id", 3)


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("defaultPolicy: block\n", "defaultPolicy", "allow, deny, warn"),
        ("enforce: 'yes'\n", "enforce", "true or false"),
        ("rulez: []\n", "rulez", "unknown key"),
        ("rules: {a: 1}\n", "rules", "list"),
        ("rules: [3]\n", "rules[0]", "mapping"),
        ("rules: [{name: x}]\n", "id", "id"),
        ("toolCategories: [a]\n", "toolCategories", "tool-name globs"),
        ("auditLevel: loud\n", "auditLevel", "minimal"),
        ("preset: [safety]\n", "preset", "preset name"),
    ],
)
def test_a_bad_policy_field(tmp_path: Path, text: str, field: str, words: str) -> None:
    error = load_error(tmp_path, text)
    assert error.field == field
    assert words in str(error)


def test_an_unknown_preset_in_a_file_lists_the_available_ones(tmp_path: Path) -> None:
    error = load_error(tmp_path, "preset: safe\n")
    assert error.field == "preset"
    assert "Unknown policy preset: 'safe'" in str(error)
    assert "Available: permissive, safety, strict, audit-only" in str(error)


def test_a_yaml_syntax_error_names_its_line(tmp_path: Path) -> None:
    error = load_error(tmp_path, "rules:\n  - id: r\n    match: {tools: [Bash}\n")
    assert error.line == 3
    assert "invalid YAML" in str(error)
    assert "policy.yaml:3:" in str(error)


def test_a_json_syntax_error_names_its_line(tmp_path: Path) -> None:
    text = '{\n  "defaultPolicy": "deny",\n  "rules": [,]\n}\n'
    error = load_error(tmp_path, text, name="policy.json")
    assert error.line == 3
    assert "invalid JSON" in str(error)
    assert "policy.json:3:" in str(error)


def test_json_errors_carry_lines_too(tmp_path: Path) -> None:
    text = (
        '{\n  "rules": [\n    {"id": "a", "name": "A", "priority": 1, "decision": "deny",'
        ' "match": {}},\n    {"id": "b", "name": "B", "priority": 2, "decision": "nope",'
        ' "match": {}}\n  ]\n}\n'
    )
    error = load_error(tmp_path, text, name="policy.json")
    assert (error.rule_id, error.field, error.line) == ("b", "decision", 4)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        Policy.load(tmp_path / "nope.yaml")
    assert "not found" in str(caught.value)
    assert "nope.yaml" in str(caught.value)


def test_a_document_that_is_not_a_mapping(tmp_path: Path) -> None:
    error = load_error(tmp_path, "- a\n- b\n")
    assert "mapping" in str(error)


def test_errors_without_a_file_name_rule_and_field() -> None:
    error = dict_error({"rules": [rule("r", decision="maybe")]})
    assert (error.source, error.line, error.rule_id, error.field) == (None, None, "r", "decision")
    assert (
        str(error) == "rule 'r', field 'decision': must be one of allow, deny, warn, ask "
        "(alias require_approval); got 'maybe'"
    )


def test_preset_overrides_are_validated() -> None:
    with pytest.raises(PolicyError) as caught:
        Policy.preset("safety", default_policy="block")
    assert caught.value.field == "defaultPolicy"
    with pytest.raises(PolicyError) as caught:
        Policy.preset("safety", rules=[rule("bad", priority="high")])  # type: ignore[arg-type]
    assert (caught.value.rule_id, caught.value.field) == ("bad", "priority")
