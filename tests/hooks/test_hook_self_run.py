"""Through the hook door, an agent's Bash call that runs `harness-audit hook post` itself (a
forged record of a call the host never made) is denied, and the verdict fails."""

from __future__ import annotations

from pathlib import Path

from hook_processes import door_answer


def test_running_the_hook_adapter_from_the_agents_shell_is_denied(tmp_path: Path) -> None:
    answer = door_answer(tmp_path, "harness-audit hook post < forged.json")
    assert answer == ("deny", True, "FAIL")


def test_reading_with_the_package_passes_the_door(tmp_path: Path) -> None:
    answer = door_answer(tmp_path, "harness-audit audit verify")
    assert answer.decision != "deny" and not answer.tamper
