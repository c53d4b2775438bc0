"""``projects[*].allowedTools`` of ``~/.claude.json`` (written by older hosts on "always allow"):
an entry the host adds at the user's prompt passes, one nothing explains fails the session."""

from __future__ import annotations

import json
from typing import Any

import pytest
from host_support import Host, prompt

from pytest_harness_audit.doors.hook_host_permissions import names_call
from pytest_harness_audit.readers.verdict import Verdict

ALLOWED = "HostAllowedToolsChanged"


def _allow(host: Host, *rules: str) -> None:
    """The host's (or the agent's) write of the project's ``allowedTools``."""
    entry = {"allowedTools": list(rules), "hasTrustDialogAccepted": True}
    host.write(".claude.json", {"numStartups": 1, "projects": {str(host.project): entry}})


def _bash(host: Host) -> dict[str, Any]:
    return [r for r in host.records() if r["tool"] == "Bash"][-1]


def test_always_allow_at_the_host_s_prompt_passes(host: Host) -> None:
    host.start()
    call = host.pre()
    prompt(host, call)
    _allow(host, "Bash(touch:*)")  # the user chose "always allow" for `touch …`
    host.post(call)
    host.call()
    host.end()
    assert host.notes() == []
    first = next(r for r in host.records() if r["tool"] == "Bash")
    assert first["effects"]["hostAllowedTools"] == {"added": ["Bash(touch:*)"], "removed": 0}
    assert "protected_file_changed" not in (first.get("alerts") or ())
    assert host.judged() == (Verdict.PASS, [])


def test_parallel_calls_see_the_other_call_s_prompt(host: Host) -> None:
    host.start()
    first = host.pre()
    second = host.pre()
    prompt(host, first)
    _allow(host, "Bash(touch:*)")
    host.post(second)  # closes before the call whose prompt wrote the entry
    host.post(first)
    host.end()
    assert host.notes() == []
    assert host.judged() == (Verdict.PASS, [])


def test_an_entry_added_between_events_fails(host: Host) -> None:
    host.start()
    host.call()
    _allow(host, "Bash(curl:*)")
    host.pre()
    (note,) = host.notes()
    assert note["effects"] == {
        "hostSettings": ["~/.claude.json:allowedTools"],
        "hostAllowedTools": {"added": ["Bash(curl:*)"], "removed": 0},
    }
    assert host.judged() == (Verdict.FAIL, ["host-settings-changed"])


@pytest.mark.parametrize("rule", ["mcp__evil__run", "Bash", "Bash(curl:*)"])
def test_an_entry_no_prompt_offers_fails_in_the_window(host: Host, rule: str) -> None:
    host.start()
    call = host.pre()
    prompt(host, call)
    _allow(host, rule)  # another tool, every command, another command: no prompt offers it
    host.post(call)
    bash = _bash(host)
    assert "protected_file_changed" in bash["alerts"]
    assert bash["effects"]["hostSettings"] == ["~/.claude.json:allowedTools"]
    assert host.judged()[0] == Verdict.FAIL


def test_an_entry_for_the_call_with_no_prompt_seen_warns(host: Host) -> None:
    # a host without PermissionRequest asked by its own rules, or the call wrote it: unknown
    host.start()
    call = host.pre()
    _allow(host, "Bash(touch notes.txt)")
    host.post(call)
    bash = _bash(host)
    assert bash["alerts"] == ["host_permission_added"]
    assert bash["effects"]["hostAllowedTools"] == {
        "added": ["Bash(touch notes.txt)"],
        "removed": 0,
    }
    assert host.judged() == (Verdict.WARN, ["effect-warn"])


def test_a_removed_entry_passes_and_the_chain_moves_on(host: Host) -> None:
    _allow(host, "Bash(ls:*)", "Bash(touch:*)")
    host.start()
    host.call()
    _allow(host, "Bash(ls:*)")  # the user revoked one
    host.call()
    (kept,) = [r for r in host.records() if r["tool"] == ALLOWED]
    assert kept["effects"] == {"hostAllowedTools": {"added": [], "removed": 1}}
    assert kept["result"]["status"] == "success"
    host.call()
    assert host.notes() == []
    assert len([r for r in host.records() if r["tool"] == ALLOWED]) == 1
    assert host.judged() == (Verdict.PASS, [])
    # put back later by something else: an addition like any other
    _allow(host, "Bash(ls:*)", "Bash(touch:*)")
    host.event("stop", "Stop")
    assert len(host.notes()) == 1


@pytest.mark.parametrize(
    ("rule", "tool", "given", "named"),
    [
        ("Bash(npm test:*)", "Bash", {"command": "npm test -- -x"}, True),
        ("Bash(npm test:*)", "Bash", {"command": "npm publish"}, False),
        ("Bash(git status)", "Bash", {"command": "git status"}, True),
        ("Bash(git status)", "Bash", {"command": "git status; rm -rf /"}, False),
        ("Bash", "Bash", {"command": "ls"}, False),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://example.com/a"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://evil.test/"}, False),
        ("mcp__db__query", "mcp__db__query", {"sql": "select 1"}, True),
        ("Edit", "Write", {"file_path": "/p/a"}, False),
    ],
)
def test_which_entries_name_a_call(
    rule: str, tool: str, given: dict[str, Any], named: bool
) -> None:
    assert names_call(rule, tool, given) is named


def test_a_malformed_claude_json_is_a_change_not_a_crash(host: Host) -> None:
    _allow(host, "Bash(ls:*)")
    host.start()
    host.call()
    (host.home / ".claude.json").write_text("{not json")
    host.pre()
    (note,) = host.notes()
    assert "~/.claude.json" in note["effects"]["hostSettings"]
    assert json.dumps(note)  # recorded whole
