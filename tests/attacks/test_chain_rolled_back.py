"""A hook session's chain put back as an older copy, its continuity witness with it.

The agent's code runs as the user who owns the store and the witness. A process a call left
running copies both aside between two events; calls the policy refuses follow (each a FAIL
record); then a script whose text names neither (it finds them by a glob and a reversed name)
puts the copies back, keeping its own pending file and the witness's seal of it. Chain, anchor
and witness then agree: no event saw a loss, and the session ended PASS with its refusals gone.

The host's transcript still holds those calls: each came through a ``pre`` step (the host runs
its hooks before its own rules), and one the policy refuses was recorded as refused, with the
host's ``tool_use_id``. At the session's end a call of the transcript, after the first one a
record holds, that the policy refuses and no record holds is a lost chain: ``ChainLost``
(``how: rolledBack``), FAIL, and ``audit verify`` says so.

The twins: refusals that are all there, calls made before the hooks were installed, a call
the user interrupted, a call the policy allows that the host refused after ``pre``, and
refusals an older door recorded without the host's id (a session resumed after an upgrade)
claim nothing lost; after the chain's first refusal with an id, a refusal lost is claimed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.doors.hook_continuity import ChainState
from pytest_harness_audit.readers.verdict import Verdict
from tests.hooks.test_hook_continuity import SESSION, Host
from tests.reliability.session_tampers import Stage

RESTORE = """
cur = json.load(open(w))
pend = {p: open(p, 'rb').read() for p in glob.glob(d + '/pending/**', recursive=True)
        if os.path.isfile(p)}
shutil.rmtree(d)
shutil.copytree('../aside', d, symlinks=True)
for p, b in pend.items():
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, 'wb').write(b)
old = json.load(open('../aside.w'))
if 'sealed' in cur:
    old['sealed'] = cur['sealed']
json.dump(old, open(w, 'w'))
"""


def _script(host: Host, name: str, body: str) -> str:
    """A script outside the project (as an earlier call wrote it) finding the store by a glob
    and the witness by a reversed name: no call's text spells either."""
    hidden = str(host.witness())[::-1]
    head = "import glob, json, os, shutil\n"
    head += f"w = {hidden!r}[::-1]\n"
    head += "d = [p for p in glob.glob('.*') if p.endswith('tidua'[::-1])][0]\n"
    (host.project.parent / name).write_text(head + body, encoding="utf-8")
    return f"python3 ../{name}"


def _copy_aside(host: Host) -> None:
    """What a process the last call left running does between two events."""
    shutil.copytree(host.store, host.project.parent / "aside", symlinks=True)
    shutil.copy(host.witness(), host.project.parent / "aside.w")


def _refused_calls(host: Host) -> None:
    assert host.bash("cat ~/.ssh/id_rsa") == "deny"
    assert host.bash("rm -rf /tmp/not-there-at-all") == "deny"


