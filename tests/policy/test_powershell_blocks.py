"""PowerShell code run from a script block or through the call operator is read too.

``& { … }``, ``Invoke-Command -ScriptBlock { … }`` and ``… | % { … }`` run the block's code; as
one POSIX text the block was a word (``{rm``) or a syntax error, and ``& {Remove-Item -Recurse
app}`` was allowed. Each block's text is now read as statements of its own, and a leading call
operator (``&``) or dot-sourcing (``.``) is dropped. Braces inside quotes are text.
"""

from __future__ import annotations

import pytest

from pytest_harness_audit.policy import Policy

SAFETY = Policy.preset("safety")


@pytest.mark.parametrize(
    "command",
    [
        "& {Remove-Item -Recurse app}",
        "& { Remove-Item -Recurse -Force app }",
        "Invoke-Command -ScriptBlock { Remove-Item -Recurse app }",
        "Invoke-Command -ScriptBlock { & { ri -r -fo app } }",
        "1..3 | % { Remove-Item -Recurse app }",
        'Write-Output "a"; & { rm -r -fo app }',
        "icm { Remove-Item -Recurse app }",
    ],
)
def test_a_deletion_in_a_script_block_is_denied(command: str) -> None:
    evaluation = SAFETY.evaluate("PowerShell", {"command": command})
    assert (evaluation.decision, evaluation.rule_id) == ("deny", "deny-destructive-commands")


@pytest.mark.parametrize(
    "command",
    [
        "& { Get-Content .env }",
        "Invoke-Command -ScriptBlock { type .env }",
    ],
)
def test_a_credential_read_in_a_script_block_is_denied(command: str) -> None:
    evaluation = SAFETY.evaluate("PowerShell", {"command": command})
    assert (evaluation.decision, evaluation.rule_id) == ("deny", "deny-secret-files")


@pytest.mark.parametrize(
    "command",
    [
        "Write-Output '{Remove-Item -Recurse app}'",
        'Write-Output "{Remove-Item -Recurse app}"',
        "$h = @{a=1}; $h",
        "Get-ChildItem | Where-Object { $_.Length -gt 1kb }",
        "& ./tools/build.ps1 -Release",
        ". ./setup.ps1",
        "Get-ChildItem -Recurse | ForEach-Object { $_.FullName }",
    ],
)
def test_benign_blocks_and_call_operators_are_allowed(command: str) -> None:
    assert SAFETY.evaluate("PowerShell", {"command": command}).decision == "allow"
