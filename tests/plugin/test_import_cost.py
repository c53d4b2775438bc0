"""Importing the plugin (what every pytest run does where the package is installed) loads a
handful of the package's modules and none of the heavy ones: counted in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

import pytest

MAX_PROJECT_MODULES = 15


def modules_loaded_by(statement: str) -> list[str]:
    """Every module a fresh interpreter loads to run ``statement`` (``-X importtime``)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    return [line.rsplit("|", 1)[1].strip() for line in lines[1:]]  # the first is the header


@pytest.fixture(scope="module")
def plugin_modules() -> list[str]:
    return modules_loaded_by("import pytest_harness_audit.plugin")


def test_the_count_sees_the_modules_of_an_import() -> None:
    loaded = modules_loaded_by("import pytest_harness_audit.session.harness")
    assert "pytest_harness_audit.session.harness" in loaded
    assert any(name == "git" for name in loaded)


def test_importing_the_plugin_loads_few_project_modules(plugin_modules: list[str]) -> None:
    ours = [m for m in plugin_modules if m.split(".")[0] == "pytest_harness_audit"]
    assert "pytest_harness_audit.plugin" in ours
    assert len(ours) <= MAX_PROJECT_MODULES, ours


@pytest.mark.parametrize(
    "heavy",
    [
        "git",
        "syrupy",
        "mcp",
        "yaml",
        "pytest_harness_audit.social",
        "pytest_harness_audit.session",
        "pytest_harness_audit.doors",
        "pytest_harness_audit.gate",
        "pytest_harness_audit.policy",
        "pytest_harness_audit.readers",
        "pytest_harness_audit.audit",
    ],
)
def test_importing_the_plugin_loads_no_heavy_module(plugin_modules: list[str], heavy: str) -> None:
    found = [m for m in plugin_modules if m == heavy or m.startswith(heavy + ".")]
    assert not found


@pytest.mark.slow  # a whole pytest run in a process of its own
def test_a_run_that_uses_no_harness_loads_none_of_it(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import sys

def pytest_unconfigure(config):
    heavy = ("git", "pytest_harness_audit.session", "pytest_harness_audit.social",
             "pytest_harness_audit.policy", "pytest_harness_audit.readers")
    found = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))
    print("loaded:", ", ".join(found) or "none")
"""
    )
    pytester.makepyfile(test_plain="def test_x():\n    assert True\n")
    result = pytester.runpytest_subprocess("--strict-markers", "-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["loaded: none"])
