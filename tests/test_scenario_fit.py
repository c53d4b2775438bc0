"""A scenario's own ``workspace:`` and ``policy:`` are honoured, or refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.session.harness import Harness

pytest_plugins = ["pytester"]

STRICT = """\
name: strict-one
description: Runs under strict.
workspace: python-service
policy: strict
steps:
  - tool: Read
    params: {file_path: README.md}
"""


def _scenario(tmp_path: Path, text: str = STRICT) -> Path:
    path = tmp_path / "strict-one.yaml"
    path.write_text(text)
    return path


def test_a_different_policy_is_refused_naming_file_field_and_both_values(tmp_path: Path) -> None:
    path = _scenario(tmp_path)
    harness = Harness.create(tmp_path / "s", template="python-service", policy="safety")
    with pytest.raises(UsageError) as caught:
        harness.run_script(path)
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message
    assert "field 'policy'" in message
    assert "'strict'" in message and "'safety'" in message
    assert harness.records == []  # refused before any step ran
    harness.close()


def test_a_different_workspace_is_refused(tmp_path: Path) -> None:
    path = _scenario(tmp_path)
    harness = Harness.create(tmp_path / "s", template="node-package", policy="strict")
    with pytest.raises(UsageError, match=r"field 'workspace'.*'python-service'.*'node-package'"):
        harness.run_script(path)
    harness.close()


def test_no_template_is_the_empty_workspace_and_is_refused_too(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path / "s", policy="strict")
    with pytest.raises(UsageError, match=r"'python-service'.*'empty'"):
        harness.run_script(_scenario(tmp_path))
    harness.close()


def test_the_same_policy_by_content_and_workspace_runs(tmp_path: Path) -> None:
    (tmp_path / "pol.yaml").write_text("preset: strict\n")
    text = STRICT.replace("policy: strict", "policy: ./pol.yaml")
    harness = Harness.create(tmp_path / "s", template="python-service", policy="strict")
    results = harness.run_script(_scenario(tmp_path, text))
    assert [r.tool for r in results] == ["Read"]
    harness.close()


def test_a_scenario_without_fields_runs_anywhere(tmp_path: Path) -> None:
    text = "name: bare\ndescription: x\nsteps:\n  - tool: Glob\n    params: {pattern: '*'}\n"
    harness = Harness.create(tmp_path / "s", template="node-package", policy="permissive")
    assert harness.run_script(_scenario(tmp_path, text))[0].ok
    harness.close()


def test_the_strict_scenario_really_runs_under_strict_through_the_factory(
    pytester: pytest.Pytester,
) -> None:
    scenario = pytester.path / "bash-under-strict.yaml"
    scenario.write_text(
        "name: bash-under-strict\ndescription: x\nworkspace: node-package\npolicy: strict\n"
        "steps:\n  - tool: Bash\n    params: {command: ls}\n"
    )
    pytester.makepyfile(
        """
import pytest

def test_factory(harness_factory):
    session = harness_factory(scenario="bash-under-strict.yaml")
    assert session.policy.name == "strict"
    assert (session.root / "package.json").is_file()
    result = session.run_script("bash-under-strict.yaml")[0]
    assert result.decision == "deny", result

def test_fixture_refuses(harness):
    harness.run_script("bash-under-strict.yaml")
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*::test_fixture_refuses: bash-under-strict.yaml: field 'policy'*"]
    )
