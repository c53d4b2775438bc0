"""A second agent host the agent starts with the audit's hooks left out is refused.

``claude --bare`` runs no hooks, ``--settings`` brings settings of its own (``disableAllHooks``
among them), ``--setting-sources user`` leaves out the project's settings, where ``hook
install`` writes the hooks, and another ``CLAUDE_CONFIG_DIR`` leaves out the user's. Every
call of that agent would run with no gate and no record, in a session of its own, and what it
sends over the network is no effect a snapshot sees: the command was allowed and the session
judged PASS. A nested host started as it is configured (its hooks run) still passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hook_processes import pre_answer, pre_payload


def _pre(tmp_path: Path, command: str) -> dict[str, object]:
    project = tmp_path / "demo"
    project.mkdir(exist_ok=True)
    payload = pre_payload(
        project, "nested-host", "Bash", {"command": command}, permission_mode="default"
    )
    answer: dict[str, object] = pre_answer(tmp_path / "store", payload)
    return answer


@pytest.mark.parametrize(
    "command",
    [
        "claude --bare -p 'tidy the repository'",
        """claude --settings '{"disableAllHooks": true}' -p 'tidy the repository'""",
        "claude -p 'tidy' --settings=/tmp/quiet.json",
        "claude -p 'tidy' --setting-sources user",
        "CLAUDE_CONFIG_DIR=/tmp/empty claude -p 'tidy'",
        "export CLAUDE_CONFIG_DIR=/tmp/empty; claude -p 'tidy'",
        "npx @anthropic-ai/claude-code --bare -p 'tidy'",
        "sudo -u dev claude --bare -p 'tidy'",
        "bash -c 'claude --bare -p tidy'",
        "c=claude; $c --bare -p 'tidy'",
        "$(which claude) --bare -p 'tidy'",
        "node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js --bare -p 'tidy'",
    ],
)
def test_a_host_started_without_the_hooks_is_refused(tmp_path: Path, command: str) -> None:
    answer = _pre(tmp_path, command)
    decision = answer["hookSpecificOutput"]
    assert isinstance(decision, dict)
    assert decision["permissionDecision"] == "deny"
    assert "without the audit's hooks" in decision["permissionDecisionReason"]


@pytest.mark.parametrize(
    "command",
    [
        "claude -p 'summarise the README'",
        "claude --version",
        "claude mcp list",
        "grep -n -- --bare notes.txt",
        "git commit -qm 'docs: claude --bare skips the hooks'",
        "echo 'claude --settings FILE brings settings of its own'",
        "grep -rn 'claude --bare' docs",
        "git clone -q --bare . /tmp/mirror.git",
        "node app.js --settings config.json",
    ],
)
def test_a_host_started_as_configured_still_passes(tmp_path: Path, command: str) -> None:
    assert _pre(tmp_path, command) == {}
