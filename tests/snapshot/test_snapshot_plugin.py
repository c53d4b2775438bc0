"""Snapshot reports through pytest: the ``audit_snapshot`` fixture, the ``harness_snapshot``
marker, ``--snapshot-update``, unused snapshots, xdist, report files, JUnit and pytest-html."""

from __future__ import annotations

import importlib.util
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from pytest_harness_audit.audit import verify_chain
from pytest_harness_audit.audit.storage import list_sessions
from pytest_harness_audit.audit.witness import Head
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.report import (
    load_report_head,
    load_report_text,
    split_report_file,
)

pytest_plugins = ["pytester"]

POLICY = """\
name: team
preset: safety
rules:
  - id: echo-rule
    name: Echo
    priority: 0
    decision: {decision}
    match: {{tools: [Bash], targetPatterns: ["echo **"]}}
"""

SUITE = """\
import pytest

@pytest.mark.harness_policy("policy.yaml")
@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
def test_agent(harness, audit_snapshot):
    harness.call("Read", file_path="README.md")
    harness.call("Read", file_path=".env")
    harness.call("Bash", command=f"ls {harness.root}/app")
    harness.call("Bash", command="echo hello")
    assert harness.report() == audit_snapshot

@pytest.mark.harness_policy("policy.yaml")
@pytest.mark.harness_snapshot
@pytest.mark.parametrize("page", ["a", "b"])
def test_marked(harness_factory, page):
    first = harness_factory("python-service")
    first.call("Grep", pattern="def", path="app")
    first.call("Bash", command=f"echo {page}")
    second = harness_factory()
    second.call("Glob", pattern="**/*")
"""

SNAPSHOTS = "__snapshots__/test_suite"


