"""Which workspace files the host's settings name as programs it runs by itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.inspect.effects import WorkspaceSnapshot, diff
from pytest_harness_audit.inspect.host_programs import MAX_PROGRAMS, host_programs


def _hooks(*commands: str) -> dict[str, Any]:
    entries = [{"type": "command", "command": command} for command in commands]
    return {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": entries}]}}


def _settings(root: Path, document: dict[str, Any], name: str = ".claude/settings.json") -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(json.dumps(document))


@pytest.mark.parametrize(
    ("command", "named"),
    [
        (".claude/hooks/format.sh", ".claude/hooks/format.sh"),
        ('"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.py', ".claude/hooks/x.py"),
        ("${CLAUDE_PROJECT_DIR}/bin/check --fast", "bin/check"),
        ("./bin/check", "bin/check"),
        ("python3 scripts/lint_hook.py", "scripts/lint_hook.py"),
        ("python3 -u -W ignore scripts/lint_hook.py --fix", "scripts/lint_hook.py"),
        ("bash x.sh", "x.sh"),
        ("sh -e tools/a.sh", "tools/a.sh"),
        ("node tools/server.js", "tools/server.js"),
        ("uv run scripts/status.py", "scripts/status.py"),
        ("uv run --with rich python tools/s.py", "tools/s.py"),
        ("FOO=1 env BAR=2 python3 tools/s.py", "tools/s.py"),
        ('cd "$CLAUDE_PROJECT_DIR" && python3 tools/s.py', "tools/s.py"),
        ("bash -c 'sh tools/a.sh | tee log'", "tools/a.sh"),
    ],
)
def test_a_hook_command_names_its_program(tmp_path: Path, command: str, named: str) -> None:
    _settings(tmp_path, _hooks(command))
    assert named in host_programs(tmp_path)


@pytest.mark.parametrize(
    "command",
    [
        "npx prettier --write .",
        "ruff format",
        "python3 -m black .",
        "python3 -c 'print(1)'",
        "/usr/local/bin/format",
        "../outside/x.sh",
        "$HOME/x.sh",
        "~/bin/x.sh",
    ],
)
def test_no_workspace_file_is_named(tmp_path: Path, command: str) -> None:
    _settings(tmp_path, _hooks(command))
    assert host_programs(tmp_path) == frozenset()


def test_status_line_helpers_and_mcp_servers(tmp_path: Path) -> None:
    _settings(
        tmp_path,
        {
            "statusLine": {"type": "command", "command": "bash tools/status.sh"},
            "apiKeyHelper": "./bin/key",
            "awsAuthRefresh": "bin/aws-refresh",
            "otelHeadersHelper": "/etc/x.sh",
        },
        ".claude/settings.local.json",
    )
    servers = {
        "a": {"command": "node", "args": ["./tools/server.js"]},
        "b": {"command": "npx", "args": ["-y", "@scope/server"]},
        "c": {"command": "uv", "args": ["run", "python", "-m", "srv"]},
    }
    _settings(tmp_path, {"mcpServers": servers}, ".mcp.json")
    assert host_programs(tmp_path) == {
        "tools/status.sh",
        "bin/key",
        "bin/aws-refresh",
        "tools/server.js",
    }


def test_bounded(tmp_path: Path) -> None:
    _settings(tmp_path, _hooks(*(f"./bin/h{i}" for i in range(MAX_PROGRAMS * 2))))
    assert len(host_programs(tmp_path)) == MAX_PROGRAMS
    big = _hooks("./bin/one")
    big["padding"] = "x" * 300_000
    _settings(tmp_path, big)
    assert host_programs(tmp_path) == frozenset()  # too large to be read
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    assert host_programs(tmp_path) == frozenset()


def test_a_named_program_changed_is_a_protected_change(tmp_path: Path) -> None:
    _settings(tmp_path, _hooks("python3 scripts/lint_hook.py"))
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "lint_hook.py").write_text("print('lint')\n")
    (tmp_path / "scripts" / "other.py").write_text("print('other')\n")
    before = WorkspaceSnapshot.take(tmp_path, tracked=False)
    (tmp_path / "scripts" / "other.py").write_text("print('changed')\n")
    assert diff(before, WorkspaceSnapshot.take(tmp_path, tracked=False)).protected == ()
    before = WorkspaceSnapshot.take(tmp_path, tracked=False)
    (tmp_path / "scripts" / "lint_hook.py").write_text("import os\n")
    after = WorkspaceSnapshot.take(tmp_path, tracked=False)
    assert diff(before, after).protected == ("scripts/lint_hook.py",)
