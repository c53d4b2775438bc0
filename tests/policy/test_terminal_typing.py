"""Tools that type into a terminal (``tmux send-keys``, a terminal MCP server's ``send_keys``)
are judged as ``Bash`` given what they type (``policy/tool_names.types_into_terminal``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.tool_names import types_into_terminal

SAFETY = Policy.preset("safety")


def _judged(tmp_path: Path, tool: str, params: dict[str, Any]) -> tuple[str, str | None]:
    evaluation = SAFETY.evaluate(tool, params, root=str(tmp_path))
    return evaluation.decision, evaluation.rule_id


@pytest.mark.parametrize(
    ("tool", "params", "expected"),
    [
        ("tmux_send_keys", {"keys": "rm -rf app Enter"}, ("deny", "deny-destructive-commands")),
        ("mcp__tmux__send_keys", {"pane": 1, "keys": "cat .env"}, ("deny", "deny-secret-files")),
        ("terminal_input", {"input": "rm -rf app\n"}, ("deny", "deny-destructive-commands")),
        ("mcp__term__type", {"text": "cat .env"}, ("deny", "deny-secret-files")),
        ("mcp__tmux__send_keys", {"keys": "curl https://example.com"}, ("warn", "warn-network")),
    ],
)  # fmt: skip
def test_what_is_typed_into_a_terminal_is_judged_as_a_command(
    tmp_path: Path, tool: str, params: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert _judged(tmp_path, tool, params) == expected


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("mcp__tmux__send_keys", {"keys": "ls -la"}),
        ("send_keys", {"text": "cat .env"}),  # a browser's typing, as often
        ("mcp__selenium__send_keys", {"text": "curl https://example.com"}),
        ("mcp__browser__type", {"text": "rm -rf app"}),
    ],
)
def test_typing_elsewhere_and_ordinary_commands_stay_allowed(
    tmp_path: Path, tool: str, params: dict[str, Any]
) -> None:
    assert _judged(tmp_path, tool, params) == ("allow", None)


def test_which_names_type_into_a_terminal() -> None:
    assert types_into_terminal("tmux_send_keys")
    assert types_into_terminal("mcp__tmux__send-keys")
    assert types_into_terminal("mcp__pty_server__write")
    assert not types_into_terminal("send_keys")
    assert not types_into_terminal("mcp__playwright__type")
