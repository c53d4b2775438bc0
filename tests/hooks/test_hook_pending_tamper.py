"""A call that rewrites or removes its own pending file between pre and post fails the session.

Each step is a real ``harness-audit hook`` process fed the payloads Claude Code sends; the
host's transcript is written as Claude Code writes it. The attacking calls find the store by a
name built at run time (the store rule cannot see them touch it), as a call's own code would.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hook_processes import committed_project
from host_support import LOCAL, Host, write_project
from host_support import SESSION as HOST_SESSION

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.doors.hook_continuity import witness_path
from pytest_harness_audit.doors.hook_pending_seal import read_seals, seal
from pytest_harness_audit.readers.verdict import Verdict, judge
from tests.hooks import test_hook_asks as asks
from tests.hooks.hook_processes import hook, host_env

SESSION = "2b7d9e40-1c3a-4f5e-8a6b-pending-seal"
#: The head of every attacking call's code: the store's pending files, by a name built at run
#: time, and ``app/`` deleted.
FIND = """import json, os, shutil, time
d = ''.join(reversed(['audit', '.harness-']))
found = [os.path.join(r, f) for r, _, fs in os.walk(os.path.join(d, 'pend' + 'ing'))
         for f in fs if f.endswith('.json')]
"""
DELETE_APP = "shutil.rmtree('app')\n"
#: (a) the snapshot rewritten to the workspace as it is after the deletion: no effects left.
HIDE_DELETION = """for p in found:
    state = json.load(open(p))
    snap = state['workspace']['snapshot']
    gone = lambda path: path == 'app' or path.startswith('app/')
    snap['files'] = [e for e in snap['files'] if not gone(e[0])]
    snap['dirs'] = [x for x in snap['dirs'] if not gone(x)]
    snap['tracked'] = [x for x in snap['tracked'] or [] if not gone(x)]
    snap['digests'] = {k: v for k, v in snap['digests'].items() if not gone(k)}
    json.dump(state, open(p, 'w'))
"""
#: (b) the pending file removed.
REMOVE = "for p in found:\n    os.remove(p)\n"
#: (c) the start moved and an ``asked`` entry added: the call would claim a user's approval.
CLAIM_APPROVAL = """for p in found:
    state = json.load(open(p))
    state['started'] = time.time() + 3600
    state['asked'] = {'answer': 'ask', 'tool': 'Bash', 'input': {}, 'agentId': None,
                      'toolUseId': None}
    json.dump(state, open(p, 'w'))