@pytest.mark.slow
def test_a_chain_and_witness_put_back_by_a_call_fail(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    _copy_aside(host)
    _refused_calls(host)
    assert host.bash(_script(host, "b.py", RESTORE)) == "none"
    host.bash("echo after")
    err = host.end()
    (lost,) = host.lost()
    assert lost["continuity"]["how"] == "rolledBack"
    assert len(lost["continuity"]["toolUseIds"]) == 2
    verdict, reasons = host.verdict()
    assert verdict is Verdict.FAIL, reasons
    assert "verdict FAIL" in err
    code, out = host.audit("verify", SESSION)
    assert code == 1 and "CHAIN LOST" in out and "rolled back" in out, out


def test_a_chain_put_back_between_events_fails_once(tmp_path: Path) -> None:
    """Put back by the left-running process itself; the session resumed after its end notes
    the loss no second time."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    _copy_aside(host)
    _refused_calls(host)
    shutil.rmtree(host.store)
    shutil.copytree(host.project.parent / "aside", host.store, symlinks=True)
    shutil.copy(host.project.parent / "aside.w", host.witness())
    host.bash("echo after")
    host.end()
    host.start("resume")
    host.end()
    assert len(host.lost()) == 1
    assert host.verdict()[0] is Verdict.FAIL


def test_a_refusal_record_holds_the_hosts_call_id(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    _refused_calls(host)
    host.end()
    refused = [r for r in host.records() if r["result"]["status"] == "blocked"]
    assert [r["toolUseId"] for r in refused] == [
        "toolu_010000000000000000000001",
        "toolu_010000000000000000000002",
    ]
    assert host.lost() == []  # every refusal is there: nothing lost, FAIL for the refusals
    assert host.verdict()[0] is Verdict.FAIL


def test_refused_looking_calls_before_the_hooks_are_not_claimed(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.bash("cat ~/.ssh/id_rsa", hooked=False)  # in the transcript, no hook installed yet
    host.start()
    host.bash("echo one")
    host.end()
    assert host.lost() == []
    assert host.verdict()[0] is Verdict.PASS


def _use_without_hook(host: Host, use_id: str, params: dict[str, Any], result: str) -> None:
    """A call in the transcript that no hook step recorded, with its (error) result."""
    host.write(
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": use_id, "name": "Bash", "input": params}],
            },
        }
    )
    block = {"type": "tool_result", "tool_use_id": use_id, "content": result, "is_error": True}
    host.write({"type": "user", "message": {"role": "user", "content": [block]}})


def test_an_interrupted_call_and_a_host_refusal_are_not_claimed(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    interrupted = "[Request interrupted by user for tool use]"
    _use_without_hook(host, "toolu_01interrupted", {"command": "cat ~/.ssh/id_rsa"}, interrupted)
    refused = "Permission to use Bash with command make build has been denied."
    _use_without_hook(host, "toolu_01hostrefused", {"command": "make build"}, refused)
    host.bash("echo two")
    host.end()
    assert host.lost() == []
    assert host.verdict()[0] is Verdict.PASS, host.verdict()


def _as_an_older_door_wrote_it(host: Host) -> None:
    """The session's chain as a door that kept no ``tool_use_id`` with its refusals wrote it
    (links and anchor recomputed), and its witness as that door kept it."""
    paths = StorageLayout.at(host.store).paths(SESSION)
    stage = Stage(host.store, paths, paths, host.project)
    records = stage.records()
    for record in records:
        if record["result"]["status"] == "blocked":
            record.pop("toolUseId")
    stage.write_records(records)
    stage.forge_anchor()
    now = ChainState.read(host.store, SESSION)
    witness = json.loads(host.witness().read_text())
    witness.update(count=now.count, first=now.first, head=now.head, size=now.size)
    host.witness().write_text(json.dumps(witness))


def test_refusals_recorded_without_their_ids_by_an_older_door_are_not_claimed(
    tmp_path: Path,
) -> None:
    """A session begun before refusals held the host's id, resumed after an upgrade: its
    refusals are all there, none is lost."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    _refused_calls(host)
    host.bash("echo two")
    host.end()
    _as_an_older_door_wrote_it(host)
    host.start("resume")
    host.bash("echo three")
    host.end()
    assert host.lost() == []
    verdict, reasons = host.verdict()
    assert verdict is Verdict.FAIL  # the refusals' own FAIL, nothing more
    assert not any("rolled back" in reason for reason in reasons), reasons


@pytest.mark.slow
def test_after_an_older_doors_refusals_a_refusal_lost_is_still_claimed(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    _refused_calls(host)
    host.end()
    _as_an_older_door_wrote_it(host)
    host.start("resume")
    assert host.bash("cat ~/.aws/credentials") == "deny"  # the first refusal with its id
    _copy_aside(host)
    assert host.bash("cat ~/.ssh/id_ed25519") == "deny"
    shutil.rmtree(host.store)
    shutil.copytree(host.project.parent / "aside", host.store, symlinks=True)
    shutil.copy(host.project.parent / "aside.w", host.witness())
    host.bash("echo after")
    host.end()
    (lost,) = host.lost()
    assert lost["continuity"]["how"] == "rolledBack"
    assert lost["continuity"]["toolUseIds"] == ["toolu_010000000000000000000004"]


def _refused_at_the_prompt(host: Host, command: str) -> None:
    """A call the host asks about whose ``pre`` left nothing (it timed out): ``PermissionRequest``
    judges it, refuses it and records the refusal (the payload names no ``tool_use_id``)."""
    host.number += 1
    ident = f"toolu_01{host.number:022d}"
    params = {"command": command, "description": "run"}
    use = {"type": "tool_use", "id": ident, "name": "Bash", "input": params}
    host.write({"type": "assistant", "message": {"role": "assistant", "content": [use]}})
    call = {"tool_name": "Bash", "tool_input": params, "permission_suggestions": []}
    code, out, err = host.event("PermissionRequest", "permission-request", **call)
    assert code == 0, err
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny"
    block = {"type": "tool_result", "tool_use_id": ident, "content": decision["message"]}
    host.write(
        {"type": "user", "message": {"role": "user", "content": [{**block, "is_error": True}]}}
    )


@pytest.mark.slow
def test_a_refusal_at_the_prompt_is_no_older_doors_refusal(tmp_path: Path) -> None:
    """A refusal ``PermissionRequest`` records holds no id (its payload names none): it must
    not be taken for an older door's, which would leave the refusals after it unclaimed."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    _refused_at_the_prompt(host, "cat ~/.ssh/id_rsa")
    (refused,) = [r for r in host.records() if r["result"]["status"] == "blocked"]
    assert "toolUseId" in refused and refused["toolUseId"] is None
    _copy_aside(host)
    assert host.bash("cat ~/.aws/credentials") == "deny"
    shutil.rmtree(host.store)
    shutil.copytree(host.project.parent / "aside", host.store, symlinks=True)
    shutil.copy(host.project.parent / "aside.w", host.witness())
    host.bash("echo after")
    host.end()
    (lost,) = host.lost()
    assert "toolu_010000000000000000000003" in lost["continuity"]["toolUseIds"]
