"""What the host settings digest covers beyond the user's settings (skills, the project's
``.mcp.json``, managed MCP servers), the permission events comparing it like pre and post do,
and pre digesting the settings once."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hook_processes import hook
from host_support import SESSION, Host

from pytest_harness_audit.doors import hook_host_settings
from pytest_harness_audit.doors.hook import PreAnswers, handle_pre
from pytest_harness_audit.doors.hook_host_settings import host_settings_state
from pytest_harness_audit.doors.hook_session import handle_session_start
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import Verdict


@pytest.fixture
def host(tmp_path: Path) -> Host:
    made = Host(tmp_path)
    (made.home / ".claude" / "skills" / "deploy").mkdir(parents=True)
    (made.home / ".claude" / "skills" / "deploy" / "SKILL.md").write_text("Deploy with care.\n")
    (made.project / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "db"}}}))
    return made


def _managed_mcp(host: Host) -> Path:
    return host.managed.with_name("managed-mcp.json")


CHANGES: dict[str, tuple[Callable[[Host], None], Callable[[Host], str]]] = {
    "skill-rewritten": (
        lambda h: (h.home / ".claude/skills/deploy/SKILL.md").write_text("Push to prod.\n"),
        lambda h: "~/.claude/skills/",
    ),
    "skill-added": (
        lambda h: h.write(".claude/skills/new/SKILL.md", "Obey."),
        lambda h: "~/.claude/skills/",
    ),
    "project-mcp-server": (
        lambda h: (h.project / ".mcp.json").write_text(
            json.dumps({"mcpServers": {"evil": {"command": "sh"}}})
        ),
        lambda h: str(h.project / ".mcp.json"),
    ),
    "project-mcp-created": (
        lambda h: (h.project / ".mcp.json").unlink(),
        lambda h: str(h.project / ".mcp.json"),
    ),
    "managed-mcp": (
        lambda h: _managed_mcp(h).write_text(json.dumps({"mcpServers": {}})),
        lambda h: str(_managed_mcp(h)),
    ),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_between_events_fails_the_session(host: Host, change: str) -> None:
    make, shown = CHANGES[change]
    host.start()
    host.call()
    make(host)
    host.pre()
    (note,) = host.notes()
    assert note["effects"] == {"hostSettings": [shown(host)]}
    assert host.judged() == (Verdict.FAIL, ["host-settings-changed"])


def test_a_skill_written_during_a_call_is_its_effect(host: Host) -> None:
    host.start()
    host.call(during=lambda: CHANGES["skill-added"][0](host))
    host.end()
    assert host.notes() == []
    (changed,) = [r for r in host.records() if "protected_file_changed" in (r.get("alerts") or ())]
    assert changed["effects"]["hostSettings"] == ["~/.claude/skills/"]
    assert host.judged()[0] == Verdict.FAIL


BENIGN: dict[str, Callable[[Host], None]] = {
    "mcp-json-reformatted": lambda h: (h.project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"db": {"command": "db"}}}, indent=4)
    ),
    "managed-mcp-absent-stays-absent": lambda h: h.write(".claude.json", {"numStartups": 5}),
}


@pytest.mark.slow
@pytest.mark.parametrize("change", list(BENIGN))
def test_benign_changes_pass(host: Host, change: str) -> None:
    host.start()
    host.call()
    BENIGN[change](host)
    host.call()
    host.end()
    assert host.notes() == []
    assert host.judged() == (Verdict.PASS, [])


def _permission_event(host: Host, call: dict[str, Any], event: str) -> None:
    command = {"PermissionRequest": "permission-request", "PermissionDenied": "permission-denied"}
    payload = {**call, "hook_event_name": event}
    if event == "PermissionRequest":
        payload.pop("tool_use_id")
        payload["permission_suggestions"] = []
    else:
        payload["reason"] = "Blocked by classifier"
    code, _out, err = hook(host.storage, command[event], payload, env=host.env)
    assert code == 0, err


@pytest.mark.parametrize("event", ["PermissionRequest", "PermissionDenied"])
def test_the_permission_events_compare(host: Host, event: str) -> None:
    host.start()
    call = host.pre()
    CHANGES["skill-rewritten"][0](host)
    _permission_event(host, call, event)
    (note,) = host.notes()
    assert f"(seen at {event})" in note["result"]["errorMessage"]
    assert note["effects"] == {"hostSettings": ["~/.claude/skills/"]}
    if event == "PermissionRequest":
        host.post(call)  # the user approved: the change came before the call ran
        bash = [r for r in host.records() if r["tool"] == "Bash"][-1]
        assert "protected_file_changed" not in (bash.get("alerts") or ())
    host.end()
    assert len(host.notes()) == 1  # reported once
    found, codes = host.judged()
    assert found == Verdict.FAIL and "host-settings-changed" in codes


def test_pre_digests_the_host_settings_once(
    host: Host, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(host.home))
    monkeypatch.setenv("HARNESS_AUDIT_MANAGED_SETTINGS", str(host.managed))
    monkeypatch.setenv("HARNESS_AUDIT_WITNESS_DIR", str(tmp_path / "witness"))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    policy = Policy.preset("safety")
    start = {"session_id": SESSION, "cwd": str(host.project), "hook_event_name": "SessionStart"}
    handle_session_start(json.dumps(start), storage=host.storage, policy=policy)
    digested: list[str] = []
    real = hook_host_settings._state_of

    def counting(name: str, home: str) -> str | None:
        digested.append(name)
        return real(name, home)

    monkeypatch.setattr(hook_host_settings, "_state_of", counting)
    call = {
        "session_id": SESSION,
        "cwd": str(host.project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "touch notes.txt"},
        "tool_use_id": "toolu_once",
    }
    assert (
        handle_pre(json.dumps(call), storage=host.storage, policy=policy, answers=PreAnswers())
        == {}
    )
    assert digested and len(digested) == len(set(digested))  # each setting read once
    pending = host.storage / "pending" / SESSION / "toolu_once.json"
    kept = json.loads(pending.read_text())["workspace"]["hostSettings"]
    monkeypatch.setattr(hook_host_settings, "_state_of", real)
    assert kept == host_settings_state(str(host.home))  # what a digest of its own would keep
