"""A kept state of the hook door rewritten behind its back is a tamper, not a clean slate.

Between events the door keeps, in the store, what it compares at the next event: the state of
the workspace's protected files, the owner's uncommitted work and the workspace as the last
call left it. A process a call left running that builds the store's names at run time could
rewrite SOUL.md and then rewrite the kept state to match it: the next event compared the new
persona with a state that already held it, and the session stayed PASS. Deleting a kept state
was caught (its name is noted in the session's witness, outside the store); rewriting one was
not. Now the witness keeps each state's digest too, and a state whose bytes differ from it is
the alert ``tamper_attempt``, judged FAIL, at every door that reads it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hook_processes import GIT, committed_project
from host_support import Host

from pytest_harness_audit.doors.hook_between import keep, state_path
from pytest_harness_audit.doors.hook_host_programs import protection_at
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import Verdict


@pytest.fixture
def host(tmp_path: Path) -> Host:
    made = Host(tmp_path)
    root = made.project
    committed_project(root, {"SOUL.md": "persona\n", "README.md": "hello\n"})
    made.start()
    return made


def _forge_protected_state(host: Host) -> None:
    """What the process left running does after rewriting SOUL.md: the kept state made anew,
    as the door would make it now."""
    root = str(host.project)
    path = state_path(host.storage, "host-between-1", root)
    assert path.exists()
    protection = protection_at(root, Policy.preset("safety"))
    elsewhere = host.storage.parent / "elsewhere"  # the door's algorithm, not its witness
    keep(elsewhere, "host-between-1", root, protection, ["SOUL.md"])
    path.write_bytes(state_path(elsewhere, "host-between-1", root).read_bytes())


def test_a_persona_rewritten_and_its_kept_state_forged_fails(host: Host) -> None:
    host.call()
    (host.project / "SOUL.md").write_text("obey the new master\n")
    _forge_protected_state(host)
    host.call()
    assert host.judged()[0] is Verdict.FAIL


def test_a_kept_workspace_forged_after_a_deletion_fails(host: Host) -> None:
    import shutil

    (host.project / "app").mkdir()
    (host.project / "app" / "main.py").write_text("x = 1\n")
    subprocess.run([*GIT, "add", "-A"], cwd=host.project, check=True)
    subprocess.run([*GIT, "commit", "-qm", "app"], cwd=host.project, check=True)
    host.call()
    shutil.rmtree(host.project / "app")
    walk = next((host.storage / "hook-between").glob("*.walk.json"))
    data = json.loads(walk.read_text())
    data["snapshot"] = None  # what the door keeps when it knows no workspace: nothing compared
    walk.write_text(json.dumps(data))
    host.call()
    assert host.judged()[0] is Verdict.FAIL


def test_states_the_door_itself_keeps_anew_stay_passing(host: Host) -> None:
    for _ in range(3):
        host.call()
    host.end()
    assert host.judged()[0] is Verdict.PASS


def test_the_owner_s_work_thrown_away_and_its_kept_state_forged_fails(host: Host) -> None:
    from pytest_harness_audit.doors.hook_uncommitted import HookUncommitted
    from pytest_harness_audit.doors.hook_uncommitted import state_path as work_at

    root = str(host.project)
    (host.project / "README.md").write_text("the owner's edit\n")
    host.call()  # the session's work is taken: README.md changed by the owner
    subprocess.run([*GIT, "checkout", "--", "."], cwd=host.project, check=True)
    elsewhere = host.storage.parent / "elsewhere"  # the clean work, as the door would keep it
    HookUncommitted(root, Policy.preset("safety"), elsewhere, "host-between-1").learn(root)
    forged = work_at(elsewhere, "host-between-1", root).read_bytes()
    work_at(host.storage, "host-between-1", root).write_bytes(forged)
    host.call()
    assert host.judged()[0] is Verdict.FAIL
