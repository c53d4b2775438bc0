"""`harness-audit policy …` warns when a warn or allow rule ranked first keeps a deny rule from
deciding the calls both match (the first match in priority order wins)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from policy_support import policy, rule

from pytest_harness_audit.cli import main
from pytest_harness_audit.cli.policy_lint import masking_lints
from pytest_harness_audit.policy import Policy


def _lints(*rules: dict[str, Any]) -> list[str]:
    return masking_lints(policy(*rules), "team.yaml")


def _write(tmp_path: Path, *rules: dict[str, Any], **top: Any) -> Path:
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump({**top, "rules": list(rules)}), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", Policy.preset_names())
def test_no_preset_has_a_masked_deny(name: str) -> None:
    assert masking_lints(Policy.preset(name), name) == []


@pytest.mark.parametrize("name", Policy.preset_names())
@pytest.mark.parametrize("command", ["status", "rules", "test"])
def test_the_presets_print_no_warning(
    name: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["policy", command, "--preset", name] + (["Read", ".env"] if command == "test" else [])
    assert main(argv) == 0
    assert capsys.readouterr().err == ""


def test_a_warning_before_a_deny_of_the_same_calls_is_one_line_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(
        tmp_path,
        rule("warn-reads", decision="warn", priority=1, categories=["file_read"]),
        rule("deny-env", priority=5, categories=["file_read"], targetPatterns=["**/.env"]),
    )
    assert main(["policy", "test", "Read", ".env", "--policy", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "Decision:   warn" in out  # what the warning is about: the deny never decides
    assert err.splitlines() == [
        f"harness-audit: warning: {path}, rule 'warn-reads' (priority 1, warn) comes before deny "
        "rule 'deny-env' (priority 5) and may match the same calls: the first match decides, so "
        "the warn masks the deny"
    ]


def test_json_output_stays_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(
        tmp_path,
        rule("allow-all", decision="allow", priority=0),
        rule("deny-rm", priority=1, tools=["Bash"]),
    )
    assert main(["policy", "rules", "--policy", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["rules"][0]["id"] == "allow-all"
    assert "'allow-all' (priority 0, allow)" in err and "'deny-rm' (priority 1)" in err


def test_a_user_rule_masking_a_preset_deny_names_the_user_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, rule("warn-net", decision="warn", priority=0), preset="safety")
    assert main(["policy", "status", "--policy", str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and all(line.startswith(f"harness-audit: warning: {path}, ") for line in err)
    assert any("deny rule 'deny-secret-files' (priority 3)" in line for line in err)


MASKED: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "everything-first": (rule("w", decision="warn"), rule("d", priority=2, tools=["Bash"])),
    "same-tool": (
        rule("w", decision="warn", tools=["Bash", "Read"]),
        rule("d", priority=2, tools=["Read"]),
    ),
    "same-patterns": (
        rule("a", decision="allow", categories=["command"], targetPatterns=["rm *"]),
        rule("d", priority=2, categories=["command"], targetPatterns=["rm *"]),
    ),
    "deny-of-every-target": (
        rule("w", decision="warn", categories=["file_read"], targetPatterns=["**/.env"]),
        rule("d", priority=2, categories=["file_read"]),
    ),
    "same-priority-file-order": (
        rule("w", decision="warn", priority=2, tools=["Bash"]),
        rule("d", priority=2, tools=["Bash"]),
    ),
    "credential-access": (
        rule("w", decision="warn", categories=["file_read"]),
        rule("d", priority=2, categories=["credential_access"]),
    ),
    "mcp-judged-as-write": (
        rule("w", decision="warn", categories=["mcp"]),
        rule("d", priority=2, categories=["file_write"]),
    ),
    "a-tool-and-a-category": (
        rule("w", decision="warn", tools=["Read"]),
        rule("d", priority=2, categories=["file_read"]),
    ),
    "shared-effect": (
        rule("w", decision="warn", effects=["files_deleted", "memory_write"]),
        rule("d", priority=2, effects=["files_deleted"]),
    ),
}


@pytest.mark.parametrize("case", list(MASKED))
def test_a_masked_deny_is_reported(case: str) -> None:
    earlier, later = MASKED[case]
    (line,) = _lints(earlier, later)
    assert f"rule '{earlier['id']}' (priority {earlier['priority']}, {earlier['decision']})" in line
    assert f"deny rule 'd' (priority {later['priority']})" in line


NOT_MASKED: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "deny-first": (rule("d", priority=1, tools=["Bash"]), rule("w2", decision="deny", priority=2)),
    "warn-after-deny": (rule("d", priority=1), rule("w", decision="warn", priority=2)),
    "other-category": (
        rule("w", decision="warn", categories=["network"]),
        rule("d", priority=2, categories=["command"]),
    ),
    "other-tool": (
        rule("w", decision="warn", tools=["Read"]),
        rule("d", priority=2, tools=["Bash"]),
    ),
    "other-patterns": (
        rule("w", decision="warn", categories=["command"], targetPatterns=["rm *"]),
        rule("d", priority=2, categories=["command"], targetPatterns=["mkfs*"]),
    ),
    "glob-and-regex": (
        rule("w", decision="warn", targetPatterns=["rm"]),
        rule("d", priority=2, targetPatterns=["rm"], targetPatternsAreRegex=True),
    ),
    "before-and-after-the-call": (
        rule("w", decision="warn", effects=["files_deleted"]),
        rule("d", priority=2, tools=["Bash"]),
    ),
    "other-effects": (
        rule("w", decision="warn", effects=["memory_write"]),
        rule("d", priority=2, effects=["files_deleted"]),
    ),
    "mcp-and-unknown": (
        rule("w", decision="warn", categories=["mcp"]),
        rule("d", priority=2, categories=["unknown"]),
    ),
}


@pytest.mark.parametrize("case", list(NOT_MASKED))
def test_rules_that_cannot_mask_a_deny_are_not_reported(case: str) -> None:
    assert _lints(*NOT_MASKED[case]) == []
