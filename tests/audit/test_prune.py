"""Housekeeping: runs of sessions, ``audit prune`` and ``--harness-audit-keep``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_harness_audit.audit import AuditChain
from pytest_harness_audit.audit.prune import parse_age, prune, record_run, session_groups
from pytest_harness_audit.audit.storage import list_sessions
from pytest_harness_audit.cli import main
from pytest_harness_audit.errors import UsageError


def _session(storage: Path, sid: str, make_draft, age: float = 0.0) -> None:
    with AuditChain(storage, sid) as chain:
        chain.append(make_draft(0))
    (storage / "reports").mkdir(exist_ok=True)
    (storage / "reports" / f"{sid}.yaml").write_text("verdict: PASS\n")
    if age:
        moment = 1_700_000_000.0 - age
        for path in storage.rglob(f"{sid}.*"):
            os.utime(path, (moment, moment))


def _age_run(run_file: Path | None, age: float) -> None:
    assert run_file is not None
    moment = 1_700_000_000.0 - age
    os.utime(run_file, (moment, moment))


def test_runs_are_pruned_together_and_lone_sessions_count_as_one(tmp_path, make_draft):
    storage = tmp_path / "store"
    for index, sids in enumerate((["old-a", "old-b"], ["mid-a"], ["new-a", "new-b"])):
        age = (3 - index) * 1000.0
        for sid in sids:
            _session(storage, sid, make_draft, age=age)
        _age_run(record_run(storage, sids), age)
    _session(storage, "hook-session", make_draft, age=1500.0)  # no run lists it
    # a session whose id extends another's keeps its own files
    _session(storage, "new-a.2", make_draft, age=10.0)

    groups = session_groups(storage)
    assert [group.sessions for group in groups] == [
        ["new-a.2"],
        ["new-a", "new-b"],
        ["hook-session"],
        ["mid-a"],
        ["old-a", "old-b"],
    ]
    result = prune(storage, keep=2, runs_only=True, now=1_700_000_000.0)
    # runs only: the lone sessions are neither counted nor removed
    assert sorted(result.removed_sessions) == ["old-a", "old-b"]
    assert list_sessions(storage) == ["hook-session", "mid-a", "new-a", "new-a.2", "new-b"]
    assert not (storage / "reports" / "old-a.yaml").exists()
    assert (storage / "reports" / "new-a.2.yaml").exists()
    assert len(list((storage / "runs").glob("*.json"))) == 2

    result = prune(storage, older_than=1200.0, now=1_700_000_000.0)
    assert result.removed_sessions == ["hook-session", "mid-a"]
    assert list_sessions(storage) == ["new-a", "new-a.2", "new-b"]


def test_dry_run_removes_nothing(tmp_path, make_draft):
    storage = tmp_path / "store"
    for sid in ("a", "b", "c"):
        _session(storage, sid, make_draft)
    result = prune(storage, keep=1, dry_run=True)
    assert len(result.removed_sessions) == 2 and result.kept_groups == 1
    assert list_sessions(storage) == ["a", "b", "c"]


@pytest.mark.parametrize("text", ["7", "d", "7x", "-1d", "1.5h", ""])
def test_a_bad_age_names_the_value(text):
    with pytest.raises(UsageError, match="--older-than"):
        parse_age(text)


def test_ages():
    assert [parse_age(t) for t in ("30s", "15m", "2h", "7d", "1w")] == [
        30,
        900,
        7200,
        604800,
        604800,
    ]


def test_prune_command(tmp_path, make_draft, capsys):
    storage = tmp_path / "store"
    for sid in ("a", "b", "c"):
        _session(storage, sid, make_draft)
    assert main(["--storage", str(storage), "audit", "prune", "--keep", "1", "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("Would remove 2 sessions (2 runs); kept 1 run in ")
    assert main(["audit", "prune", "--keep", "2", "--json", "--storage", str(storage)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["removed"]) == 1 and data["keptRuns"] == 2 and data["dryRun"] is False
    assert len(list_sessions(storage)) == 2
    assert main(["--storage", str(storage), "audit", "prune"]) == 2
    assert "give --keep N, --older-than AGE, or both" in capsys.readouterr().err


PLAIN_TEST = """
def test_it(harness):
    harness.call("Glob", pattern="*")
"""


def test_the_audit_dir_keeps_the_last_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PLAIN_TEST)
    store = pytester.path / "kept"
    for _ in range(3):
        result = pytester.runpytest(
            "-p",
            "no:cacheprovider",
            "--harness-audit",
            "--harness-audit-dir",
            "kept",
            "--harness-audit-keep",
            "2",
        )
        result.assert_outcomes(passed=1)
    assert len(list_sessions(store)) == 2
    assert len(list((store / "runs").glob("*.json"))) == 2
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--harness-audit",
        "--harness-audit-dir",
        "kept",
        "--harness-audit-keep",
        "0",
    )
    result.assert_outcomes(passed=1)
    assert len(list_sessions(store)) == 3  # 0 keeps every run


def test_a_bad_keep_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PLAIN_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--harness-audit-keep", "many")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --harness-audit-keep 'many': expected a whole number*"])