@pytest.fixture(autouse=True)
def _not_an_xdist_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """When this folder itself runs under xdist, the inner runs must not think they are workers
    (syrupy reads ``PYTEST_XDIST_WORKER`` and then prints no snapshot summary)."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)


SNAPSHOT_FILES = [
    "test_agent.audit.yaml",
    "test_marked[a].1.audit.yaml",
    "test_marked[a].audit.yaml",
    "test_marked[b].1.audit.yaml",
    "test_marked[b].audit.yaml",
]


def write_suite(directory: Path, decision: str = "warn") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "test_suite.py").write_text(SUITE)
    set_policy(directory, decision)
    return directory


def set_policy(directory: Path, decision: str) -> None:
    (directory / "policy.yaml").write_text(POLICY.format(decision=decision))


def snapshot_files(directory: Path) -> dict[str, bytes]:
    folder = directory / SNAPSHOTS
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.is_dir() else {}


def changed_lines(output: str) -> list[str]:
    """The ``-``/``+`` lines of the first snapshot diff in a failure output (colours off).

    A diff line is ``E<indent>- text``; context lines are indented two more, like the
    report's first line.
    """
    header = re.search(r"^E( +)  # harness-audit session report$", output, re.MULTILINE)
    assert header, output
    marker = re.compile(rf"^E{header.group(1)}([-+] .*)$", re.MULTILINE)
    return [m.group(1) for m in marker.finditer(output)]


@pytest.mark.slow
def test_created_passes_fails_with_a_small_diff_and_updates(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path)
    result = pytester.runpytest("--snapshot-no-colors")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*Snapshot 'test_agent' does not exist!*"])
    assert snapshot_files(suite) == {}

    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*5 snapshots generated.*"])
    created = snapshot_files(suite)
    assert sorted(created) == SNAPSHOT_FILES
    text = created["test_agent.audit.yaml"].decode()
    assert "target: ls app, decision: allow" in text
    assert "target: echo hello, decision: warn, rule: echo-rule, status: success" in text

    result = pytester.runpytest()
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*5 snapshots passed.*"])

    set_policy(suite, "deny")
    new_hash = Policy.load(suite / "policy.yaml").content_hash[:12]
    result = pytester.runpytest("-vv", "--snapshot-no-colors", "-k", "test_agent")
    result.assert_outcomes(failed=1)
    assert changed_lines(result.stdout.str()) == [
        f"- policy: {{name: team, hash: {hash_in(text)}}}",
        f"+ policy: {{name: team, hash: {new_hash}}}",
        "-   - {position: 4, tool: Bash, category: command, target: echo hello, decision: warn, "
        f"rule: echo-rule, status: success, output: {output_in(text)}, verdict: WARN}}",
        "+   - {position: 4, tool: Bash, category: command, target: echo hello, decision: deny, "
        "rule: echo-rule, status: blocked, verdict: FAIL}",
    ]

    result = pytester.runpytest("-k", "test_marked")
    result.assert_outcomes(failed=2)
    assert "\x1b[" not in result.stdout.str()  # not a terminal: the marker's diffs are plain
    result.stdout.fnmatch_lines(
        [
            "*session report of test_marked*differs from snapshot test_marked[[]a].audit.yaml "
            "(run pytest --snapshot-update to accept it):",
            "*-   - {position: 1, tool: Bash, category: command, target: echo a, decision: warn*",
            "*+   - {position: 1, tool: Bash, category: command, target: echo a, decision: deny*",
        ]
    )
    assert snapshot_files(suite) == created

    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*5 snapshots updated.*"])
    updated = snapshot_files(suite)
    assert "target: echo hello, decision: deny" in updated["test_agent.audit.yaml"].decode()
    second_before = created["test_marked[a].1.audit.yaml"].decode()
    second_after = updated["test_marked[a].1.audit.yaml"].decode()
    assert second_after == second_before.replace(hash_in(text), new_hash)
    pytester.runpytest().assert_outcomes(passed=3)


def hash_in(text: str) -> str:
    found = re.search(r"hash: (\w+)", text)
    assert found
    return found.group(1)


def output_in(text: str) -> str:
    found = re.search(r"echo hello.*output: (\w+)", text)
    assert found
    return found.group(1)


@pytest.mark.slow
def test_two_checkouts_write_byte_identical_snapshots(pytester: pytest.Pytester) -> None:
    first = write_suite(pytester.path / "checkout")
    second = write_suite(pytester.path / "a-much-longer-checkout-directory" / "nested")
    for suite, temp in ((first, "t"), (second, "another-temporary-root" * 3)):
        result = pytester.runpytest(
            str(suite), f"--basetemp={pytester.path / temp}", "--snapshot-update"
        )
        result.assert_outcomes(passed=3)
    assert sorted(snapshot_files(first)) == SNAPSHOT_FILES
    assert snapshot_files(first) == snapshot_files(second)


@pytest.mark.slow
def test_unused_snapshots_and_xdist_give_the_same_results(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path)
    pytester.runpytest("test_suite.py", "--snapshot-update").assert_outcomes(passed=3)
    expected = snapshot_files(suite)
    stale = suite / SNAPSHOTS / "test_removed.audit.yaml"
    stale.write_bytes(expected["test_agent.audit.yaml"])

    result = pytester.runpytest("test_suite.py")
    result.assert_outcomes(passed=3)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*5 snapshots passed. 1 snapshot unused.*"])

    result = pytester.runpytest_subprocess(
        "test_suite.py", "-p", "xdist", "-n", "2", "--snapshot-warn-unused"
    )
    result.assert_outcomes(passed=3)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*5 snapshots passed. 1 snapshot unused.*"])

    result = pytester.runpytest("test_suite.py", "--snapshot-update")
    result.stdout.fnmatch_lines(["*5 snapshots passed. 1 unused snapshot deleted.*"])
    assert snapshot_files(suite) == expected


def test_report_files_and_junit_under_harness_audit(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=3)
    result = pytester.runpytest(
        "--harness-audit", "--harness-audit-dir", "kept", "--junitxml=out.xml", "-k", "test_agent"
    )
    result.assert_outcomes(passed=1)
    kept = pytester.path / "kept"
    (session,) = list_sessions(kept)
    text = load_report_text(kept, session)
    assert text is not None
    document, head = split_report_file(text)
    assert document == (suite / SNAPSHOTS / "test_agent.audit.yaml").read_text(encoding="utf-8")
    chain = verify_chain(kept, session)
    assert head == Head(chain.record_count, chain.head)  # the chain's real head, count and hash
    assert yaml.safe_load(text)["head"] == {"records": chain.record_count, "hash": chain.head}
    case = next(ET.parse(pytester.path / "out.xml").iter("testcase"))
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["harness_audit_session"] == session
    assert props["harness_audit_verdict"] == "FAIL"
    assert props["harness_audit_report"] == str(kept / "reports" / f"{session}.yaml")
    assert props["harness_audit_head"] == chain.head


@pytest.mark.slow
def test_report_file_heads_differ_between_runs_while_the_snapshot_stays(
    pytester: pytest.Pytester,
) -> None:
    """Timestamps make every run's head new: the report file carries it, the snapshot never."""
    suite = write_suite(pytester.path)
    pytester.runpytest("--snapshot-update", "-k", "test_agent").assert_outcomes(passed=1)
    snapshot = suite / SNAPSHOTS / "test_agent.audit.yaml"
    before = snapshot.read_bytes()
    heads = []
    for run in ("one", "two"):
        result = pytester.runpytest(
            "--harness-audit", "--harness-audit-dir", run, "-k", "test_agent"
        )
        result.assert_outcomes(passed=1)  # the snapshot compares equal on both runs
        (session,) = list_sessions(pytester.path / run)
        head = load_report_head(pytester.path / run, session)
        chain = verify_chain(pytester.path / run, session)
        assert head == Head(chain.record_count, chain.head)
        text = load_report_text(pytester.path / run, session)
        assert text is not None and split_report_file(text)[0].encode() == before
        heads.append(head)
    assert heads[0] != heads[1]
    assert snapshot.read_bytes() == before
    # a report file compared with the snapshot as text: its head is left out
    pytester.makepyfile(
        test_file_text=f"""
from pytest_harness_audit.readers.report import load_report_text

def test_file(audit_snapshot):
    assert load_report_text({str(pytester.path / run)!r}, {session!r}) == audit_snapshot
"""
    )
    pytester.runpytest("test_file_text.py", "--snapshot-update").assert_outcomes(passed=1)
    stored = next((pytester.path / "__snapshots__" / "test_file_text").iterdir())
    assert stored.read_bytes() == before


