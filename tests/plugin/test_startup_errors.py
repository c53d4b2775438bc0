"""A mistake a user can make gives one line, naming the option, test or file, at the earliest
moment: options at start-up (exit 4), set-up markers at collection (exit 4), and a bad scenario
or policy met inside a test as the test's one-line failure, never the plugin's traceback."""

from __future__ import annotations

import pytest

PLAIN_TEST = """
def test_it(harness):
    harness.call("Glob", pattern="*")
"""


def _output(result: pytest.RunResult) -> str:
    return result.stdout.str() + result.stderr.str()


def _assert_no_traceback(result: pytest.RunResult) -> None:
    text = _output(result)
    assert "Traceback" not in text
    assert "pytest_harness_audit/" not in text, text


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--harness-audit-policy", "nope.yaml"],
            "ERROR: --harness-audit-policy: policy 'nope.yaml': not a preset, and no policy file*",
        ),
        (
            ["--harness-audit", "--harness-audit-dir", "afile"],
            "ERROR: --harness-audit-dir */afile: exists and is not a directory",
        ),
        (
            ["--harness-audit-dir", "kept"],
            "ERROR: --harness-audit-dir kept: has no effect without --harness-audit",
        ),
    ],
)
def test_a_bad_option_stops_the_run_at_start_up(
    pytester: pytest.Pytester, args: list[str], line: str
) -> None:
    pytester.makepyfile(PLAIN_TEST)
    pytester.path.joinpath("afile").write_text("not a directory\n")
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line])
    assert "test_it" not in result.stdout.str()  # no test ran
    _assert_no_traceback(result)


def test_a_bad_ini_policy_names_the_ini_setting(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nharness_audit_policy = rules/missing.yaml\n")
    pytester.makepyfile(PLAIN_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ini harness_audit_policy: policy 'rules/missing.yaml'*"])


def test_a_good_policy_file_option_runs(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("rules.yaml").write_text(
        "name: mine\ndefaultPolicy: allow\nenforce: true\nrules: []\n"
    )
    pytester.makepyfile(PLAIN_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--harness-audit-policy", "rules.yaml")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("marker", "line"),
    [
        (
            '@pytest.mark.harness_workspace("django-app")',
            "ERROR: test_it.py::test_it: harness_workspace: unknown workspace template "
            "'django-app' (available: *)",
        ),
        (
            '@pytest.mark.harness_policy("missing.yaml")',
            "ERROR: test_it.py::test_it: harness_policy: policy 'missing.yaml': not a preset*",
        ),
        (
            '@pytest.mark.harness_policy("broken.yaml")',
            "ERROR: test_it.py::test_it: harness_policy: *broken.yaml*",
        ),
    ],
)
def test_a_bad_set_up_marker_stops_the_run_at_collection(
    pytester: pytest.Pytester, marker: str, line: str
) -> None:
    pytester.path.joinpath("broken.yaml").write_text("name: x\nrules: [oops\n")
    pytester.makepyfile(test_it=f"import pytest\n\n{marker}\n{PLAIN_TEST}")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line])
    _assert_no_traceback(result)


SCENARIO = """\
name: bad
description: a step with a misspelt field
steps:
  - tool: Read
    params: {file_path: README.md}
  - tool: Read
    parms: {file_path: README.md}
"""


def test_a_bad_scenario_is_the_tests_one_line_failure(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("bad.yaml").write_text(SCENARIO)
    pytester.makepyfile(
        """
def test_script(harness):
    harness.run_script("bad.yaml")

def test_factory(harness_factory):
    harness_factory(scenario="bad.yaml")

def test_fine(harness):
    harness.call("Glob", pattern="*")
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    expected = (
        "bad.yaml:7: step 2, field 'parms': unknown key (expected one of: tool, params, expect)"
    )
    result.stdout.fnmatch_lines(
        [
            f"test_a_bad_scenario_is_the_tests_one_line_failure.py::test_script: {expected}",
            f"test_a_bad_scenario_is_the_tests_one_line_failure.py::test_factory: {expected}",
        ]
    )
    _assert_no_traceback(result)


def test_tb_long_keeps_the_traceback_of_a_project_error(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("bad.yaml").write_text(SCENARIO)
    pytester.makepyfile('def test_script(harness):\n    harness.run_script("bad.yaml")\n')
    result = pytester.runpytest("-p", "no:cacheprovider", "--tb=long")
    result.assert_outcomes(failed=1)
    assert "ScenarioError" in result.stdout.str()
