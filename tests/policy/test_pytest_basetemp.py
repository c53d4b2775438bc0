"""pytest empties its ``--basetemp`` folder as a run starts (everything in it removed): the
folder named there is destroyed as ``rm -rf`` would, however pytest is started."""

from __future__ import annotations

import pytest

from pytest_harness_audit.policy import Policy

SAFETY = Policy.preset("safety")


@pytest.mark.parametrize(
    "command",
    [
        "pytest --basetemp=app -q",
        "pytest -q --basetemp app",
        "py.test --basetemp=app",
        "pytest --basete=app",
        "python -m pytest --basetemp=. -q",
        "python3 -m pytest tests --basetemp app",
        "uv run pytest --basetemp=app",
        "cd app && pytest --basetemp=..",
    ],
)
def test_a_basetemp_folder_is_destroyed(command: str) -> None:
    evaluation = SAFETY.evaluate("Bash", {"command": command})
    assert evaluation.decision == "deny", command
    assert evaluation.rule_id == "deny-destructive-commands"


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "pytest -q tests/unit --maxfail=1",
        "python -m pytest tests/ -q -p no:cacheprovider",
        "pytest -q -- --basetemp=app",  # after `--`: a test's own argument
        "pytest -k basetemp",
    ],
)
def test_a_run_without_a_basetemp_keeps_its_verdict(command: str) -> None:
    assert SAFETY.evaluate("Bash", {"command": command}).decision == "allow", command
