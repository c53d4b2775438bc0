"""Every call the host was asked about gets exactly one outcome record.

A refusal at the host's prompt sends no event: the call is recorded as not run (``reject`` by
``host``) at the agent's next ``PreToolUse``, at ``Stop`` or at a session event. The host's auto
mode refusing a call is ``PermissionDenied``: recorded at once, ``reject`` by ``host:auto-mode``.
Each step is a real ``harness-audit hook`` process fed the payload fields the hooks reference
documents.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.readers.verdict import Verdict
from tests.approvals.conftest import ASK_POLICY
from tests.hooks.hook_processes import answer_of, call_records, hook, host_env, verdict

SESSION = "5f0c1e2a-asks"
REFUSED = (
    "no post event arrived: the host did not run the call (its prompt was refused or cancelled)"
)
WARN_POLICY: dict[str, Any] = {
    **ASK_POLICY,
    "rules": [
        *ASK_POLICY["rules"],
        {
            "id": "warn-scripts",
            "name": "Scripts are looked at",
            "priority": 7,
            "decision": "warn",
            "reason": "scripts change the build",
            "match": {"tools": ["Write"], "targetPatterns": ["scripts/**"]},
        },
    ],
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "deploy").mkdir(parents=True)
    return root


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(WARN_POLICY))
    return path


def common(project: Path, event: str, mode: str = "default") -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(project.parent / "transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": mode,
        "hook_event_name": event,
    }


def pre(
    project: Path, use_id: str, tool: str, tool_input: dict[str, Any], agent: str | None = None
) -> dict[str, Any]:
    payload = {**common(project, "PreToolUse"), "tool_name": tool, "tool_input": tool_input}
    payload["tool_use_id"] = use_id
    if agent is not None:
        payload.update({"agent_id": agent, "agent_type": "Explore"})
    return payload


def deploy_write(project: Path, use_id: str, agent: str | None = None) -> dict[str, Any]:
    target = {"file_path": str(project / "deploy" / "app.yaml"), "content": "replicas: 3\n"}
    return pre(project, use_id, "Write", target, agent)


def read(project: Path, use_id: str, agent: str | None = None) -> dict[str, Any]:
    return pre(project, use_id, "Read", {"file_path": str(project / "notes.txt")}, agent)


def stop(project: Path) -> dict[str, Any]:
    return {
        **common(project, "Stop"),
        "stop_hook_active": False,
        "last_assistant_message": "I could not write the deploy file.",
    }


def post(payload: dict[str, Any], response: Any) -> dict[str, Any]:
    return {**payload, "hook_event_name": "PostToolUse", "tool_response": response}


def step(storage: Path, event: str, payload: dict[str, Any], policy: Path) -> tuple[int, str]:
    code, out, err = hook(storage, event, payload, "--policy", str(policy))
    assert code == 0, err
    return code, out


def asked(storage: Path, project: Path, policy: Path, payload: dict[str, Any]) -> None:
    _, out = step(storage, "pre", payload, policy)
    assert answer_of(out)["hookSpecificOutput"]["permissionDecision"] == "ask"


def records_of(storage: Path, tool: str) -> list[dict[str, Any]]:
    return [r for r in call_records(storage, SESSION) if r["tool"] == tool]


def assert_refused_by_host(record: dict[str, Any], event: str) -> None:
    assert record["result"]["status"] == "blocked"
    assert record["resource"] == {"approvalRequired": True}
    assert record["approval"] == {
        "approver": "host",
        "outcome": "reject",
        "reason": f"{REFUSED}; reconciled at {event}",
    }
    assert record["result"]["errorMessage"] == (
        f"[blocked] [web4-approval] reject: {REFUSED}; reconciled at {event}"
    )


def test_a_prompt_the_user_refused_is_recorded_at_the_agents_next_pre(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    asked(storage, project, policy_file, deploy_write(project, "toolu_01"))
    assert call_records(storage, SESSION) == []  # the host is asking: nothing ran yet
    # the user answers "no": the host sends no event; the agent's next call comes
    _, out = step(storage, "pre", read(project, "toolu_02"), policy_file)
    assert answer_of(out) == {}
    [write] = call_records(storage, SESSION)
    assert write["tool"] == "Write"
    assert_refused_by_host(write, "PreToolUse")
    assert not (project / "deploy" / "app.yaml").exists()
    # later events find nothing more to settle: one outcome for the one ask
    step(storage, "post", post(read(project, "toolu_02"), {"type": "text"}), policy_file)
    assert hook(storage, "stop", stop(project), "--policy", str(policy_file))[:2] == (0, "")
    assert len(records_of(storage, "Write")) == 1
    assert verdict(storage, SESSION) == Verdict.WARN  # a rejected approval


def test_stop_records_the_turns_unanswered_asks_and_prints_nothing(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    asked(storage, project, policy_file, deploy_write(project, "toolu_11"))
    code, out, err = hook(storage, "stop", stop(project), "--policy", str(policy_file))
    assert (code, out, err) == (0, "", "")  # no decision: the agent stops as it wanted
    [write] = call_records(storage, SESSION)
    assert_refused_by_host(write, "Stop")
    hook(storage, "stop", stop(project), "--policy", str(policy_file))
    assert len(call_records(storage, SESSION)) == 1


def test_the_session_end_records_unanswered_asks_before_it_verifies(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    asked(storage, project, policy_file, deploy_write(project, "toolu_21"))
    end = {**common(project, "SessionEnd"), "reason": "prompt_input_exit"}
    code, out, err = hook(storage, "session-end", end, "--policy", str(policy_file))
    assert (code, out) == (0, ""), err
    assert "verdict WARN" in err
    [write] = call_records(storage, SESSION)
    assert_refused_by_host(write, "SessionEnd")
    assert not (storage / "pending" / SESSION).exists()


def test_an_approved_ask_keeps_its_one_outcome(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    payload = deploy_write(project, "toolu_31")
    asked(storage, project, policy_file, payload)
    (project / "deploy" / "app.yaml").write_text("replicas: 3\n")  # the user said yes
    _, out = step(storage, "post", post(payload, {"type": "create"}), policy_file)
    assert answer_of(out) == {"suppressOutput": True}
    step(storage, "pre", read(project, "toolu_32"), policy_file)
    hook(storage, "stop", stop(project), "--policy", str(policy_file))
    [write] = records_of(storage, "Write")
    assert write["result"]["status"] == "success"
    assert write["approval"] == {"approver": "host", "outcome": "approve"}


def test_a_warned_call_the_host_asked_about_has_its_outcome_too(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    script = {"file_path": str(project / "scripts" / "build.sh"), "content": "make\n"}
    refused, approved = (pre(project, f"toolu_4{n}", "Write", script) for n in (1, 2))
    asked(storage, project, policy_file, refused)
    asked(storage, project, policy_file, approved)  # the next call: the first was refused
    step(storage, "post", post(approved, {"type": "create"}), policy_file)
    first, second = records_of(storage, "Write")
    assert first["result"]["status"] == "blocked"
    assert first["approval"]["outcome"] == "reject" and first["approval"]["approver"] == "host"
    assert first["resource"] == {"approvalRequired": False}  # the rule warned; the host asked
    assert second["result"]["status"] == "success"
    assert second["approval"] == {"approver": "host", "outcome": "approve"}


def test_permission_denied_records_the_auto_modes_refusal(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    payload = deploy_write(project, "toolu_51")
    payload["permission_mode"] = "auto"
    asked(storage, project, policy_file, payload)
    denied = {
        **common(project, "PermissionDenied", "auto"),
        "tool_name": payload["tool_name"],
        "tool_input": payload["tool_input"],
        "tool_use_id": "toolu_51",
        "reason": "[Irreversible Local Destruction]",
    }
    code, out, err = hook(storage, "permission-denied", denied, "--policy", str(policy_file))
    assert code == 0, err
    # the denial stands: the model is never told to retry what the host refused
    assert answer_of(out) == {
        "hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": False}
    }
    [write] = call_records(storage, SESSION)
    assert write["result"]["status"] == "blocked"
    assert write["resource"] == {"approvalRequired": True}
    assert write["approval"] == {
        "approver": "host:auto-mode",
        "outcome": "reject",
        "reason": "the host's auto mode denied the call: [Irreversible Local Destruction]",
    }
    hook(storage, "stop", stop(project), "--policy", str(policy_file))
    assert len(call_records(storage, SESSION)) == 1  # settled once, by the host's own event


def test_permission_denied_for_a_call_the_gate_allowed(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    command = {"command": "rm -rf /tmp/build", "description": "Clean build directory"}
    payload = pre(project, "toolu_61", "Bash", command)
    payload["permission_mode"] = "auto"
    _, out = step(storage, "pre", payload, policy_file)
    assert "permissionDecision" not in out  # no answer of ours approves anything
    denied = {
        **common(project, "PermissionDenied", "auto"),
        "tool_name": "Bash",
        "tool_input": command,
        "tool_use_id": "toolu_61",
        "reason": "Auto mode denied: command targets a path outside the project",
    }
    step(storage, "permission-denied", denied, policy_file)
    [bash] = call_records(storage, SESSION)
    assert bash["result"]["status"] == "blocked"
    assert bash["resource"] == {"approvalRequired": False}
    assert bash["approval"]["approver"] == "host:auto-mode"
    assert not (storage / "pending" / SESSION / "toolu_61.json").exists()


def test_another_agents_ask_waits_for_its_own_events(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    asked(storage, project, policy_file, deploy_write(project, "toolu_71", agent="agent-7"))
    # the main agent (or another subagent) goes on while the subagent's prompt is open
    step(storage, "pre", read(project, "toolu_72"), policy_file)
    step(storage, "pre", read(project, "toolu_73", agent="agent-8"), policy_file)
    assert records_of(storage, "Write") == []
    step(storage, "pre", read(project, "toolu_74", agent="agent-7"), policy_file)
    [write] = records_of(storage, "Write")
    assert_refused_by_host(write, "PreToolUse")


def test_a_post_that_comes_after_the_call_was_settled_supersedes_it(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    first = deploy_write(project, "toolu_81")
    asked(storage, project, policy_file, first)
    step(storage, "pre", read(project, "toolu_82"), policy_file)  # settles the first: no event
    (project / "deploy" / "app.yaml").write_text("replicas: 3\n")
    step(storage, "post", post(first, {"type": "create"}), policy_file)  # it ran after all
    refused, ran = records_of(storage, "Write")
    assert refused["approval"]["outcome"] == "reject"
    assert ran["result"]["status"] == "success"
    assert ran["approval"] == {
        "approver": "host",
        "outcome": "approve",
        "reason": "the host ran the call after it was recorded as not run",
        "supersedes": refused["recordId"],
    }


@pytest.mark.slow  # many hook processes at once
def test_two_events_settling_at_once_record_the_ask_once(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    asked(storage, project, policy_file, deploy_write(project, "toolu_91"))
    cli = [sys.executable, "-m", "pytest_harness_audit", "--storage", str(storage), "hook"]
    runs = [
        subprocess.Popen(
            [*cli, event, "--policy", str(policy_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=host_env(),
        )
        for event in ("stop", "stop", "pre")
    ]
    payloads = [stop(project), stop(project), read(project, "toolu_92")]
    for run, payload in zip(runs, payloads, strict=True):
        assert run.stdin is not None
        run.stdin.write(json.dumps(payload))
        run.stdin.close()
    assert [run.wait(timeout=120) for run in runs] == [0, 0, 0]
    for run in runs:
        for stream in (run.stdout, run.stderr):
            assert stream is not None
            stream.close()
    assert len(records_of(storage, "Write")) == 1


def test_bad_payloads_at_the_new_events_are_one_line_and_never_block(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    code, out, err = hook(storage, "stop", "{not json", "--policy", str(policy_file))
    assert (code, out) == (1, "")  # never 2: that would keep the agent from stopping
    assert len(err.splitlines()) == 1 and "invalid JSON" in err
    wrong = {**stop(project), "hook_event_name": "SubagentStop"}
    code, _, err = hook(storage, "stop", wrong, "--policy", str(policy_file))
    assert code == 1 and "'hook_event_name' is 'SubagentStop'" in err
    denied = {**common(project, "PermissionDenied", "auto"), "tool_name": "Bash"}
    denied["tool_input"] = "rm -rf /"
    code, out, err = hook(storage, "permission-denied", denied, "--policy", str(policy_file))
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and "field 'tool_input' must be an object" in err
    [fault] = list(iter_records(storage, SESSION))  # the gap shows in the evidence
    assert (fault["kind"], fault["tool"]) == ("note", "PermissionDenied")
    assert fault["result"]["status"] == "error"


def test_a_reconciled_ask_never_writes_a_known_secret_into_the_chain(
    tmp_path: Path, project: Path
) -> None:
    key = "sk-live-9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a"
    (project / ".env").write_text(f"API_KEY={key}\n")
    verbose = tmp_path / "verbose.json"  # params kept whole in the records
    rule = ASK_POLICY["rules"][0]
    verbose.write_text(json.dumps({"preset": "safety", "auditLevel": "verbose", "rules": [rule]}))
    storage = tmp_path / "audit"
    for use_id, settle in (("toolu_s1", "stop"), ("toolu_s2", "session-end")):
        payload = deploy_write(project, use_id)
        payload["tool_input"]["content"] = f"api_key: {key}\n"
        asked(storage, project, verbose, payload)
        event = {**common(project, "Stop"), "stop_hook_active": False}
        if settle == "session-end":
            event = {**common(project, "SessionEnd"), "reason": "logout"}
        assert hook(storage, settle, event, "--policy", str(verbose))[0] == 0
    refused = records_of(storage, "Write")
    assert [r["approval"]["outcome"] for r in refused] == ["reject", "reject"]
    assert all("content" in r["request"]["params"] for r in refused)
    chain = b"".join(path.read_bytes() for path in (storage / "audit").rglob("*.jsonl"))
    assert key.encode() not in chain