def test_marker_without_a_session_and_wrong_data_are_clear(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_misuse="""
import pytest

@pytest.mark.harness_snapshot
def test_nothing():
    pass

def test_wrong_type(audit_snapshot):
    assert {"a": 1} == audit_snapshot
"""
    )
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*harness_snapshot: the test made no harness session to snapshot*",
            "*audit_snapshot stores session reports: compare harness.report(), not dict*",
        ]
    )


def test_report_fields_hook_lands_under_extra(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
def pytest_harness_audit_report_fields(harness):
    return {"model": "agent-v2", "workspace": str(harness.root)}
"""
    )
    pytester.makepyfile(
        test_it="""
def test_it(harness, audit_snapshot):
    harness.call("Glob", pattern="*")
    assert harness.report() == audit_snapshot
"""
    )
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    text = (pytester.path / "__snapshots__/test_it/test_it.audit.yaml").read_text()
    assert text.endswith("extra:\n  model: agent-v2\n  workspace: .\n")


@pytest.mark.skipif(
    importlib.util.find_spec("pytest_html") is None, reason="pytest-html is not installed"
)
def test_pytest_html_verdict_column_and_report_extras(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    pytester.makepyfile(
        test_plain="""
def test_plain():
    pass
"""
    )
    result = pytester.runpytest("--snapshot-update", "--html=report.html", "--self-contained-html")
    result.assert_outcomes(passed=4)
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert '<th class="sortable" data-column-type="verdict">Verdict</th>' in page
    assert page.count("col-verdict") == 4
    # the cell's markup is tested in tests/plugin/test_html_verdict_cell.py
    assert "FAIL (expected)&lt;/span&gt;&lt;/td&gt;" in page
    assert "WARN&lt;/span&gt; &lt;span" in page
    assert "data-verdict=\\&#34;\\&#34;&gt;&lt;/td&gt;" in page
    assert "harness-audit session report" in page


def test_without_pytest_html_or_the_flag_no_report_files(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    result = pytester.runpytest(
        "-p", "no:html", "--snapshot-update", "--junitxml=out.xml", "-k", "test_agent"
    )
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".harness-audit").exists()
    assert "harness_audit_report" not in (pytester.path / "out.xml").read_text()
