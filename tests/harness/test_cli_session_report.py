"""`harness-audit audit report SESSION` prints the session report written by --harness-audit."""

from __future__ import annotations

import json

import pytest

from pytest_harness_audit.audit.storage import list_sessions
from pytest_harness_audit.cli import main as cli

pytest_plugins = ["pytester"]


def test_report_of_a_session(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    pytester.makepyfile(
        test_one="""
import pytest

@pytest.mark.expect_verdict("FAIL")
def test_it(harness):
    harness.call("Glob", pattern="*")
    harness.call("Bash", command="rm -rf /")
"""
    )
    pytester.runpytest("--harness-audit", "--harness-audit-dir", "kept").assert_outcomes(passed=1)
    capsys.readouterr()
    storage = str(pytester.path / "kept")
    (session,) = list_sessions(storage)
    assert cli(["--storage", storage, "audit", "report", session]) == 0
    out = capsys.readouterr().out
    assert "verdict: FAIL" in out
    assert "Bash" in out and "deny-destructive-commands" in out
    assert "=== Audit Report ===" in out  # the statistics follow the session report
    assert cli(["--storage", storage, "audit", "report", session, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "verdict: FAIL" in data["sessionReport"]
    assert cli(["--storage", storage, "audit", "report", "nope"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err
