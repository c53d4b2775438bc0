"""A command whose name or script is a program's output the reading cannot work out is
unreadable, as the same output piped into a shell is (``policy/shell/opaque_output.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell.opaque_output import opaque_command

SAFETY = Policy.preset("safety")


def _judged(root: Path, command: str) -> tuple[str, str | None]:
    (root / "gen.py").write_text("print('rm -rf app')\n")
    evaluation = SAFETY.evaluate("Bash", {"command": command}, root=str(root))
    return evaluation.decision, evaluation.rule_id


@pytest.mark.parametrize(
    "command",
    [
        'sh -c "$(python3 gen.py)"',
        'eval "$(python3 gen.py)"',
        'bash -c "$(node gen.js)"',
        "$(python3 gen.py)",
        "$(./plan.sh) app",
        "echo $( $(python3 gen.py) )",
        'eval "$(direnv export bash)"',  # the workspace's .envrc, run
        "python3 gen.py | sh",  # as before
    ],
)
def test_a_programs_output_run_as_a_command_is_unreadable(tmp_path: Path, command: str) -> None:
    assert _judged(tmp_path, command) == ("warn", "unreadable-command")


@pytest.mark.parametrize(
    "command",
    [
        'eval "$(ssh-agent -s)"',
        'eval "$(pyenv init -)"',
        "eval $(opam env)",
        "$(which python3) -m pytest",
        '"$(command -v python3)" -V',
        'cd "$(git rev-parse --show-toplevel)" && ls',
        'echo "$(python3 gen.py)"',
        "x=$(python3 gen.py); echo $x",
        "kill $(cat server.pid)",
        "$CMD --version",
        "(( $(wc -l < README.md) > 3 ))",
        "(( $(python3 gen.py) == 2 ))",
    ],
)
def test_set_up_idioms_and_outputs_used_as_words_stay_allowed(tmp_path: Path, command: str) -> None:
    assert _judged(tmp_path, command) == ("allow", None)


def test_which_outputs_make_a_command_unreadable() -> None:
    assert opaque_command(["which", "…"]) is None
    assert opaque_command([]) is None
    assert opaque_command(["python3"]) == "it runs what a program prints (python3)"
    assert opaque_command(["git", ""]) == "it runs what a program prints (a program not named)"
