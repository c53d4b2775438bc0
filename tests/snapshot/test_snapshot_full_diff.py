"""A failed ``audit_snapshot`` comparison shows every changed line without ``-vv``."""

from __future__ import annotations

import pytest

TEST = """
import os

def test_snap(harness, audit_snapshot):
    harness.call("Read", file_path="README.md")
    if os.environ.get("CHANGE"):
        harness.call("Bash", command="ls")
        harness.call("Read", file_path="app/service.py")
    assert harness.report() == audit_snapshot
"""


def test_every_changed_line_is_shown_without_vv(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)  # pytest never shortens explanations on CI
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    pytester.makepyfile(TEST)
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=1)
    monkeypatch.setenv("CHANGE", "1")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*harness audit: snapshot diff (every changed line)*",
            "--- snapshot test_snap.audit.yaml::test_snap",
            "+++ received report",
            "+  - {position: 1, tool: Bash, *",
            "+  - {position: 2, tool: Read, *app/service.py*",
            "-chain: {valid: true, records: 1}",  # the line pytest's own explanation cut off
            "+chain: {valid: true, records: 3}",
        ]
    )


def test_a_passing_snapshot_adds_no_section(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(TEST)
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=1)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "snapshot diff" not in result.stdout.str()
