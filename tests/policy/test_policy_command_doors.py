"""Commands through other doors: MCP command tools read like ``Bash`` (built-in names and the
``commandTools:`` key), MCP git tools naming a credential path, and bad input decided in bounds."""

from __future__ import annotations

from typing import Any

import pytest
from policy_support import decide

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell import read_command

SAFETY = Policy.preset("safety")


@pytest.mark.parametrize(
    "tool",
    [
        "mcp__shell__run",
        "mcp__desktop__execute_command",
        "mcp__box__shell",
        "mcp__box__exec",
        "mcp__box__bash",
        "mcp__term__run_command",
    ],
)
@pytest.mark.parametrize("key", ["command", "cmd"])
def test_mcp_command_tools_are_read_like_bash(tool: str, key: str) -> None:
    assert SAFETY.category_of(tool) == "command"
    assert decide(SAFETY, tool, **{key: "rm${IFS}-rf${IFS}app"}) == (
        "deny",
        "deny-destructive-commands",
    )
    assert decide(SAFETY, tool, **{key: "cat .env"}) == ("deny", "deny-secret-files")
    assert decide(SAFETY, tool, **{key: "ls -la"}) == ("allow", None)


def test_a_command_with_an_args_list_is_read_whole() -> None:
    params: dict[str, Any] = {"command": "rm", "args": ["-rf", "build"]}
    assert SAFETY.evaluate("mcp__shell__run", params).rule_id == "deny-destructive-commands"
    params = {"command": "cat", "args": ["my file", ".env"]}
    assert SAFETY.evaluate("mcp__shell__run", params).rule_id == "deny-secret-files"


def test_other_mcp_tools_are_not_command_tools() -> None:
    assert SAFETY.category_of("mcp__github__create_issue") == "mcp"
    assert SAFETY.category_of("mcp__x__runner") == "mcp"


def test_command_tools_are_configurable_by_name_or_glob() -> None:
    policy = Policy.from_dict({"preset": "safety", "commandTools": ["terminal_*", "RunIt"]})
    assert policy.category_of("terminal_exec") == "command"
    assert policy.category_of("RunIt") == "command"
    assert decide(policy, "terminal_exec", command="git clean -fdx")[1] == (
        "deny-destructive-commands"
    )
    assert policy.to_dict()["commandTools"] == ["terminal_*", "RunIt"]
    # not a command tool, but judged as the command it is given all the same
    assert SAFETY.category_of("terminal_exec") == "unknown"
    assert decide(SAFETY, "terminal_exec", command="git clean -fdx")[0] == "deny"


def test_command_tools_of_a_document_are_added_to_its_presets() -> None:
    base = Policy.from_dict({"commandTools": ["a_tool"], "rules": []})
    assert base.category_of("a_tool") == "command"
    merged = Policy.from_dict({"preset": "safety", "commandTools": ["b_tool"]})
    assert merged.category_of("b_tool") == "command"


@pytest.mark.parametrize("value", ["run", [1], [""], {"a": "b"}])
def test_command_tools_must_be_a_list_of_names(value: object) -> None:
    with pytest.raises(PolicyError, match="commandTools"):
        Policy.from_dict({"commandTools": value})


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("mcp__git__git_show", {"repo_path": "/r", "revision": "HEAD:.env"}),
        ("mcp__git__git_show", {"repo_path": "/r", "revision": "main:config/.env.local"}),
        ("mcp__git__git_diff", {"repo_path": "/r", "target": "HEAD:.env"}),
        ("mcp__git__git_log", {"repo_path": "/r", "args": ["-p", "HEAD:.env"]}),
    ],
)
def test_mcp_git_tools_naming_a_credential_path_are_credential_reads(
    tool: str, params: dict[str, Any]
) -> None:
    assert SAFETY.evaluate(tool, params).rule_id == "deny-secret-files"


@pytest.mark.parametrize(
    "params",
    [
        {"repo_path": "/r", "revision": "HEAD"},
        {"repo_path": "/r", "revision": "HEAD:.env.example"},
        {"repo_path": "/r", "revision": "HEAD:src/app.py"},
    ],
)
def test_mcp_git_tools_on_ordinary_revisions_are_allowed(params: dict[str, Any]) -> None:
    assert SAFETY.evaluate("mcp__git__git_show", params).decision == "allow"


# -- bad input: decided, never a traceback -----------------------------------------------------


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("x" * 1_000_000, "warn"),
        ("cat " * 250_000, "warn"),
        ("cat .env\x00", "warn"),
        ("ls\x00", "warn"),
        ("$(" * 10_000 + ")" * 10_000, "warn"),
        ("(" * 10_000 + ")" * 10_000, "warn"),
        ("{ " * 10_000, "warn"),
        ("`" * 10_001, "warn"),
        ('"$(' * 5_000, "warn"),
        ("a=${" * 10_000, "warn"),
        ("if true; then " * 10_000, "warn"),
        ("cat <<EOF\n" * 5_000, "warn"),
        ("a;" * 30_000, "warn"),
        ("cat .env " + "x" * 1_000_000, "deny"),
        ("cat .env; " + "(" * 10_000, "deny"),
    ],
)
def test_hostile_commands_are_decided_conservatively(command: str, decision: str) -> None:
    evaluation = SAFETY.evaluate("Bash", {"command": command}, root="/nonexistent")
    assert evaluation.decision == decision
    if decision == "warn":
        assert evaluation.rule_id == "unreadable-command"


def test_an_unreadable_command_says_why() -> None:
    assert read_command("cat .env\x00").unreadable == "NUL byte in command"
    assert read_command("x" * 1_000_000).unreadable == "command too long"
    assert read_command("$(" * 10_000).unreadable == "nested too deep"
    assert read_command("`" * 10_001).unreadable == "command too complex"
    assert read_command("echo 'open").unreadable == "unterminated single quote"
