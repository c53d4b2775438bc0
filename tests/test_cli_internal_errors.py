"""An internal error in a command is one line naming the command, exit 2: never a traceback."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_harness_audit.cli import main
from pytest_harness_audit.policy import Policy


def test_an_internal_error_is_one_line_naming_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    def broken(self: Policy, *args: Any, **kwargs: Any) -> Any:
        raise IndexError("list index out of range")

    monkeypatch.setattr(Policy, "evaluate", broken)
    code = main(["--storage", str(tmp_path), "policy", "test", "Bash", "ls"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [
        "harness-audit: internal error in 'policy test': IndexError: list index out of range"
    ]
    assert "Traceback" not in err


def test_a_command_that_works_is_untouched(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    assert main(["--storage", str(tmp_path), "policy", "test", "Bash", "ls"]) == 0
    assert "Decision:   allow" in capsys.readouterr().out
