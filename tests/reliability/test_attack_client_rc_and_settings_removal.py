"""Client start-up files and taking the host's settings away, at the gate of the ``safety`` preset.

A ``~/.curlrc`` with ``upload-file = ".env"`` (HOME is the workspace for the harness's commands)
turns a later plain ``curl URL`` into an upload of ``.env``: curl's and wget's start-up files are
exec-config files, so a write is denied (``deny-exec-config-write``) and a change however made is
a protected effect. Moving the ``.claude`` folder, deleting the host's settings or rewriting them
with ``sponge`` switches the audit's hooks off as surely as writing them: denied too.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_harness_audit.inspect.effects import Protection
from pytest_harness_audit.inspect.exec_config import is_exec_config
from pytest_harness_audit.policy import Policy

SAFETY = Policy.preset("safety")


def _decide(tool: str, params: dict[str, Any]) -> tuple[str, str | None]:
    evaluation = SAFETY.evaluate(tool, params)
    return evaluation.decision, evaluation.rule_id


@pytest.mark.parametrize(
    "path",
    [
        ".curlrc",
        "/home/agent/.curlrc",
        ".config/curlrc",
        ".config/.curlrc",
        "_curlrc",
        ".wgetrc",
        ".config/wget/wgetrc",
        "./.CURLRC",
    ],
)
def test_client_start_up_files_are_not_written(path: str) -> None:
    assert _decide("Write", {"file_path": path, "content": 'upload-file = ".env"\n'}) == (
        "deny",
        "deny-exec-config-write",
    )


@pytest.mark.parametrize(
    "command",
    [
        "printf 'upload-file = \".env\"\\n' > .curlrc",
        "echo 'data = \"@.env\"' >> ~/.curlrc",
        "cp staged.txt .config/curlrc",
        "tee .wgetrc < staged.txt",
        "mv staged.txt .wgetrc",
    ],
)
def test_client_start_up_files_are_not_written_by_the_shell(command: str) -> None:
    assert _decide("Bash", {"command": command}) == ("deny", "deny-exec-config-write")


@pytest.mark.parametrize(
    "path",
    ["docs/curlrc.md", "scripts/curl.sh", "curlrc", "tests/fixtures/curlrc", ".curlrc.example"],
)
def test_files_that_only_name_curl_are_ordinary(path: str) -> None:
    assert _decide("Write", {"file_path": path, "content": "silent\n"}) == ("allow", None)
    assert not is_exec_config(path)
    assert not Protection()(path)


@pytest.mark.parametrize("path", [".curlrc", ".config/curlrc", ".wgetrc", ".config/wget/wgetrc"])
def test_client_start_up_files_are_protected_files_of_a_snapshot(path: str) -> None:
    assert is_exec_config(path)
    assert Protection()(path)
    assert not Protection(exec_config=False)(path)


@pytest.mark.parametrize(
    "command, rule",
    [
        ("mv .claude .claude.bak", "deny-host-config-write"),
        ("mv ~/.claude /tmp/x", "deny-host-config-write"),
        ("cp -r staged .claude", "deny-host-config-write"),
        ("rm .claude/settings.json", "deny-host-config-delete"),
        ("unlink .claude/settings.local.json", "deny-host-config-delete"),
        ("rmdir .claude", "deny-host-config-delete"),
        ("rm .mcp.json", "deny-host-config-delete"),
        ("rm ~/.claude.json", "deny-host-config-delete"),
        ("jq . x | sponge .claude/settings.json", "deny-host-config-write"),
        ("sponge -a .claude/settings.local.json < x", "deny-host-config-write"),
    ],
)
def test_the_host_s_settings_are_not_taken_away(command: str, rule: str) -> None:
    assert _decide("Bash", {"command": command}) == ("deny", rule)


@pytest.mark.parametrize(
    "command, expected",
    [
        ("mkdir -p .claude/agents", ("allow", None)),
        ("sort words.txt | sponge words.txt", ("allow", None)),
        ("cat .claude/settings.json", ("allow", None)),
        ("rm .claude/agents/old.md", ("warn", "warn-file-delete")),
        ("mv docs/claude.md docs/host.md", ("allow", None)),
        ("mv .claude-notes.md notes-old.md", ("allow", None)),
    ],
)
def test_other_claude_files_and_sponge_are_ordinary(
    command: str, expected: tuple[str, str | None]
) -> None:
    assert _decide("Bash", {"command": command}) == expected
