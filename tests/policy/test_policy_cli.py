"""`harness-audit policy status | rules | presets | test`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from policy_support import README_POLICY

from pytest_harness_audit.cli import main
from pytest_harness_audit.policy import Policy

RM_BLOCK = """\
Tool:       Bash
Category:   command
Target:     rm -rf /tmp
Decision:   deny
Enforced:   true
Reason:     Destructive command blocked by safety preset
Rule:       deny-destructive-commands (priority 1)
Constraints: policy:deny, rule:deny-destructive-commands
"""

READ_BLOCK = """\
Tool:       Read
Category:   file_read
Target:     /project/src/index.ts
Decision:   allow
Enforced:   true
Reason:     Default policy: allow
Constraints: policy:allow, rule:default
"""


# `policy rules` of the reference README, verbatim.
README_RULES = """\
3 rules (priority order):

  [1] deny-destructive-commands -> deny
       Block destructive shell commands
       match: tools=[Bash] AND targets(regex)=[rm\\s+-rf, mkfs\\.]
       reason: Destructive command blocked

  [5] deny-secrets -> deny
       Block reading secret files
       match: categories=[file_read] AND targets(glob)=[**/.env, **/.env.*, **/credentials.*, \
**/*secret*]
       reason: Secret file access denied

  [10] warn-network -> warn
       Warn on network access
       match: categories=[network]

Default: allow | Enforce: true
"""


@pytest.fixture
def readme_policy(tmp_path: Path) -> Path:
    path = tmp_path / "readme.yaml"
    path.write_text(yaml.safe_dump(README_POLICY), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["policy", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_policy_test_prints_the_reference_block(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "test", "Bash", "rm -rf /tmp") == (0, RM_BLOCK, "")


def test_a_default_decision_has_no_rule_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "test", "Read", "/project/src/index.ts") == (0, READ_BLOCK, "")


def test_policy_test_with_a_policy_file(
    capsys: pytest.CaptureFixture[str], readme_policy: Path
) -> None:
    code, out, _ = run(capsys, "test", "Bash", "rm -rf /tmp", "--policy", str(readme_policy))
    assert code == 0
    assert "Reason:     Destructive command blocked\n" in out
    assert "Rule:       deny-destructive-commands (priority 1)\n" in out


def test_policy_test_without_a_target(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "test", "TodoWrite")
    assert code == 0
    assert "Target:     (none)\n" in out


def test_a_long_target_is_shown_truncated_but_matched_in_full(
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = "echo " + "x" * 90 + " && rm -rf /"
    code, out, _ = run(capsys, "test", "Bash", command)
    assert code == 0
    assert f"Target:     {command[:80]}…\n" in out
    assert "Decision:   deny\n" in out
    code, out, _ = run(capsys, "test", "Bash", command, "--json")
    assert json.loads(out)["target"] == command


@pytest.mark.parametrize(
    ("tool", "target", "key"),
    [
        ("Bash", "ls", "command"),
        ("Read", "/a", "file_path"),
        ("Write", "/a", "file_path"),
        ("Edit", "/a", "file_path"),
        ("Glob", "**/*.py", "pattern"),
        ("Grep", "TODO", "pattern"),
        ("WebFetch", "https://x", "url"),
    ],
)
def test_target_goes_to_the_natural_parameter(
    capsys: pytest.CaptureFixture[str], tool: str, target: str, key: str
) -> None:
    code, out, _ = run(capsys, "test", tool, target, "--json")
    assert code == 0
    assert json.loads(out)["params"] == {key: target}


def test_params_gives_the_full_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    params = json.dumps({"source": "/p/a.txt", "destination": "/p/.env"})
    code, out, _ = run(capsys, "test", "mcp__fs__move_file", "--params", params)
    assert code == 0
    assert "Decision:   deny\n" in out
    assert "Rule:       deny-secret-files (priority 3)\n" in out
    code, out, _ = run(capsys, "test", "Bash", "rm -rf /", "--params", '{"timeout": 5}', "--json")
    data = json.loads(out)
    assert data["params"] == {"timeout": 5, "command": "rm -rf /"}
    assert data["decision"] == "deny"


