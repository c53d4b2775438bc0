"""The host's own settings, at the hook door: the files that decide whether the audit's hooks run.

A Write of ``.claude/settings.local.json`` with ``{"disableAllHooks": true}`` (or the user's
``~/.claude/settings.json``, ``.mcp.json``) would switch the audit off from the host's next
settings load, with nothing in the chain to say so: ``safety`` denies it
(``deny-host-config-write``). Shell start-up files and ``~/.ssh/authorized_keys`` are flagged
(the hook asks). Other settings files are ordinary files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.session.workspace import create_workspace
from tests.hooks.hook_processes import hook, host_env

pytestmark = pytest.mark.slow  # a hook process per case


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return Path(create_workspace(tmp_path / "proj", "python-service").working_dir)


def _pre(tmp_path: Path, project: Path, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "S",
        "cwd": str(project),
        "tool_use_id": "t1",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "tool_name": tool,
        "tool_input": tool_input,
    }
    env = host_env(CLAUDE_PROJECT_DIR=str(project))
    code, out, err = hook(tmp_path / "store", "pre", payload, "--preset", "safety", env=env)
    assert code == 0, err
    answer: dict[str, Any] = json.loads(out).get("hookSpecificOutput", {})
    return answer


def _path(where: str, project: Path) -> str:
    return where.format(project=project, home=os.path.expanduser("~"))


@pytest.mark.parametrize(
    "tool, where, content",
    [
        ("Write", "{project}/.claude/settings.local.json", '{"disableAllHooks": true}'),
        ("Write", "{project}/.claude/settings.json", '{"hooks": {}}'),
        ("Write", "{home}/.claude/settings.json", '{"disableAllHooks": true}'),
        ("Write", "{home}/.claude.json", '{"mcpServers": {}}'),
        ("Write", "{project}/.mcp.json", '{"mcpServers": {"x": {"command": "sh"}}}'),
        ("Bash", "echo '{{\"disableAllHooks\": true}}' > .claude/settings.local.json", ""),
    ],
    ids=["project-local", "project", "user", "user-claude-json", "mcp-json", "shell"],
)
def test_the_host_s_settings_are_not_written(
    tmp_path: Path, project: Path, tool: str, where: str, content: str
) -> None:
    if tool == "Bash":
        answer = _pre(tmp_path, project, tool, {"command": where})
    else:
        answer = _pre(
            tmp_path, project, tool, {"file_path": _path(where, project), "content": content}
        )
    assert answer.get("permissionDecision") == "deny", answer
    assert "the agent host's settings" in answer.get("permissionDecisionReason", ""), answer


@pytest.mark.parametrize(
    "where", ["{home}/.ssh/authorized_keys", "{home}/.bashrc", "{project}/.envrc"]
)
def test_start_up_files_and_ssh_keys_are_asked(tmp_path: Path, project: Path, where: str) -> None:
    answer = _pre(tmp_path, project, "Write", {"file_path": _path(where, project), "content": "x"})
    assert answer.get("permissionDecision") == "ask", answer


@pytest.mark.parametrize(
    "where",
    [
        "{project}/.vscode/settings.json",
        "{project}/config/settings.json",
        "{project}/docs/claude-settings.md",
        "{project}/docs/agents/reviewer.md",
    ],
)
def test_other_settings_files_are_ordinary(tmp_path: Path, project: Path, where: str) -> None:
    answer = _pre(tmp_path, project, "Write", {"file_path": _path(where, project), "content": "{}"})
    assert answer.get("permissionDecision") in (None, "allow"), answer
