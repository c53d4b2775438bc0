"""A PowerShell command too long or nested too deep to read is unreadable (WARN under
``safety``), not read at the cost of minutes; what its plain text says still counts."""

from __future__ import annotations

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell.powershell import as_posix


@pytest.fixture(scope="module")
def safety() -> Policy:
    return Policy.preset("safety")


def _decide(policy: Policy, command: str) -> tuple[str, str | None]:
    evaluation = policy.evaluate("PowerShell", {"command": command})
    return evaluation.decision, evaluation.rule_id


def test_nesting_up_to_the_bound_is_read(safety: Policy) -> None:
    command = "[IO.File]::ReadAllText(" * 24 + "'.env'" + ")" * 24
    assert _decide(safety, command) == ("deny", "deny-secret-files")


@pytest.mark.parametrize(
    "command",
    [
        "{" * 20_000 + "}" * 20_000,
        "[IO.File]::ReadAllText(" * 3_000 + "'x'" + ")" * 3_000,
        "{" * 25 + " Get-Content README.md " + "}" * 25,
        "Get-Content README.md; " * 4_000,
    ],
    ids=["braces", "dotnet-calls", "one-too-deep", "too-long"],
)
def test_beyond_the_bounds_is_unreadable(safety: Policy, command: str) -> None:
    assert _decide(safety, command) == ("warn", "unreadable-command")
    assert "nested too deep" in as_posix(command) or "too long" in as_posix(command)


def test_plain_text_of_an_unreadable_command_still_counts(safety: Policy) -> None:
    command = "{" * 30 + "}" * 30 + "; Remove-Item app -Recurse -Force"
    assert _decide(safety, command) == ("deny", "deny-destructive-commands")
