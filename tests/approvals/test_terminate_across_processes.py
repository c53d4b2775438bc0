"""``terminate`` read back from the chain: every process sharing the session's store refuses.

An approver's ``terminate`` is a record in the chain, the single source of truth. A second
process (a hook process, or a gate opened earlier that serves a proxy's calls) reads it before
its next call and refuses every later call of the session with the reason.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.doors.hook import handle_post, handle_pre
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import Verdict, judge
from tests.approvals.conftest import ASK_POLICY
from tests.hooks.hook_processes import answer_of, hook

SESSION = "terminated-session"

#: A process that gates one call whose approver answers ``terminate``.
TERMINATING = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from pytest_harness_audit.gate import Gate
    from pytest_harness_audit.gate.seam import Outcome
    from pytest_harness_audit.policy import Policy

    storage, session, root, policy = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    gate = Gate.open(storage_dir=Path(storage), session_id=session,
                     policy=Policy.from_dict(json.loads(policy)), root=root, door="proxy")
    gate.approvals.set(lambda request: ("terminate", "release frozen"), name="release-manager")
    done = gate.run("Write", {"file_path": root + "/deploy/app.yaml", "content": "x"},
                    lambda decision: Outcome("success", None, None))
    gate.chain.close()
    print(json.dumps(done.record["approval"]))
    """
)


def terminate_in_another_process(storage: Path, root: Path) -> dict[str, Any]:
    """Run :data:`TERMINATING` as its own process; return the approval it recorded."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            TERMINATING,
            str(storage),
            SESSION,
            str(root),
            json.dumps(ASK_POLICY),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    approval: dict[str, Any] = json.loads(done.stdout)
    return approval


def records(storage: Path) -> list[dict[str, Any]]:
    return [r for r in iter_records(storage, SESSION) if r.get("kind", "call") == "call"]


def pre_payload(root: Path, tool: str, tool_input: dict[str, Any], use_id: str) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(root / "transcript.jsonl"),
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": use_id,
    }


def test_a_hook_process_refuses_every_call_after_another_process_terminated(
    tmp_path: Path,
) -> None:
    root, storage = tmp_path / "work", tmp_path / "audit"
    root.mkdir()
    policy_file = tmp_path / "policy.json"
    policy_file.write_text(json.dumps(ASK_POLICY))
    before = pre_payload(root, "Read", {"file_path": str(root / "notes.txt")}, "toolu_01A")
    code, out, _ = hook(storage, "pre", before, "--policy", str(policy_file))
    assert (code, answer_of(out)) == (0, {})  # the session goes on so far
    assert terminate_in_another_process(storage, root) == {
        "approver": "release-manager",
        "outcome": "terminate",
        "reason": "release frozen",
    }
    # a harmless read the policy allows: refused, the reason says why
    after = pre_payload(root, "Read", {"file_path": str(root / "notes.txt")}, "toolu_01B")
    code, out, err = hook(storage, "pre", after, "--policy", str(policy_file))
    assert code == 0, err
    assert answer_of(out) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "[blocked] [web4-approval] session terminated: "
            "release frozen",
        },
        # the session is over: the host stops its agent, not only this call
        "continue": False,
        "stopReason": "[blocked] [web4-approval] session terminated: release frozen",
    }
    terminate, refused = records(storage)
    assert terminate["approval"]["outcome"] == "terminate"
    assert refused["tool"] == "Read" and refused["result"]["status"] == "blocked"
    assert refused["approval"] == {"outcome": "terminated", "reason": "release frozen"}
    verdict, reasons = judge([CallRecord(r) for r in records(storage)], chain_valid=True)
    assert verdict == Verdict.FAIL
    assert [reason.code for reason in reasons].count("approval-terminate") == 2


def test_a_gate_opened_earlier_reads_the_terminate_before_its_next_call(tmp_path: Path) -> None:
    root, storage = tmp_path / "work", tmp_path / "audit"
    root.mkdir()
    worker = Gate.open(
        storage_dir=storage,
        session_id=SESSION,
        policy=Policy.from_dict(ASK_POLICY),
        root=str(root),
        door="proxy",
    )
    ran: list[str] = []

    def act(_decision: object) -> Outcome:
        ran.append("ran")
        return Outcome("success", None, None)

    async def act_async(decision: object) -> Outcome:
        return act(decision)

    try:
        first = worker.run("Read", {"file_path": str(root / "a.txt")}, act)
        assert first.record["result"]["status"] == "success"
        terminate_in_another_process(storage, root)
        second = worker.run("Read", {"file_path": str(root / "b.txt")}, act)
        third = asyncio.run(worker.run_async("Read", {"file_path": str(root / "c.txt")}, act_async))
    finally:
        worker.chain.close()
    assert ran == ["ran"]  # neither later call ran
    for refused in (second, third):
        assert refused.record["result"]["status"] == "blocked"
        assert refused.record["approval"]["outcome"] == "terminated"
        assert refused.record["result"]["errorMessage"].endswith(
            "session terminated: release frozen"
        )


def test_the_words_of_a_terminate_inside_a_call_do_not_end_the_session(tmp_path: Path) -> None:
    root, storage = tmp_path / "work", tmp_path / "audit"
    root.mkdir()
    verbose = Policy.from_dict({**ASK_POLICY, "auditLevel": "verbose"})
    gate = Gate.open(storage_dir=storage, session_id=SESSION, policy=verbose, root=str(root))
    try:
        # params the agent chose, kept whole at the verbose level: the same bytes as an answer
        params = {
            "file_path": str(root / "notes.json"),
            "content": "{}",
            "approval": {"approver": "agent", "outcome": "terminate"},
            "outcome": "terminate",
        }
        gate.run("Write", params, lambda _d: Outcome("success", None, None))
    finally:
        gate.chain.close()
    chain = next((storage / "audit").glob("*.jsonl")).read_bytes()
    assert b'"outcome":"terminate"' in chain  # the look-alike reached the chain
    later = Gate.open(storage_dir=storage, session_id=SESSION, policy=verbose, root=str(root))
    try:
        done = later.run(
            "Read",
            {"file_path": str(root / "notes.json")},
            lambda _d: Outcome("success", None, None),
        )
    finally:
        later.chain.close()
    assert done.record["result"]["status"] == "success"
    assert "approval" not in done.record


def test_a_call_the_host_ran_before_the_terminate_is_recorded_as_it_ran(tmp_path: Path) -> None:
    root, storage = tmp_path / "work", tmp_path / "audit"
    root.mkdir()
    policy = Policy.from_dict(ASK_POLICY)
    pre = pre_payload(root, "Write", {"file_path": str(root / "notes.txt"), "content": "x"}, "t1")
    assert handle_pre(json.dumps(pre), storage=storage, policy=policy) == {}
    terminate_in_another_process(storage, root)  # while the host runs the call
    (root / "notes.txt").write_text("x")
    post = {**pre, "hook_event_name": "PostToolUse", "tool_response": {"type": "create"}}
    assert handle_post(json.dumps(post), storage=storage, policy=policy) == {"suppressOutput": True}
    ran = records(storage)[-1]
    assert ran["tool"] == "Write" and ran["result"]["status"] == "success"
    assert "approval" not in ran
    # and the next call is refused
    again = pre_payload(root, "Read", {"file_path": str(root / "notes.txt")}, "t2")
    answer = handle_pre(json.dumps(again), storage=storage, policy=policy)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answer["continue"] is False
