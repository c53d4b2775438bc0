"""The hook door judges what a host's call did to the submodules' git directories
(``.git/modules/<name>``): their stamp is kept at pre, in the call's pending file, and compared
at post, as the harness door compares it in one process. A ``core.fsmonitor`` planted in a
submodule's configuration by a program building the path at run time runs at the next plain
``git status``: judged FAIL. Using the nested repository keeps the verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hook_processes import as_post, call_records, committed_project, recorded, run_as_host
from submodule_support import NEST, PLANT

from pytest_harness_audit.doors.hook import handle_post, handle_pre
from pytest_harness_audit.policy import Policy


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HARNESS_AUDIT_WITNESS_DIR", str(tmp_path / "witness"))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    root = committed_project(tmp_path / "demo", {"app/main.py": "print('hello')\n"})
    for command in NEST:
        record = _host_call(tmp_path / "store", root, command)
        assert "moduleGitChanged" not in record.get("effects", {}), command
    return root


def _host_call(storage: Path, project: Path, command: str) -> dict[str, Any]:
    policy = Policy.preset("safety")
    pre = recorded("bash-touch.json", project)
    pre["tool_input"] = {"command": command}
    answer = handle_pre(json.dumps(pre), storage=storage, policy=policy)
    assert answer.get("hookSpecificOutput", {}).get("permissionDecision") != "deny", answer
    response = run_as_host(pre, project)
    handle_post(json.dumps(as_post(pre, response)), storage=storage, policy=policy)
    record: dict[str, Any] = call_records(storage, pre["session_id"])[-1]
    return record


@pytest.mark.parametrize("what", list(PLANT))
def test_a_submodule_config_or_hook_planted_by_code_fails(
    project: Path, tmp_path: Path, what: str
) -> None:
    record = _host_call(tmp_path / "store", project, PLANT[what])
    changed = ".git/modules/x/" + ("config" if what == "config" else "hooks/post-checkout")
    assert record["effects"]["moduleGitChanged"] == [changed]
    assert "protected_file_changed" in record["alerts"]
    assert record["judged"]["verdict"] == "FAIL"


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        "git status --short && git -C sub log --oneline",
        "git -C sub config user.name Agent",
        "git -C sub -c user.name=a -c user.email=a@b.invalid commit -q --allow-empty -m y",
    ],
)
def test_using_the_nested_repository_is_no_change(
    project: Path, tmp_path: Path, command: str
) -> None:
    record = _host_call(tmp_path / "store", project, command)
    assert "moduleGitChanged" not in record.get("effects", {})
    assert "judged" not in record or record["judged"].get("verdict") != "FAIL"


@pytest.mark.parametrize(
    "kept",
    [
        None,
        [],
        {"stamp": {}},
        {"stamp": {"config": [1, 2, "3", 4]}, "commands": {}},
        {"stamp": {"config": [1, 2, 3]}, "commands": {}},
        {"stamp": {"config": [1, 2, 3, 4]}, "commands": {"config": "not hex"}},
    ],
)
def test_a_kept_stamp_that_is_not_one_is_not_taken_up(tmp_path: Path, kept: object) -> None:
    from pytest_harness_audit.gate.module_git_watch import ModuleGitWatch

    assert ModuleGitWatch(tmp_path).resume(kept) is None


def test_a_kept_stamp_round_trips(project: Path) -> None:
    from pytest_harness_audit.gate.module_git_watch import ModuleGitWatch

    watch = ModuleGitWatch(project)
    stamp = watch.stamp()
    assert "x/config" in stamp
    again = ModuleGitWatch(project)
    assert again.resume(json.loads(json.dumps(watch.kept(stamp)))) == stamp
