"""`harness-audit hook install`: the hooks block written or merged, idempotent, diff shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_harness_audit.cli import main as cli
from pytest_harness_audit.doors.hook_install import EVENTS, settings_path

EXPECTED_COMMANDS = {
    "PreToolUse": "harness-audit hook pre --preset safety",
    "PostToolUse": "harness-audit hook post --preset safety",
    "PostToolUseFailure": "harness-audit hook post --preset safety",
    "PermissionRequest": "harness-audit hook permission-request --preset safety",
    "PermissionDenied": "harness-audit hook permission-denied --preset safety",
    "Stop": "harness-audit hook stop --preset safety",
    "SubagentStop": "harness-audit hook subagent-stop --preset safety",
    "SessionStart": "harness-audit hook session-start --preset safety",
    "SessionEnd": "harness-audit hook session-end --preset safety",
    "ConfigChange": "harness-audit hook config-change --preset safety",
}


def install(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = cli(["hook", "install", "--dir", str(tmp_path), *extra])
    return code, capsys.readouterr().out


def commands(settings: dict[str, object], event: str) -> list[str]:
    groups = settings["hooks"][event]  # type: ignore[index]
    return [entry["command"] for group in groups for entry in group["hooks"]]  # type: ignore[index]


def test_a_fresh_install_writes_every_event_and_shows_the_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = install(tmp_path, capsys)
    path = tmp_path / ".claude" / "settings.json"
    assert code == 0 and out.startswith(f"--- {path} (before)\n+++ {path}\n")
    settings = json.loads(path.read_text())
    assert {event: commands(settings, event) for event, _, _ in EVENTS} == {
        event: [command] for event, command in EXPECTED_COMMANDS.items()
    }
    assert settings["hooks"]["PreToolUse"][0]["matcher"] == "*"
    assert settings["hooks"]["PermissionDenied"][0]["matcher"] == "*"  # matched on tool names
    assert "matcher" not in settings["hooks"]["SessionEnd"][0]
    assert "matcher" not in settings["hooks"]["Stop"][0]


def test_installing_twice_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(tmp_path, capsys)
    path = tmp_path / ".claude" / "settings.json"
    first = path.read_text()
    code, out = install(tmp_path, capsys)
    assert code == 0
    assert out == f"{path}: the harness-audit hooks are already installed\n"
    assert path.read_text() == first


def test_merging_keeps_other_keys_and_hooks_and_updates_ours_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    mine = {"type": "command", "command": "./lint.sh"}
    path.write_text(
        json.dumps(
            {
                "model": "opus",
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [mine]},
                        {
                            "matcher": "*",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "harness-audit hook pre --preset safety",
                                }
                            ],
                        },
                    ]
                },
            }
        )
    )
    code, out = install(tmp_path, capsys, "--preset", "strict")
    assert code == 0
    assert '+            "command": "harness-audit hook pre --preset strict",' in out.splitlines()
    assert '+            "onFailure": "block"' in out.splitlines()  # the entry kept, made closed
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus"
    assert commands(settings, "PreToolUse") == [
        "./lint.sh",
        "harness-audit hook pre --preset strict",
    ]
    assert commands(settings, "SessionEnd") == ["harness-audit hook session-end --preset strict"]


def test_dry_run_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = install(tmp_path, capsys, "--dry-run")
    assert code == 0 and out.endswith("not written)\n")
    assert not (tmp_path / ".claude").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "settings.json:1: invalid JSON"),
        ("[]", "settings.json: expected a JSON object, got list"),
        ('{"hooks": []}', "settings.json: field 'hooks' must be an object, got list"),
    ],
)
def test_a_bad_settings_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    code = cli(["hook", "install", "--dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and message in err
    assert path.read_text() == text


def test_user_scope_is_the_home_settings(tmp_path: Path) -> None:
    assert settings_path("user", tmp_path / "p", home=tmp_path) == (
        tmp_path / ".claude" / "settings.json"
    )


def test_the_pre_hook_s_answer_options_go_on_the_pre_command_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(tmp_path, capsys)
    code, out = install(tmp_path, capsys, "--warn", "pass", "--approve-allowed")
    assert code == 0 and "+" in out
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert commands(settings, "PreToolUse") == [
        "harness-audit hook pre --preset safety --warn pass --approve-allowed"
    ]  # updated in place, not added
    assert commands(settings, "PostToolUse") == [EXPECTED_COMMANDS["PostToolUse"]]
    assert commands(settings, "SessionEnd") == [EXPECTED_COMMANDS["SessionEnd"]]


def test_the_steps_that_gate_a_call_fail_closed_at_the_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pre or permission-request step that cannot start, is killed or exits 1 makes the host
    run the call unjudged, unless its entry says ``"onFailure": "block"``; the other steps
    gate nothing, and a failure of theirs must not stop the session."""
    install(tmp_path, capsys)
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    closed = {
        event
        for event, _, _ in EVENTS
        for group in settings["hooks"][event]
        for entry in group["hooks"]
        if entry.get("onFailure") == "block"
    }
    assert closed == {"PreToolUse", "PermissionRequest"}
