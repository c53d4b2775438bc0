"""The project settings' ``permissions`` changed between hook events — by a process a call left
running, after the call's post, on a host that sends no ``ConfigChange`` — are judged by what the
change adds, at the next event, at ``session-end``, or when ``audit report`` reads a session whose
hooks stopped: a rule the host writes at its prompt (naming an open asked call) passes, a rule
removed passes, anything else added fails the session once."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from host_support import LOCAL, NOTE, Host, config_change, prompt, write_project

from pytest_harness_audit.readers.verdict import Verdict

CHANGED = "the host's settings changed"


ATTACKS: dict[str, dict[str, Any]] = {
    "every-command": {"permissions": {"allow": ["Bash(*)"]}},
    "bypass-mode": {"permissions": {"defaultMode": "bypassPermissions"}},
    "every-directory": {"permissions": {"additionalDirectories": ["/"]}},
    # names the next call, but no prompt offered it: not the host's write at a prompt
    "the-next-call": {"permissions": {"allow": ["Bash(touch:*)"]}},
}


@pytest.mark.parametrize("name", ["settings.local.json", "settings.json"])
@pytest.mark.parametrize(
    "attack",
    # one by default; each host process costs a second (the rest under -m slow)
    [a if a == "the-next-call" else pytest.param(a, marks=pytest.mark.slow) for a in ATTACKS],
)
def test_permissions_added_between_calls_fail_once(host: Host, attack: str, name: str) -> None:
    host.start()
    host.call()
    write_project(host, name, ATTACKS[attack])  # after the call's post: no window sees it
    host.call()
    (note,) = host.notes()
    assert note["alerts"] == ["protected_file_changed"]
    assert "(seen at PreToolUse)" in note["result"]["errorMessage"]
    assert "permissions" in note["result"]["errorMessage"]
    assert note["effects"]["hostPermissions"]["removed"] == 0
    assert len(note["effects"]["hostPermissions"]["added"]) == 1
    # the calls are not blamed for it
    calls = [r for r in host.records() if r.get("tool") == "Bash"]
    assert all("protected_file_changed" not in (r.get("alerts") or ()) for r in calls)
    # the chain holds the new state: no later event reports it again
    host.call()
    host.event("stop", "Stop")
    host.end()
    assert len(host.notes()) == 1
    assert host.judged() == (Verdict.FAIL, ["host-settings-changed"])


@pytest.mark.parametrize("event", ["Stop", "SessionEnd"])
def test_every_event_compares_the_permissions(host: Host, event: str) -> None:
    host.start()
    host.call()
    write_project(host, LOCAL, ATTACKS["every-command"])
    if event == "Stop":
        host.event("stop", "Stop")
    else:
        host.end()
    (note,) = host.notes()
    assert f"(seen at {event})" in note["result"]["errorMessage"]
    assert host.judged()[0] == Verdict.FAIL


def test_a_change_in_the_call_s_window_is_reported_by_the_call_only(host: Host) -> None:
    host.start()
    host.call(lambda: write_project(host, LOCAL, ATTACKS["every-command"]))
    host.call()
    host.end()
    assert host.notes() == []
    (changed,) = [r for r in host.records() if "protected_file_changed" in (r.get("alerts") or ())]
    assert changed["tool"] == "Bash"
    assert changed["effects"]["hostPermissions"] == {"added": ["Bash(*)"], "removed": 0}


def test_the_host_s_write_at_its_prompt_passes(host: Host) -> None:
    host.start()
    call = host.pre()
    prompt(host, call)
    write_project(host, LOCAL, {"permissions": {"allow": ["Bash(touch:*)"]}})
    host.post(call)
    host.call()
    host.end()
    assert host.notes() == []
    assert host.judged() == (Verdict.PASS, [])


def _read(host: Host) -> dict[str, Any]:
    host.calls += 1
    return {
        "tool_name": "Read",
        "tool_input": {"file_path": str(host.project / "a.txt")},
        "tool_use_id": f"toolu_r{host.calls}",
        "session_id": "host-between-1",
        "cwd": str(host.project),
    }


def test_the_host_s_write_at_a_prompt_for_a_call_with_no_snapshot_passes(host: Host) -> None:
    """A call that changes no files keeps no snapshot at pre: its post judges the write as an
    event between others does, against the asked calls still open (its own)."""
    host.start()
    call = _read(host)
    host.event("pre", "PreToolUse", **call)
    prompt(host, {**call, "hook_event_name": "PreToolUse"})
    write_project(host, LOCAL, {"permissions": {"allow": ["Read"]}})
    host.event("post", "PostToolUse", **call, tool_response={"content": "x"})
    host.call()
    host.end()
    assert host.notes() == []
    assert host.judged() == (Verdict.PASS, [])
    # the chain holds the rule: the same rule seen again later is nothing new
    assert yaml.safe_load(host.report())["verdict"] == "PASS"


def test_a_rule_written_while_another_call_waits_at_the_prompt_is_recorded(host: Host) -> None:
    """The host writes the rule while the asked call is open; a subagent's call sees it first:
    recorded in a note that judges nothing, and the asked call's post finds it known."""
    host.start()
    call = host.pre()
    prompt(host, call)
    write_project(host, LOCAL, {"permissions": {"allow": ["Bash(touch:*)"]}})
    parallel = {**_read(host), "agent_id": "sub-1"}  # a subagent's call, while the prompt waits
    host.event("pre", "PreToolUse", **parallel)
    host.post(call)
    host.event("post", "PostToolUse", **parallel, tool_response={"content": "x"})
    host.end()
    assert host.notes() == []
    quiet = [r for r in host.records() if r.get("tool") == "HostAllowedToolsChanged"]
    assert [r["effects"]["hostPermissions"] for r in quiet] == [
        {"added": ["Bash(touch:*)"], "removed": 0}
    ]
    assert host.judged() == (Verdict.PASS, [])


