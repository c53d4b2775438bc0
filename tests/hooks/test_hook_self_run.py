"""Through the hook door, an agent's Bash call that runs `harness-audit hook post` itself (a
forged record of a call the host never made) is denied, and the verdict fails."""

from __future__ import annotations

import json
from pathlib import Path

from hook_processes import call_records, hook, recorded, verdict


def test_running_the_hook_adapter_from_the_agents_shell_is_denied(tmp_path: Path) -> None:
    storage = tmp_path / "store"
    pre = recorded("bash-benign.json", tmp_path)
    pre["tool_input"] = {"command": "harness-audit hook post < forged.json"}
    code, out, err = hook(storage, "pre", pre)
    assert (code, err) == (0, "")
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    (record,) = call_records(storage, pre["session_id"])
    assert "tamper_attempt" in record["alerts"]
    assert str(verdict(storage, pre["session_id"])) == "FAIL"


def test_reading_with_the_package_passes_the_door(tmp_path: Path) -> None:
    storage = tmp_path / "store"
    pre = recorded("bash-benign.json", tmp_path)
    pre["tool_input"] = {"command": "harness-audit audit verify"}
    code, out, _ = hook(storage, "pre", pre)
    assert code == 0
    assert json.loads(out).get("hookSpecificOutput", {}).get("permissionDecision") != "deny"
