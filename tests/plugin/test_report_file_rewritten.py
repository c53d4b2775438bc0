"""A session's report file rewritten after its test: the CLI prints the chain, not the copy.

``pytest --harness-audit`` writes each session's report to ``<storage>/reports/`` when its test
ends, and ``harness-audit audit report SESSION`` printed that file as found. A later test's
agent, given the path in a form no rule reads (base64, decoded by the program it runs), turns
the first session's ``verdict: FAIL`` into ``verdict: PASS`` and drops the line of its blocked
call; the chain of the first session is untouched and still judges FAIL. The CLI must refuse to
show the rewritten file, say what the chain judges and exit 1. The twins: a report file left as
written is printed as before, and one of a session whose chain is FAIL because the run said so
(a verdict rule from a plugin, outside the chain) is not taken for a rewritten one.
"""

from __future__ import annotations

import json

import pytest

from pytest_harness_audit.cli import main

pytest_plugins = ["pytester"]

SUITE = """
import base64, json, pathlib
import pytest

@pytest.mark.expect_verdict("FAIL")
def test_1_blocked(harness):
    harness.call("Read", file_path=".env")
    where = [str(harness.storage_dir), harness.session_id]
    pathlib.Path("first.json").write_text(json.dumps(where))

REWRITE = '''
import base64, pathlib, re, sys
path = pathlib.Path(base64.b64decode(sys.argv[1]).decode())
text = path.read_text()
text = text.replace("verdict: FAIL", "verdict: PASS").replace(", verdict: WARN", "")
text = re.sub(r"(?m)^  - [{]position: 0, tool: Read.*\\\\n", "", text)
text = re.sub(r"(?m)^alerts:\\\\n(  - .*\\\\n)+", "alerts: []\\\\n", text)
path.write_text(text)
'''

def test_2_rewrites(harness):
    storage, session = json.loads(pathlib.Path("first.json").read_text())
    where = base64.b64encode(f"{storage}/reports/{session}.yaml".encode()).decode()
    script = base64.b64encode(REWRITE.encode()).decode()
    harness.call("Bash", command=f"echo {script} | base64 -d > r.py && python3 r.py {where}")
"""


def _report(storage: str, session: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["--storage", storage, "audit", "report", session])
    return code, capsys.readouterr().out


def test_a_rewritten_report_file_is_not_shown(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        "--harness-audit", "--harness-audit-dir", "kept", "-p", "no:randomly"
    )
    assert result.ret in (0, 1)  # the rewriting session's own verdict is not the point here
    storage, session = json.loads((pytester.path / "first.json").read_text())
    rewritten = (pytester.path / "kept" / "reports" / f"{session}.yaml").read_text()
    assert "verdict: PASS" in rewritten and "verdict: FAIL" not in rewritten  # the attack ran
    code, out = _report(storage, session, capsys)
    assert code == 1
    assert "verdict: PASS" not in out
    assert f"the report file of {session} is not what its chain holds" in out
    assert "the chain judges FAIL" in out
    capsys.readouterr()
    assert main(["--storage", storage, "audit", "report", session, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["sessionReport"] is None and "the chain judges FAIL" in data["sessionReportProblem"]


def test_a_report_file_as_written_is_shown(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makepyfile(test_suite=SUITE.split("REWRITE =")[0], test_clean=CLEAN)
    pytester.makeconftest(TEAM_RULE)
    result = pytester.runpytest("--harness-audit", "--harness-audit-dir", "kept")
    result.assert_outcomes(passed=2)
    for name in ("first.json", "clean.json"):
        storage, session = json.loads((pytester.path / name).read_text())
        written = (pytester.path / "kept" / "reports" / f"{session}.yaml").read_text()
        code, out = _report(storage, session, capsys)
        assert code == 0
        assert out.startswith(written.rstrip("\n") + "\n\n=== Audit Report ===")
        assert "verdict: FAIL" in out
        assert ("README read, by a team rule" in out) == (name == "clean.json")


TEAM_RULE = """
from pytest_harness_audit.readers.verdict import Verdict, VerdictReason

def pytest_harness_audit_verdict_rules(harness, records):
    if any(r.target == "README.md" for r in records):
        return [VerdictReason(Verdict.FAIL, "team-rule", "README read, by a team rule")]
"""

CLEAN = """
import json, pathlib
import pytest

@pytest.mark.expect_verdict("FAIL")
def test_3_clean_judged_by_a_team_rule(harness):
    harness.call("Read", file_path="README.md")
    where = [str(harness.storage_dir), harness.session_id]
    pathlib.Path("clean.json").write_text(json.dumps(where))
"""
