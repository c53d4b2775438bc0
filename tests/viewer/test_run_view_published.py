"""The run's session view shows what the run judged, not a chain replaced after its test.

``--harness-audit-html`` writes the view when the run ends, reading every session from its
store. A later test's agent, given an earlier session's store path in a form no rule reads,
replaces that session's chain with a fresh one of the package's own making (its modules
imported by names no reading follows) (valid, anchored,
one harmless call): its own session is untouched, and the view used to show the earlier
session PASS with a valid chain while the terminal summary, JUnit and report file said FAIL.
The view now checks each session's chain against the head the run published at its test's end
and keeps the run's verdict when it is the worse (reasons kept outside the chain: a plugin's
verdict rule, a record the disk refused). The run itself fails too: when it ends, every
session's chain is checked against its published head, and one changed since its test ended is
a red line naming it. The twin: an untouched run's view reads as before, and the run passes.
"""

from __future__ import annotations

import re

import pytest
from viewer_support import Dom

pytest_plugins = ["pytester"]

SUITE = '''
import base64, json, pathlib, sys
import pytest

@pytest.mark.expect_verdict("FAIL")
def test_1_blocked(harness):
    harness.call("Read", file_path=".env")
    where = [str(harness.storage_dir), harness.session_id]
    pathlib.Path("first.json").write_text(json.dumps(where))

REPLACE = """
import base64, importlib, os, sys
storage, session = base64.b64decode(sys.argv[1]).decode().split(chr(10))
for top, _, names in os.walk(storage):
    for name in names:
        if name.startswith(session):
            os.remove(os.path.join(top, name))
audit = importlib.import_module("".join(reversed("tidua.tidua_ssenrah_tsetyp")))
AuditChain, RecordDraft = audit.AuditChain, audit.RecordDraft
with AuditChain(storage, session) as chain:
    chain.append(RecordDraft(tool="Read", category="file_read", target="README.md"))
"""

def test_2_replaces(harness):
    storage, session = json.loads(pathlib.Path("first.json").read_text())
    where = base64.b64encode(f"{storage}\\n{session}".encode()).decode()
    script = base64.b64encode(REPLACE.encode()).decode()
    python = sys.executable
    harness.call("Bash", command=f"echo {script} | base64 -d > r.py && {python} r.py {where}")
'''


def _rows(page: str) -> dict[str, str]:
    """Each overview row's test id and its text."""
    rows = {}
    for row in Dom(page).find("tr"):
        found = re.search(r"test_\d_\w+", row.text)
        if found:
            rows.setdefault(found.group(), row.text)
    return rows


def test_a_replaced_chain_keeps_the_run_s_verdict(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        "--harness-audit", "--harness-audit-dir", "kept", "--harness-audit-html", "view.html"
    )
    result.stdout.fnmatch_lines(
        [
            "test_suite.py::test_1_blocked*FAIL",
            "harness-audit: the chain of test_1_blocked-* (test_suite.py::test_1_blocked) changed "
            "after its test ended (witness_mismatch; published head *): the run's evidence was "
            "tampered with after the fact",
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # every test passed: the run did not
    page = (pytester.path / "view.html").read_text()
    first = _rows(page)["test_1_blocked"]
    assert "FAIL" in first and "PASS" not in first, first
    assert "witness_mismatch" in page


def test_an_untouched_run_reads_as_before(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE.split("REPLACE =")[0])
    result = pytester.runpytest(
        "--harness-audit", "--harness-audit-dir", "kept", "--harness-audit-html", "view.html"
    )
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    assert "changed after its test ended" not in result.stdout.str()
    page = (pytester.path / "view.html").read_text()
    first = _rows(page)["test_1_blocked"]
    assert "FAIL" in first and "valid" in first
    assert "witness_mismatch" not in page
