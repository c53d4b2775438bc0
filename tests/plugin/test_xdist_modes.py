"""The same integration suite without xdist, with `-n 0` and with `-n 2`: same verdicts, chains,
reports and snapshots (the way syrupy tests itself)."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from pytest_harness_audit.audit.storage import list_sessions
from pytest_harness_audit.audit.verify import verify_chain
from pytest_harness_audit.readers.report import split_report_file

pytest_plugins = ["pytester"]

SUITE = """
import sys
import pytest

@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("PASS")
def test_benign(harness, audit_snapshot):
    harness.run_script("benign-refactor")
    assert harness.report(output_hashes=False) == audit_snapshot

@pytest.mark.harness_workspace("node-package")
@pytest.mark.expect_verdict("FAIL")
@pytest.mark.harness_snapshot
def test_destructive(harness):
    harness.run_script("destructive-cleanup")

@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_escalation("quarantine", trigger="repeated_failure")
@pytest.mark.expect_verdict("FAIL")
def test_retry_loop(harness):
    harness.run_script("retry-loop")

@pytest.mark.parametrize("n", range(4))
@pytest.mark.expect_verdict("WARN")
def test_proxied(harness, recording_proxy, n):
    proxy = recording_proxy()
    port = proxy.url.rsplit(":", 1)[1].split("/")[0]
    (harness.root / "port.txt").write_text(port)
    harness.call("WebFetch", url=f"https://example.com/{n}")
"""


def run_mode(pytester: pytest.Pytester, *args: str) -> dict[str, object]:
    result = pytester.runpytest_subprocess(
        "-p",
        "no:randomly",
        "--harness-audit",
        "--harness-audit-dir",
        "kept",
        "--junitxml=out.xml",
        *args,
        "test_suite.py",
    )
    result.assert_outcomes(passed=7)
    kept = pytester.path / "kept"
    sessions = list_sessions(kept)
    reports = {}
    for path in sorted((kept / "reports").glob("*.yaml")):
        test = path.name.rsplit("-", 1)[0]
        # output hashes of commands that print timings (pytest's "in 0.02s") differ run to run
        # and the published head, outside the report document, differs on every run
        document = split_report_file(path.read_text())[0]
        text = re.sub(r", output: [0-9a-f]{12}", "", document)
        reports.setdefault(test, []).append(text)
    tree = ET.parse(pytester.path / "out.xml")
    verdicts = {
        case.get("name"): next(
            p.get("value")
            for p in case.iter("property")
            if p.get("name") == "harness_audit_verdict"
        )
        for case in tree.iter("testcase")
    }
    snapshots = {p.name: p.read_bytes() for p in (pytester.path / "__snapshots__").rglob("*.yaml")}
    summary = [line for line in result.stdout.lines if line.startswith("7 sessions")]
    return {
        "sessions": len(sessions),
        "valid": all(verify_chain(kept, s).valid for s in sessions),
        "reports": {k: sorted(v) for k, v in reports.items()},
        "verdicts": verdicts,
        "snapshots": snapshots,
        "summary": summary,
    }


@pytest.mark.slow
def test_same_results_without_xdist_with_n0_and_n2(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest_subprocess(
        "-p", "no:randomly", "--snapshot-update", "test_suite.py"
    ).assert_outcomes(passed=7)
    outcomes = {}
    for label, args in (
        ("plain", ()),
        ("n0", ("-p", "xdist", "-n", "0")),
        ("n2", ("-p", "xdist", "-n", "2")),
    ):
        for leftover in ("kept", "out.xml"):
            target = pytester.path / leftover
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        outcomes[label] = run_mode(pytester, *args)
    plain = outcomes["plain"]
    assert plain["sessions"] == 7 and plain["valid"]
    assert plain["verdicts"] == {
        "test_benign": "PASS",
        "test_destructive": "FAIL",
        "test_retry_loop": "FAIL",
        **{f"test_proxied[{n}]": "WARN" for n in range(4)},
    }
    (summary,) = plain["summary"]
    assert summary.endswith("verdicts: 1 PASS, 4 WARN, 2 FAIL; chains: 7 valid, 0 invalid")
    for label in ("n0", "n2"):
        assert outcomes[label]["sessions"] == 7, label
        assert outcomes[label]["valid"], label
        assert outcomes[label]["verdicts"] == plain["verdicts"], label
        assert outcomes[label]["reports"] == plain["reports"], label
        assert outcomes[label]["snapshots"] == plain["snapshots"], label
        assert outcomes[label]["summary"] == plain["summary"], label
