"""The host's settings changed between hook events — by a process a call left running, after the
call's post — fail the session: at the next event, at ``session-end``, or when ``audit report``
reads a session whose hooks stopped (no event came after the change)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hook_processes import harness_audit
from host_support import SESSION, Host

from pytest_harness_audit.doors.hook_host_settings import (
    FOLDER_ENTRY_LIMIT,
    host_settings_state,
)
from pytest_harness_audit.readers.report import load_report_text
from pytest_harness_audit.readers.verdict import Verdict


def _disable_hooks_in_the_background(host: Host) -> Callable[[], None]:
    """Start, as a call would, a process that rewrites the user's settings once the call is over
    (the name built at run time); return what waits for it."""
    go = host.project / "go"
    code = (
        "import json, os, sys, time\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.02)\n"
        "path = os.path.expanduser('~') + '/.cla' + 'ude/settings.json'\n"
        "open(path, 'w').write(json.dumps({'disableAllHooks': True}))\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], env=host.env, start_new_session=True)

    def wait() -> None:
        go.touch()
        assert process.wait(timeout=30) == 0

    return wait


@pytest.mark.slow
def test_a_change_after_the_call_s_post_is_caught_at_the_next_pre(host: Host) -> None:
    host.start()
    started: list[Callable[[], None]] = []
    host.call(during=lambda: started.append(_disable_hooks_in_the_background(host)))
    started[0]()  # the settings change now, after the call's post
    assert host.judged() == (Verdict.PASS, [])
    host.call()
    (note,) = host.notes()
    assert note["kind"] == "note"
    assert note["alerts"] == ["protected_file_changed"]
    assert note["effects"] == {"hostSettings": ["~/.claude/settings.json"]}
    assert note["result"]["errorMessage"] == (
        "the host's settings changed between hook events (seen at PreToolUse): "
        "~/.claude/settings.json"
    )
    # the change is not the calls': neither call record carries it
    calls = [r for r in host.records() if r.get("kind", "call") == "call"]
    assert [r["tool"] for r in calls] == ["Bash", "Bash"]
    assert all("protected_file_changed" not in (r.get("alerts") or ()) for r in calls)
    assert host.judged() == (Verdict.FAIL, ["host-settings-changed"])
    # the chain now holds the new state: later events find no change
    host.call()
    host.event("stop", "Stop")
    host.end()
    assert len(host.notes()) == 1


def test_a_change_during_a_call_is_the_call_s_effect_only(host: Host) -> None:
    host.start()
    host.call(during=lambda: host.write(".claude/settings.json", {"disableAllHooks": True}))
    host.call()
    host.end()
    assert host.notes() == []
    (changed,) = [r for r in host.records() if "protected_file_changed" in (r.get("alerts") or ())]
    assert changed["effects"]["hostSettings"] == ["~/.claude/settings.json"]
    assert host.judged()[0] == Verdict.FAIL


def _project_settings(host: Host) -> None:
    folder = host.project / ".claude"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"disableAllHooks": True}))


CHANGES: dict[str, Callable[[Host], None]] = {
    "disable-hooks": lambda h: h.write(".claude/settings.json", {"disableAllHooks": True}),
    "mcp-server": lambda h: h.write(".claude.json", {"mcpServers": {"x": {"command": "sh"}}}),
    "managed-settings": lambda h: h.managed.write_text(json.dumps({"disableAllHooks": True})),
    "agent-rewritten": lambda h: (h.home / ".claude/agents/reviewer.md").write_text("Obey.\n"),
    "agent-added": lambda h: (h.home / ".claude/agents/helper.md").write_text("x\n"),
    "command-added": lambda h: h.write(".claude/commands/deploy.md", "run it"),
    "project-settings": _project_settings,
}
SHOWN = {
    "disable-hooks": "~/.claude/settings.json",
    "mcp-server": "~/.claude.json",
    "agent-rewritten": "~/.claude/agents/",
    "agent-added": "~/.claude/agents/",
    "command-added": "~/.claude/commands/",
}


def _read_call(host: Host, event: str) -> None:
    """A call that changes no files (no snapshot kept), its post an event of its own."""
    host.calls += 1
    call = {
        "tool_name": "Read",
        "tool_input": {"file_path": str(host.project / "a.txt")},
        "tool_use_id": f"toolu_r{host.calls}",
    }
    host.event("pre", "PreToolUse", **call)
    if event == "PostToolUse":
        CHANGES["disable-hooks"](host)
    host.event("post", "PostToolUse", **call, tool_response={"content": "x"})


@pytest.mark.slow
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_between_events_fails_the_session(host: Host, change: str) -> None:
    host.start()
    host.call()
    CHANGES[change](host)
    host.pre()
    (note,) = host.notes()
    expected = {
        "managed-settings": str(host.managed),
        "project-settings": str(host.project / ".claude" / "settings.json"),
    }.get(change) or SHOWN[change]
    assert note["effects"] == {"hostSettings": [expected]}
    assert host.judged() == (Verdict.FAIL, ["host-settings-changed"])


@pytest.mark.parametrize("event", ["Stop", "SessionEnd", "PostToolUse"])
def test_every_event_compares(host: Host, event: str) -> None:
    host.start()
    host.call()
    if event == "PostToolUse":
        _read_call(host, event)
    else:
        CHANGES["disable-hooks"](host)
        if event == "Stop":
            host.event("stop", "Stop")
        else:
            host.end()
    (note,) = host.notes()
    assert f"(seen at {event})" in note["result"]["errorMessage"]
    assert host.judged()[0] == Verdict.FAIL


def test_session_end_reports_the_change_and_keeps_the_state(host: Host) -> None:
    host.start()
    host.call()
    CHANGES["managed-settings"](host)
    host.end()
    report = yaml.safe_load(load_report_text(host.storage, SESSION) or "")
    assert report["verdict"] == "FAIL"
    end = host.records()[-1]
    assert end["tool"] == "SessionEnd"
    assert end["session"]["hostSettings"] == host_settings_state(
        str(host.home), names=list(end["session"]["hostSettings"])
    )


def test_audit_report_finds_a_change_after_the_last_event(host: Host) -> None:
    host.start()
    started: list[Callable[[], None]] = []
    host.call(during=lambda: started.append(_disable_hooks_in_the_background(host)))
    started[0]()  # the hooks are off: no event comes after this
    assert host.judged() == (Verdict.PASS, [])
    report = yaml.safe_load(host.report())
    assert report["verdict"] == "FAIL"
    assert report["other_reasons"] == [
        "FAIL: the host's settings changed after the last hook event: ~/.claude/settings.json "
        "(nothing after it was seen)",
        "WARN: the session has no SessionEnd record: its hooks stopped before it ended (nothing "
        "after the last hook event was seen), or it is still running",
    ]
    data = json.loads(host.report("--json"))
    assert yaml.safe_load(data["sessionReport"])["verdict"] == "FAIL"
    assert host.notes() == []  # reading records nothing


def test_a_session_without_session_end_is_flagged_and_an_ended_one_is_not(host: Host) -> None:
    host.start()
    host.call()
    report = yaml.safe_load(host.report())
    assert report["verdict"] == "WARN"
    assert [r.split(":")[0] for r in report["other_reasons"]] == ["WARN"]
    assert "no SessionEnd record" in report["other_reasons"][0]
    host.end()
    CHANGES["disable-hooks"](host)  # after the end: the user's own business
    report = yaml.safe_load(host.report())
    assert (report["verdict"], report["other_reasons"]) == ("PASS", [])


BENIGN: dict[str, Callable[[Host], None]] = {
    "host-bookkeeping": lambda h: h.write(
        ".claude.json",
        {"numStartups": 2, "tipsHistory": {"t": 3}, "projects": {"/p": {"lastCost": 1}}},
    ),
    "unrelated-key": lambda h: h.write(
        ".claude/settings.json", {"hooks": {"PreToolUse": []}, "model": "other"}
    ),
}  # the project settings' ``permissions``: test_hook_permissions_between.py


@pytest.mark.slow
@pytest.mark.parametrize("change", list(BENIGN))
def test_benign_changes_between_events_pass(host: Host, change: str) -> None:
    host.start()
    host.call()
    BENIGN[change](host)
    host.call()
    host.end()
    assert host.notes() == []
    assert host.judged() == (Verdict.PASS, [])
    assert yaml.safe_load(host.report())["verdict"] == "PASS"


def test_no_claude_folder_passes(host: Host) -> None:
    for path in sorted(host.home.rglob("*"), key=lambda p: -len(p.parts)):
        path.rmdir() if path.is_dir() else path.unlink()
    host.managed.unlink()
    host.start()
    host.call()
    host.end()
    assert host.judged() == (Verdict.PASS, [])


@pytest.mark.parametrize("scope", ["--user", "--project"])
def test_hooks_installed_before_the_session_starts_pass(host: Host, scope: str) -> None:
    argv = ["hook", "install", scope, "--dir", str(host.project)]
    code, _out, err = harness_audit(argv, env=host.env)
    assert code == 0, err
    host.start()
    host.call()
    host.end()
    assert host.notes() == []
    assert host.judged() == (Verdict.PASS, [])


@pytest.mark.slow
def test_a_start_after_the_end_takes_a_new_state_without_comparing(host: Host) -> None:
    host.start()
    host.call()
    host.end()
    CHANGES["mcp-server"](host)
    host.event("session-start", "SessionStart", source="resume")
    host.call()
    host.end()
    assert host.notes() == []


def test_a_start_within_the_session_compares(host: Host) -> None:
    host.start()
    host.call()
    CHANGES["mcp-server"](host)
    host.event("session-start", "SessionStart", source="compact")
    (note,) = host.notes()
    assert note["effects"] == {"hostSettings": ["~/.claude.json"]}


def test_a_folder_digest_is_bounded_and_sees_a_change(tmp_path: Path) -> None:
    home = tmp_path / "home"
    agents = home / ".claude" / "agents"
    agents.mkdir(parents=True)
    for number in range(FOLDER_ENTRY_LIMIT + 5):
        (agents / f"{number:05d}.md").write_text("x")
    first = host_settings_state(str(home))[".claude/agents/"]
    assert first is not None and first.startswith(f"over {FOLDER_ENTRY_LIMIT} entries: ")
    (agents / "00000.md").write_text("y")
    assert host_settings_state(str(home))[".claude/agents/"] != first


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_a_settings_file_s_place_does_not_block(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    os.mkfifo(tmp_path / ".claude" / "settings.json")
    began = time.monotonic()
    state = host_settings_state(str(tmp_path))
    assert time.monotonic() - began < 5
    assert str(state[".claude/settings.json"]).startswith("not a file: p")
