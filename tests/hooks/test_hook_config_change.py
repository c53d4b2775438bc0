"""`harness-audit hook config-change`: a change of the host's settings during a session is
recorded when the host reports it, and blocked (kept from taking effect) when it fails the
session; a change that does not count is recorded and allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hook_processes import hook
from host_support import SESSION, Host, config_change, write_project

from pytest_harness_audit.cli import main as cli
from pytest_harness_audit.readers.verdict import Verdict

HOOKS = {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "x"}]}]}


def changes(host: Host) -> list[dict[str, Any]]:
    return [r for r in host.records() if r.get("tool") == "ConfigChange"]


def test_the_agent_allowing_every_command_is_blocked_and_fails(host: Host) -> None:
    host.start()
    host.call()
    path = write_project(host, "settings.local.json", {"permissions": {"allow": ["Bash(*)"]}})
    code, answer, err = config_change(host, "local_settings", path)
    assert code == 0, err
    assert isinstance(answer, dict) and answer["decision"] == "block"
    assert str(path) in answer["reason"] and "Bash(*)" in answer["reason"]
    (record,) = changes(host)
    assert record["result"]["status"] == "error" and "protected_file_changed" in record["alerts"]
    assert record["effects"]["hostPermissions"] == {"added": ["Bash(*)"], "removed": 0}
    assert record["configChange"]["source"] == "local_settings"
    assert record["configChange"]["filePath"] == str(path)
    host.call()  # not reported twice at the next event
    assert host.notes() == []
    assert host.judged() == (Verdict.FAIL, ["host-settings-changed"])


def test_removing_the_harness_hooks_is_blocked_and_stays_blocked(host: Host) -> None:
    path = write_project(host, "settings.json", {"hooks": HOOKS, "model": "a"})
    host.start()
    host.call()
    write_project(host, "settings.json", {"model": "a"})
    code, answer, err = config_change(host, "project_settings", path)
    assert code == 0 and isinstance(answer, dict), err
    assert answer["decision"] == "block" and str(path) in answer["reason"]
    host.call()
    assert host.notes() == []  # the change is the ConfigChange record's, reported once
    # a later edit of the same file would bring the removal into effect: blocked too
    write_project(host, "settings.json", {"model": "b"})
    code, answer, _err = config_change(host, "project_settings", path)
    assert isinstance(answer, dict) and answer.get("decision") == "block"
    # the hooks back as they were: nothing left to keep out
    write_project(host, "settings.json", {"hooks": HOOKS, "model": "b"})
    assert config_change(host, "project_settings", path)[:2] == (0, {})
    assert [r["result"]["status"] for r in changes(host)] == ["error", "error", "success"]
    assert host.judged() == (Verdict.FAIL, ["host-settings-changed"] * 2)


def test_a_model_change_is_recorded_and_allowed(host: Host) -> None:
    host.start()
    host.call()
    host.write(".claude/settings.json", {"hooks": {"PreToolUse": []}, "model": "b"})
    path = host.home / ".claude" / "settings.json"
    assert config_change(host, "user_settings", path, future_field=[1]) == (0, {}, "")
    (record,) = changes(host)
    assert (record["result"]["status"], record["configChange"]["changed"]) == ("success", [])
    host.call()
    host.end()
    assert host.judged() == (Verdict.PASS, [])


def test_a_permission_granted_at_the_prompt_is_allowed(host: Host) -> None:
    host.start()
    call = host.pre()
    payload = {**call, "hook_event_name": "PermissionRequest", "permission_suggestions": []}
    code, _out, err = hook(host.storage, "permission-request", payload, env=host.env)
    assert code == 0, err
    # the user chose "always allow" for `touch …`: the host writes the project's local settings
    path = write_project(host, "settings.local.json", {"permissions": {"allow": ["Bash(touch:*)"]}})
    assert config_change(host, "local_settings", path)[:2] == (0, {})
    (record,) = changes(host)
    assert record["effects"]["hostPermissions"] == {"added": ["Bash(touch:*)"], "removed": 0}
    # with the prompt still open, a rule allowing every command is not what it offered
    write_project(
        host, "settings.local.json", {"permissions": {"allow": ["Bash(touch:*)", "Bash(*)"]}}
    )
    code, answer, _err = config_change(host, "local_settings", path)
    assert isinstance(answer, dict) and answer.get("decision") == "block"
    assert [r["result"]["status"] for r in changes(host)] == ["success", "error"]


def test_a_managed_settings_change_is_recorded_never_blocked(host: Host) -> None:
    host.start()
    host.managed.write_text(json.dumps({"permissions": {"deny": []}}))
    assert config_change(host, "policy_settings", host.managed)[:2] == (0, {})
    (record,) = changes(host)
    assert record["result"]["status"] == "error" and record["configChange"]["blocked"] is False
    assert record["effects"]["hostSettings"] == [str(host.managed)]
    assert host.judged() == (Verdict.FAIL, ["host-settings-changed"])


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("{not json", "hook payload: invalid JSON"),
        (json.dumps({"session_id": SESSION, "hook_event_name": "ConfigChange"}), "'source'"),
        (json.dumps({"session_id": SESSION, "source": "skills", "file_path": 3}), "'file_path'"),
    ],
)
def test_malformed_input_blocks_with_one_line(host: Host, payload: str, message: str) -> None:
    code, out, err = hook(host.storage, "config-change", payload, env=host.env)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and message in err and "blocked" in err


def test_an_internal_error_blocks(host: Host) -> None:
    host.storage.write_text("not a folder")
    path = write_project(host, "settings.json", {"model": "b"})
    code, out, err = config_change(host, "project_settings", path)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and "(configuration change blocked)" in err


def test_install_registers_config_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["hook", "install", "--dir", str(tmp_path)]) == 0
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["ConfigChange"] == [
        {
            "hooks": [
                {"type": "command", "command": "harness-audit hook config-change --preset safety"}
            ]
        }
    ]
    capsys.readouterr()
    assert cli(["hook", "install", "--dir", str(tmp_path)]) == 0
    assert "already installed" in capsys.readouterr().out