"""


class Session:
    """A git project (``app/``, a README), its store inside it, the host's transcript."""

    def __init__(self, tmp_path: Path) -> None:
        files = {"app/main.py": "print('hello')\n", "README.md": "# demo\n"}
        self.project = committed_project(tmp_path / "project", files)
        self.store = self.project / ".harness-audit"
        self.transcript = tmp_path / "transcript.jsonl"
        self.transcript.touch()
        self.scripts = tmp_path
        self.number = 0
        #: The calls posted, in order (one at a time: the order of their records).
        self.posted: list[str] = []

    def event(self, name: str, command: str, **fields: Any) -> tuple[int, str, str]:
        payload = {
            "session_id": SESSION,
            "transcript_path": str(self.transcript),
            "cwd": str(self.project),
            "permission_mode": "default",
            "hook_event_name": name,
            **fields,
        }
        return hook(self.store, command, payload, "--preset", "safety", env=host_env())

    def start(self, source: str = "startup") -> None:
        assert self.event("SessionStart", "session-start", source=source)[0] == 0

    def end(self) -> str:
        code, _out, err = self.event("SessionEnd", "session-end", reason="prompt_input_exit")
        assert code == 0, err
        return err

    def call(self, command: str) -> dict[str, Any]:
        """A Bash call's payload fields (its tool_use block written to the transcript)."""
        self.number += 1
        ident = f"toolu_01seal{self.number:018d}"
        params = {"command": command, "description": "run"}
        block = {"type": "tool_use", "id": ident, "name": "Bash", "input": params}
        line = {"type": "assistant", "message": {"role": "assistant", "content": [block]}}
        with self.transcript.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
        return {"tool_name": "Bash", "tool_input": params, "tool_use_id": ident}

    def pre(self, call: dict[str, Any]) -> dict[str, Any]:
        code, out, err = self.event("PreToolUse", "pre", **call)
        assert code == 0, err
        answer: dict[str, Any] = json.loads(out)
        assert answer.get("hookSpecificOutput", {}).get("permissionDecision") != "deny", answer
        return answer

    def run(self, call: dict[str, Any]) -> dict[str, Any]:
        command = call["tool_input"]["command"].replace("python3 ", f"{sys.executable} ")
        done = subprocess.run(
            command, shell=True, cwd=self.project, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return {"stdout": done.stdout, "stderr": done.stderr, "interrupted": False}

    def post(self, call: dict[str, Any], response: dict[str, Any]) -> None:
        code, out, err = self.event("PostToolUse", "post", **call, tool_response=response)
        assert (code, json.loads(out)) == (0, {"suppressOutput": True}), err
        self.posted.append(call["tool_use_id"])

    def bash(self, command: str) -> dict[str, Any]:
        """pre → the command runs → post, as the host runs an allowed call."""
        call = self.call(command)
        self.pre(call)
        self.post(call, self.run(call))
        return call

    def script(self, *parts: str) -> str:
        """The command running a script written outside the project (as by an earlier call)."""
        path = self.scripts / f"s{self.number}.py"
        path.write_text("".join(parts), encoding="utf-8")
        return f"python3 {path}"

    def records(self) -> list[dict[str, Any]]:
        return list(iter_records(self.store, SESSION))

    def bash_records(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r["tool"] == "Bash"]

    def record_of(self, call: dict[str, Any]) -> dict[str, Any]:
        """The record of a call posted alone (records follow the posts' order)."""
        return self.bash_records()[self.posted.index(call["tool_use_id"])]

    def notes(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r["tool"] == "PendingChanged"]

    def verdict(self) -> Verdict:
        records = [CallRecord(raw) for raw in self.records()]
        return judge(records, chain_valid=True, chain_problem="")[0]

    def seals(self) -> dict[str, Any]:
        path = witness_path(self.store, SESSION, host_env())
        witness = json.loads(path.read_text()) if path.exists() else {}
        return dict(witness.get("sealed") or {})


@pytest.fixture
def session(tmp_path: Path) -> Session:
    return Session(tmp_path)


def _assert_tamper_failed(session: Session, call: dict[str, Any], how: str, err: str) -> None:
    assert session.verdict() is Verdict.FAIL
    (note,) = session.notes()
    assert note["alerts"] == ["pending_changed", "tamper_attempt"]
    assert note["pendingFile"]["how"] == how and note["pendingFile"]["call"] == call["tool_use_id"]
    assert note["judged"]["verdict"] == "FAIL" and note["judged"]["caughtBy"] == "continuity"
    assert f"was {how} after its pre step sealed it" in note["judged"]["reason"]
    record = session.record_of(call)
    assert record["result"]["status"] == "success"  # recorded as it ran, as pre decided it
    assert record["alerts"] == ["effects_unavailable"]
    assert "the call's effects are unknown" in record["effects"]["unknown"]
    assert session.verdict() is Verdict.FAIL
    assert "verdict FAIL" in err
    assert session.seals() == {}


def test_a_snapshot_rewritten_to_hide_a_deletion_fails(session: Session) -> None:
    session.start()
    session.bash("echo one")
    call = session.bash(session.script(FIND, DELETE_APP, HIDE_DELETION))
    assert not (session.project / "app").exists()  # the call really deleted it
    _assert_tamper_failed(session, call, "changed", session.end())


def test_a_pending_file_its_call_removed_fails(session: Session) -> None:
    session.start()
    call = session.bash(session.script(FIND, DELETE_APP, REMOVE))
    assert not (session.project / "app").exists()
    _assert_tamper_failed(session, call, "removed", session.end())


def test_a_rewritten_start_and_asked_entry_change_nothing_but_fail(session: Session) -> None:
    session.start()
    call = session.bash(session.script(FIND, CLAIM_APPROVAL))
    err = session.end()
    record = session.record_of(call)
    assert "approval" not in record  # the host asked nobody: the added entry is not believed
    (note,) = session.notes()
    assert note["pendingFile"]["how"] == "changed"
    assert 0 < record["result"]["durationMs"] < 600_000  # from the start pre sealed
    assert session.verdict() is Verdict.FAIL and "verdict FAIL" in err


def test_a_pending_file_removed_while_its_call_runs_on_fails_at_the_end(
    session: Session,
) -> None:
    # the call's post never comes (interrupted host); the session's end finds the seal broken
    session.start()
    call = session.call(session.script(FIND, REMOVE))
    session.pre(call)
    session.run(call)
    err = session.end()
    (note,) = session.notes()
    assert note["pendingFile"] == {
        "event": "SessionEnd",
        "call": call["tool_use_id"],
        "how": "removed",
    }
    assert session.verdict() is Verdict.FAIL and "verdict FAIL" in err
    assert session.seals() == {}


def test_normal_calls_stay_pass_and_leave_no_seal(session: Session) -> None:
    session.start()
    touch = session.bash("python3 -c \"open('notes.txt', 'w').write('hi')\"")
    session.bash("ls")
    assert session.seals() == {}  # each post dropped its call's seal
    err = session.end()
    assert session.record_of(touch)["effects"] == {"created": ["notes.txt"]}
    assert session.notes() == []
    assert session.verdict() is Verdict.PASS and "verdict PASS" in err


@pytest.mark.slow  # many hook processes at once
def test_parallel_calls_of_one_session_keep_each_others_seals(session: Session) -> None:
    session.start()
    calls = [session.call(f"python3 -c \"open('f{n}.txt', 'w').write('x')\"") for n in range(6)]
    threads = [threading.Thread(target=session.pre, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(session.seals()) == sorted(call["tool_use_id"] for call in calls)
    responses = [session.run(call) for call in calls]
    order = [3, 0, 5, 1, 4, 2]  # posts come back in another order, two at a time
    for first, second in zip(order[::2], order[1::2], strict=True):
        pair = [
            threading.Thread(target=session.post, args=(calls[n], responses[n]))
            for n in (first, second)
        ]
        for thread in pair:
            thread.start()
        for thread in pair:
            thread.join()
    assert session.seals() == {}
    err = session.end()
    # every call ran before any post: each window saw the six files appear
    assert len(session.bash_records()) == 6
    for record in session.bash_records():
        assert record["effects"] == {"created": [f"f{n}.txt" for n in range(6)]}
    assert session.notes() == []
    assert session.verdict() is Verdict.PASS and "verdict PASS" in err


def test_a_post_without_a_pre_keeps_its_old_judgement(session: Session) -> None:
    # the hooks came while the call ran: no pre step, no seal
    session.start()
    call = session.call("python3 -c \"open('late.txt', 'w').write('x')\"")
    session.post(call, session.run(call))
    err = session.end()
    record = session.record_of(call)
    assert record["effects"] == {
        "unknown": "no pending file from a pre step: the call's effects are unknown"
    }
    assert session.notes() == []
    assert session.verdict() is Verdict.WARN and "verdict WARN" in err


@pytest.mark.slow
def test_a_resumed_session_stays_pass(session: Session) -> None:
    session.start()
    session.bash("ls")
    assert "verdict PASS" in session.end()
    session.start("resume")
    call = session.call("python3 -c \"open('again.txt', 'w').write('x')\"")
    session.pre(call)
    session.post(call, session.run(call))
    err = session.end()
    assert session.notes() == []
    assert session.verdict() is Verdict.PASS and "verdict PASS" in err


def _seal_many(job: tuple[str, int]) -> None:
    store, worker = Path(job[0]), job[1]
    for n in range(25):
        pending = store / "pending" / SESSION / f"toolu_w{worker}_{n}.json"
        seal(store, SESSION, pending, f"state {worker} {n}", {"started": n}, fresh=True)


def test_seals_written_at_once_by_many_processes_are_all_kept(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with multiprocessing.get_context("fork").Pool(4) as pool:
        pool.map(_seal_many, [(str(store), worker) for worker in range(8)])
    seals = read_seals(store, SESSION)
    assert len(seals) == 200
    assert seals["toolu_w7_24"].facts == {"started": 24}


# -- the asked calls' files: reconciled, settled, marked by the host's prompt, denied ----------


@pytest.fixture
def ask_project(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "deploy").mkdir(parents=True)
    return root


@pytest.fixture
def ask_policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(asks.WARN_POLICY))
    return path


def _ask_notes(storage: Path) -> list[dict[str, Any]]:
    return [r for r in iter_records(storage, asks.SESSION) if r["tool"] == "PendingChanged"]


def _ask_verdict(storage: Path) -> Verdict:
    records = [CallRecord(raw) for raw in iter_records(storage, asks.SESSION)]
    return judge(records, chain_valid=True, chain_problem="")[0]


def test_an_ask_rewritten_by_another_call_fails_at_its_reconciliation(
    tmp_path: Path, ask_project: Path, ask_policy: Path
) -> None:
    storage = tmp_path / "audit"
    asks.asked(storage, ask_project, ask_policy, asks.deploy_write(ask_project, "toolu_91"))
    # the user refuses; before the next pre, a call's code rewrites the ask's file
    pending = storage / "pending" / asks.SESSION / "toolu_91.json"
    state = json.loads(pending.read_text())
    state["asked"]["input"] = {"file_path": str(ask_project / "notes.txt"), "content": ""}
    pending.write_text(json.dumps(state))
    asks.step(storage, "pre", asks.read(ask_project, "toolu_92"), ask_policy)
    assert asks.records_of(storage, "Write") == []  # nothing recorded from the rewritten entry
    (note,) = _ask_notes(storage)
    assert note["pendingFile"] == {"event": "PreToolUse", "call": "toolu_91", "how": "changed"}
    assert _ask_verdict(storage) is Verdict.FAIL


def test_settled_and_prompted_files_keep_their_seals(
    tmp_path: Path, ask_project: Path, ask_policy: Path
) -> None:
    storage = tmp_path / "audit"
    first = asks.deploy_write(ask_project, "toolu_81")
    asks.asked(storage, ask_project, ask_policy, first)
    asks.step(storage, "pre", asks.read(ask_project, "toolu_82"), ask_policy)  # settles it
    (ask_project / "deploy" / "app.yaml").write_text("replicas: 3\n")
    asks.step(storage, "post", asks.post(first, {"type": "create"}), ask_policy)  # ran late
    refused, ran = asks.records_of(storage, "Write")
    assert ran["approval"]["supersedes"] == refused["recordId"]  # read from the sealed state
    # the host's own rules ask about an allowed call: its prompt marks the file, sealed anew
    command = {"command": "ls deploy", "description": "look"}
    call = asks.pre(ask_project, "toolu_83", "Bash", command)
    asks.step(storage, "pre", call, ask_policy)
    marked = {**call, "hook_event_name": "PermissionRequest", "permission_suggestions": []}
    marked.pop("tool_use_id")
    asks.step(storage, "permission-request", marked, ask_policy)
    asks.step(storage, "post", asks.post(call, {"stdout": "", "stderr": ""}), ask_policy)
    (bash,) = asks.records_of(storage, "Bash")
    assert bash["approval"]["approver"] == "host"  # the user approved at the host's prompt
    assert _ask_notes(storage) == []
    assert _ask_verdict(storage) is not Verdict.FAIL


def test_permission_denied_for_a_call_whose_file_was_removed_fails(
    tmp_path: Path, ask_project: Path, ask_policy: Path
) -> None:
    storage = tmp_path / "audit"
    command = {"command": "rm -rf /tmp/build", "description": "Clean build directory"}
    payload = asks.pre(ask_project, "toolu_61", "Bash", command)
    payload["permission_mode"] = "auto"
    asks.step(storage, "pre", payload, ask_policy)
    (storage / "pending" / asks.SESSION / "toolu_61.json").unlink()  # by a parallel call
    denied = {
        **asks.common(ask_project, "PermissionDenied", "auto"),
        "tool_name": "Bash",
        "tool_input": command,
        "tool_use_id": "toolu_61",
        "reason": "Auto mode denied",
    }
    asks.step(storage, "permission-denied", denied, ask_policy)
    (bash,) = asks.records_of(storage, "Bash")
    assert bash["approval"]["approver"] == "host:auto-mode"
    (note,) = _ask_notes(storage)
    assert note["pendingFile"]["how"] == "removed"
    assert _ask_verdict(storage) is Verdict.FAIL


def test_an_ask_forged_into_the_store_explains_no_permission_entry(host: Host) -> None:
    # the call adds an allow rule for itself, and a pending file claiming the host asked
    host.start()
    call = host.pre()

    def forge() -> None:
        write_project(host, LOCAL, {"permissions": {"allow": ["Bash(touch notes.txt)"]}})
        asked = {"answer": "host", "tool": "Bash", "input": call["tool_input"], "agentId": None}
        folder = host.storage / "pending" / HOST_SESSION
        (folder / "toolu_forged.json").write_text(json.dumps({"started": 1.0, "asked": asked}))

    forge()
    host.post(call)
    host.end()
    record = next(r for r in host.records() if r["tool"] == "Bash")
    assert record["alerts"] == ["host_permission_added"]  # no prompt the door saw explains it
    assert host.judged()[0] == Verdict.WARN
