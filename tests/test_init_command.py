"""``harness-audit init``: a starter test that runs, a policy extending safety, an ignore line;
idempotent."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.cli import main


def test_init_writes_a_project_that_runs_and_is_idempotent(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    project = pytester.path
    (project / ".gitignore").write_text("build/")  # no final newline: kept, line added
    assert main(["init", str(project)]) == 0
    first = capsys.readouterr().out.splitlines()
    assert first == [
        "wrote    test_agent_harness.py",
        "wrote    harness-policy.yaml",
        "updated  .gitignore (ignores .harness-audit/)",
        "Next: pytest --harness-audit test_agent_harness.py",
    ]
    assert (project / ".gitignore").read_text() == "build/\n.harness-audit/\n"
    assert main(["init", str(project)]) == 0
    again = capsys.readouterr().out.splitlines()
    assert again[:3] == [
        "kept     test_agent_harness.py (exists)",
        "kept     harness-policy.yaml (exists)",
        "kept     .gitignore (already ignores .harness-audit/)",
    ]
    assert (project / ".gitignore").read_text() == "build/\n.harness-audit/\n"
    result = pytester.runpytest("-p", "no:cacheprovider", "--harness-audit")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*verdicts: 1 PASS, 0 WARN, 1 FAIL*"])


def test_init_refuses_a_missing_directory(tmp_path: Path, capsys) -> None:
    assert main(["init", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err.strip().endswith("nope: not a directory")