@pytest.mark.slow
def test_a_rule_removed_between_calls_passes(host: Host) -> None:
    write_project(
        host, LOCAL, {"permissions": {"allow": ["Bash(touch:*)", "Read"], "deny": ["WebFetch"]}}
    )
    host.start()
    host.call()
    write_project(host, LOCAL, {"permissions": {"allow": ["Read"], "deny": ["WebFetch"]}})
    host.call()
    host.end()
    assert host.notes() == []
    assert host.judged() == (Verdict.PASS, [])
    assert yaml.safe_load(host.report())["verdict"] == "PASS"


def test_a_change_after_the_last_event_fails_the_report(host: Host) -> None:
    host.start()
    host.call()
    # the hooks stopped: no event comes after this
    write_project(host, LOCAL, ATTACKS["bypass-mode"])
    assert host.judged() == (Verdict.PASS, [])
    report = yaml.safe_load(host.report())
    assert report["verdict"] == "FAIL"
    first = report["other_reasons"][0]
    assert first.startswith(f"FAIL: {CHANGED} after the last hook event: ")
    assert "permissions" in first
    assert host.notes() == []  # reading records nothing


def test_a_rule_removed_after_the_last_event_does_not_fail_the_report(host: Host) -> None:
    write_project(host, LOCAL, {"permissions": {"allow": ["Read"]}})
    host.start()
    host.call()
    write_project(host, LOCAL, {"permissions": {"allow": []}})
    report = yaml.safe_load(host.report())
    assert report["verdict"] == "WARN"  # no SessionEnd only


def test_a_blocked_config_change_is_not_reported_again(host: Host) -> None:
    host.start()
    host.call()
    path = write_project(host, LOCAL, ATTACKS["bypass-mode"])
    code, answer, err = config_change(host, "local_settings", path)
    assert code == 0 and isinstance(answer, dict) and answer["decision"] == "block", err
    host.call()
    assert host.notes() == []
    # the change stays out of effect: a later edit of the file is judged against the state
    # still in effect, and blocked again
    write_project(host, LOCAL, {**ATTACKS["bypass-mode"], "model": "b"})
    code, answer, _err = config_change(host, "local_settings", path)
    assert isinstance(answer, dict) and answer.get("decision") == "block"
    host.end()
    assert host.notes() == []
    assert host.judged() == (Verdict.FAIL, ["host-settings-changed"] * 2)


@pytest.mark.slow
def test_an_allowed_config_change_is_not_reported_again(host: Host) -> None:
    host.start()
    call = host.pre()
    prompt(host, call)
    path = write_project(host, LOCAL, {"permissions": {"allow": ["Bash(touch:*)"]}})
    assert config_change(host, "local_settings", path)[:2] == (0, {})
    host.post(call)
    host.call()
    host.end()
    assert [r.get("tool") for r in host.records() if r.get("tool") in (NOTE, "ConfigChange")] == [
        "ConfigChange"
    ]
    assert host.judged() == (Verdict.PASS, [])


def test_a_rule_written_before_the_prompt_is_reported_once(host: Host) -> None:
    """Added after the call's pre but before the host asks: ``permission-request`` records it,
    and the call's own comparison starts from there (one change, one report)."""
    host.start()
    call = host.pre()
    write_project(host, LOCAL, ATTACKS["every-command"])
    prompt(host, call)
    host.post(call)
    host.end()
    (note,) = host.notes()
    assert "(seen at PermissionRequest)" in note["result"]["errorMessage"]
    record = next(r for r in host.records() if r.get("tool") == "Bash")
    assert "protected_file_changed" not in (record.get("alerts") or ())
    assert host.judged() == (Verdict.FAIL, ["host-settings-changed"])
