"""The project settings' ``permissions`` in a call's window: the host writes an ``allow`` rule
to ``.claude/settings.local.json`` when the user allows a tool for good at its prompt. That
write is the host's, not the call's: judged by what it adds, as ``allowedTools`` is, while any
other key of the file still counts as a protected change."""

from __future__ import annotations

from typing import Any

import pytest
from host_support import LOCAL, Host, config_change, prompt, write_project

from pytest_harness_audit.readers.verdict import Verdict


def _bash(host: Host) -> dict[str, Any]:
    return next(r for r in host.records() if r["tool"] == "Bash")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["settings.local.json", "settings.json"])
def test_always_allow_at_the_prompt_passes(host: Host, name: str) -> None:
    host.start()
    call = host.pre()
    prompt(host, call)
    write_project(host, name, {"permissions": {"allow": ["Bash(touch:*)"]}})
    host.post(call)
    host.call()
    host.end()
    record = _bash(host)
    assert "protected_file_changed" not in (record.get("alerts") or ())
    assert record["effects"]["hostPermissions"] == {"added": ["Bash(touch:*)"], "removed": 0}
    assert host.judged() == (Verdict.PASS, [])


def test_an_entry_for_the_call_with_no_prompt_seen_warns(host: Host) -> None:
    host.start()
    host.call(
        lambda: write_project(host, LOCAL, {"permissions": {"allow": ["Bash(touch notes.txt)"]}})
    )
    host.end()
    record = _bash(host)
    assert record["alerts"] == ["host_permission_added"]
    assert host.judged()[0] == Verdict.WARN


@pytest.mark.parametrize(
    "document",
    [
        {"permissions": {"allow": ["Bash(*)"]}},  # every command: no prompt offers it
        {"permissions": {"allow": ["Bash(touch:*)"], "defaultMode": "bypassPermissions"}},
        {"permissions": {"allow": ["Bash(touch:*)"]}, "hooks": {}},  # hooks switched off
    ],
    ids=["every-command", "bypass-mode", "hooks-too"],
)
def test_more_than_the_prompt_offers_fails(host: Host, document: dict[str, Any]) -> None:
    host.start()
    call = host.pre()
    prompt(host, call)
    write_project(host, LOCAL, document)
    host.post(call)
    host.end()
    record = _bash(host)
    assert "protected_file_changed" in record["alerts"]
    assert host.judged()[0] == Verdict.FAIL


def test_the_host_s_config_change_after_the_call_finds_the_state_recorded(host: Host) -> None:
    host.start()
    call = host.pre()
    prompt(host, call)
    write_project(host, LOCAL, {"permissions": {"allow": ["Bash(touch:*)"]}})
    host.post(call)
    state = _bash(host)["hostSettings"]  # the chain holds the state now
    assert state[f"permissions:{host.project}"] is not None
    # the host's file watcher reports the same write after the call closed
    code, answer, err = config_change(
        host, "local_settings", host.project / ".claude" / "settings.local.json"
    )
    assert (code, answer) == (0, {}), err
    host.end()
    assert host.judged() == (Verdict.PASS, [])
