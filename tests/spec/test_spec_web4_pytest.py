"""web4-governance spec sentences under pytest: the plugin config read by ``--harness-audit``.

* ``storagePath`` — where records go (``--harness-audit-dir`` and an ini value win over it);
* ``auditLevel: verbose`` — each R6 record one line on stderr with ``-v`` and ``--harness-audit``;
* ``showR6Status`` — the chain status line of each session in the summary.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit.storage import list_sessions

pytest_plugins = ["pytester"]

SUITE = """
import pytest

@pytest.mark.expect_verdict("WARN")
def test_calls(harness):
    harness.call("Read", file_path="README.md")
    harness.call("WebFetch", url="https://example.com")
"""


def web4(pytester: pytest.Pytester, **section: Any) -> str:
    section.setdefault("policy", {"preset": "safety"})
    path = pytester.path / "web4.json"
    path.write_text(json.dumps({"plugins": {"web4-governance": section}}), encoding="utf-8")
    return str(path)


def test_storage_path_is_where_the_chains_go(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    policy = web4(pytester, storagePath="records")
    result = pytester.runpytest("--harness-audit", "--harness-audit-policy", policy)
    result.assert_outcomes(passed=1)
    assert list_sessions(pytester.path / "records")
    assert not (pytester.path / ".harness-audit").exists()
    result.stdout.fnmatch_lines(["harness-audit: policy *web4.json, chains in *records"])


def test_storage_path_expands_the_home_directory(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = pytester.path / "home"
    monkeypatch.setenv("HOME", str(home))
    pytester.makepyfile(test_suite=SUITE)
    policy = web4(pytester, storagePath="~/w4")
    pytester.runpytest("--harness-audit", "--harness-audit-policy", policy).assert_outcomes(
        passed=1
    )
    assert list_sessions(home / "w4")


def test_the_command_line_and_the_ini_file_win_over_storage_path(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    policy = web4(pytester, storagePath="records")
    pytester.runpytest(
        "--harness-audit", "--harness-audit-policy", policy, "--harness-audit-dir", "cli"
    ).assert_outcomes(passed=1)
    assert list_sessions(pytester.path / "cli")
    pytester.makeini("[pytest]\nharness_audit_dir = from-ini\n")
    pytester.runpytest("--harness-audit", "--harness-audit-policy", policy).assert_outcomes(
        passed=1
    )
    assert list_sessions(pytester.path / "from-ini")
    assert not (pytester.path / "records").exists()


def _web4_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("[web4] ")]


@pytest.mark.slow
def test_verbose_prints_each_r6_record_with_v_and_harness_audit(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    policy = web4(pytester, auditLevel="verbose")
    result = pytester.runpytest_subprocess(
        "-v", "-s", "--harness-audit", "--harness-audit-policy", policy
    )
    result.assert_outcomes(passed=1)
    lines = _web4_lines(result.stderr.str())
    assert len(lines) == 2, result.stderr.str()
    assert re.fullmatch(r"\[web4\] R6 audit:\w+ Read README\.md: allow, success", lines[0])
    assert lines[1].startswith("[web4] Policy WARN: WebFetch https://example.com: ")


@pytest.mark.slow
def test_without_v_nothing_is_printed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    policy = web4(pytester, auditLevel="verbose")
    result = pytester.runpytest_subprocess(
        "-s", "--harness-audit", "--harness-audit-policy", policy
    )
    result.assert_outcomes(passed=1)
    assert _web4_lines(result.stderr.str()) == []


@pytest.mark.slow
def test_a_warn_prints_one_line_at_the_standard_level(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    policy = web4(pytester)
    result = pytester.runpytest_subprocess(
        "-v", "-s", "--harness-audit", "--harness-audit-policy", policy
    )
    lines = _web4_lines(result.stderr.str())
    assert len(lines) == 1 and lines[0].startswith("[web4] Policy WARN: WebFetch")


def test_show_r6_status_adds_the_chain_status_line_to_the_summary(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    policy = web4(pytester, showR6Status=True)
    result = pytester.runpytest("--harness-audit", "--harness-audit-policy", policy)
    result.assert_outcomes(passed=1)
    result.stdout.re_match_lines(
        [r"^test_suite\.py::test_calls: R6 chain: \d+ records, valid, head [0-9a-f]{8}$"]
    )
    quiet = web4(pytester)
    result = pytester.runpytest("--harness-audit", "--harness-audit-policy", quiet)
    assert "R6 chain:" not in result.stdout.str()


def test_a_bad_plugin_section_stops_the_run_naming_the_field(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    policy = web4(pytester, showR6Status="yes")
    result = pytester.runpytest("--harness-audit", "--harness-audit-policy", policy)
    assert result.ret != 0
    assert "showR6Status" in result.stderr.str() + result.stdout.str()
    assert "must be true or false, got 'yes'" in result.stderr.str() + result.stdout.str()
    assert Path(policy).exists()