def test_policy_test_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "test", "Read", "/p/a/../.env", "--preset", "audit-only", "--json")
    assert code == 0
    data = json.loads(out)
    assert data == {
        "tool": "Read",
        "params": {"file_path": "/p/a/../.env"},
        "decision": "deny",
        "enforced": False,
        "blocked": False,
        "ruleId": "deny-secret-files",
        "ruleName": "Block credential and secret files",
        "priority": 3,
        "reason": "Credential/secret file access denied by safety preset",
        "constraints": ["policy:deny", "rule:deny-secret-files", "enforced:false"],
        "category": "file_read",
        "target": "/p/a/../.env",
        "targets": ["/p/a/../.env", "/p/.env"],
    }


def test_policy_rules_follows_the_reference_format(
    capsys: pytest.CaptureFixture[str], readme_policy: Path
) -> None:
    assert run(capsys, "rules", "--policy", str(readme_policy)) == (0, README_RULES, "")


def test_policy_rules_of_the_default_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules")
    assert code == 0
    count = len(Policy.preset("safety").rules)
    assert out.startswith(f"{count} rules (priority order):\n\n  [1] deny-destructive-commands")
    assert "       match: categories=[network]\n" in out
    assert out.endswith("\nDefault: allow | Enforce: true\n")


def test_policy_rules_shows_rate_limits_and_empty_matches(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "rules": [
                    {
                        "id": "burst",
                        "name": "Burst",
                        "priority": 1,
                        "decision": "warn",
                        "match": {
                            "tools": ["Bash"],
                            "rateLimit": {"maxCount": 5, "windowMs": 1000},
                        },
                    },
                    {"id": "all", "name": "All", "priority": 2, "decision": "allow", "match": {}},
                ]
            }
        ),
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "rules", "--policy", str(path))
    assert code == 0
    assert "       match: tools=[Bash] AND rateLimit=5/1000ms\n" in out
    assert "       match: (everything)\n" in out


def test_policy_rules_json(capsys: pytest.CaptureFixture[str], readme_policy: Path) -> None:
    code, out, _ = run(capsys, "rules", "--policy", str(readme_policy), "--json")
    assert code == 0
    assert Policy.from_dict(json.loads(out)).content_hash == Policy.load(readme_policy).content_hash


def test_policy_status(capsys: pytest.CaptureFixture[str], readme_policy: Path) -> None:
    code, out, _ = run(capsys, "status", "--policy", str(readme_policy))
    assert (code, out) == (
        0,
        "Policy engine:\n  Rules:    3\n  Default:  allow\n  Enforce:  true\n",
    )
    code, out, _ = run(capsys, "status", "--preset", "strict")
    assert out == (
        "Policy engine:\n  Rules:    12\n  Default:  deny\n  Enforce:  true\n  Preset:   strict\n"
    )


def test_policy_status_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "status", "--preset", "audit-only", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["rules"] == len(Policy.preset("audit-only").rules)
    assert (data["defaultPolicy"], data["enforce"], data["preset"]) == (
        "allow",
        False,
        "audit-only",
    )
    assert data["contentHash"] == Policy.preset("audit-only").content_hash


def test_policy_presets(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "presets")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[0::2]] == [
        "permissive",
        "safety",
        "strict",
        "audit-only",
    ]
    assert lines[1].split() == ["default=allow", "enforce=false", "rules=0"]
    assert lines[5].split() == ["default=deny", "enforce=true", "rules=12"]
    code, out, _ = run(capsys, "presets", "--json")
    data = json.loads(out)
    assert [d["name"] for d in data] == list(Policy.preset_names())
    assert all(d["description"] for d in data)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["test", "Bash", "ls", "--preset", "nope"], "Available: permissive, safety, strict"),
        (["status", "--policy", "/nonexistent/p.yaml"], "not found"),
        (["test", "Bash", "--params", "{bad"], "--params: invalid JSON"),
        (["test", "Bash", "--params", "[1]"], "must be a JSON object"),
    ],
)
def test_errors_print_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("harness-audit: error: ")
    assert words in err
    assert "Traceback" not in err


def test_a_bad_policy_file_prints_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "rules:\n  - id: r\n    name: R\n    priority: 1\n    decision: block\n    match: {}\n",
        encoding="utf-8",
    )
    code, out, err = run(capsys, "rules", "--policy", str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"harness-audit: error: {path}:2, rule 'r', field 'decision': must be one of allow, "
        "deny, warn, ask (alias require_approval); got 'block'\n"
    )


def test_the_command_runs_as_a_process() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest_harness_audit", "policy", "test", "Bash", "rm -rf /tmp"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, RM_BLOCK, "")
