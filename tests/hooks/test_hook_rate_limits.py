"""``rateLimit`` rules through the hook door, where every pre and post is a fresh process."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hook_processes import answer_of

from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.audit.verify import verify_chain
from pytest_harness_audit.cli import main as cli
from pytest_harness_audit.doors.hook_continuity import witness_path

PAYLOADS = Path(__file__).parent / "payloads"
SESSION = "host-session-1"


def write_policy(folder: Path, *, max_count: int = 2, decision: str = "deny") -> Path:
    path = folder / "policy.json"
    rule = {
        "id": "bash-burst",
        "name": "Bash burst",
        "priority": 1,
        "decision": decision,
        "reason": "Too many Bash calls (bash-burst)",
        "match": {"tools": ["Bash"], "rateLimit": {"maxCount": max_count, "windowMs": 60_000}},
    }
    path.write_text(json.dumps({"defaultPolicy": "allow", "rules": [rule]}))
    return path


def bash_payload(number: int, event: str = "PreToolUse") -> dict[str, Any]:
    payload = json.loads((PAYLOADS / "bash-benign.json").read_text())
    payload.update(hook_event_name=event, tool_use_id=f"toolu_rate_{number}")
    if event == "PostToolUse":
        payload["tool_response"] = {"stdout": "ok", "exit_code": 0}
    return payload


def run_process(storage: Path, policy: Path, event: str, payload: dict[str, Any]) -> Any:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_harness_audit",
            "--storage",
            str(storage),
            "hook",
            event,
            "--policy",
            str(policy),
        ],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return answer_of(done.stdout)  # (without the door's transcript mark)


def calls(storage: Path) -> list[dict[str, Any]]:
    return [r for r in iter_records(storage, SESSION) if r.get("kind", "call") == "call"]


@pytest.mark.slow
def test_the_third_call_is_denied_across_hook_processes(tmp_path: Path) -> None:
    storage, policy = tmp_path / "store", write_policy(tmp_path)
    for number in (1, 2):
        answer = run_process(storage, policy, "pre", bash_payload(number))
        assert "hookSpecificOutput" not in answer  # allowed: the host's own rules decide
        run_process(storage, policy, "post", bash_payload(number, "PostToolUse"))
    answer = run_process(storage, policy, "pre", bash_payload(3))["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "bash-burst" in answer["permissionDecisionReason"]
    records = calls(storage)
    assert [r["result"]["status"] for r in records] == ["success", "success", "blocked"]
    assert [r["rateHits"] for r in records] == [["bash-burst"]] * 3
    assert "rule:bash-burst" in records[2]["rules"]["constraints"]
    assert verify_chain(storage, SESSION).valid


class HookRunner:
    """Runs the hook in this process (quicker); each run still opens a fresh gate."""

    def __init__(
        self,
        storage: Path,
        policy: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        self.storage, self.policy = storage, policy
        self.monkeypatch, self.capsys = monkeypatch, capsys

    def __call__(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        self.monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
        argv = ["--storage", str(self.storage), "hook", event, "--policy", str(self.policy)]
        assert cli(argv) == 0
        answer: dict[str, Any] = json.loads(self.capsys.readouterr().out)
        return answer

    def pre(self, number: int) -> str:
        answer = self("pre", bash_payload(number)).get("hookSpecificOutput", {})
        return str(answer.get("permissionDecision", "allow"))

    def post(self, number: int) -> None:
        self("post", bash_payload(number, "PostToolUse"))


@pytest.fixture
def hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> HookRunner:
    return HookRunner(tmp_path / "store", write_policy(tmp_path), monkeypatch, capsys)


def test_calls_still_running_count_for_the_next_pre(hook: HookRunner) -> None:
    # a host asks pre for parallel tool calls before any of them has a post
    assert [hook.pre(1), hook.pre(2), hook.pre(3)] == ["allow", "allow", "deny"]
    hook.post(2)
    hook.post(1)
    records = calls(hook.storage)
    # post records each call as its pre decided it, although the chain holds 2 hits by then
    assert [(r["result"]["status"], r["rules"]["constraints"][0]) for r in records] == [
        ("blocked", "policy:deny"),
        ("success", "policy:allow"),
        ("success", "policy:allow"),
    ]
    assert [r["rateHits"] for r in records] == [["bash-burst"]] * 3
    assert hook.pre(4) == "deny"


def test_post_records_the_hits_of_its_pre_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write_policy(tmp_path, max_count=1, decision="warn")
    hook = HookRunner(tmp_path / "store", policy, monkeypatch, capsys)
    for number, permission in ((1, "allow"), (2, "ask")):  # a warned call asks the user
        assert hook.pre(number) == permission
        hook.post(number)
    first, second = calls(hook.storage)
    assert first["rules"]["constraints"][0] == "policy:allow"
    assert second["rules"]["constraints"][:2] == ["policy:warn", "rule:bash-burst"]
    assert first["rateHits"] == second["rateHits"] == ["bash-burst"]
    assert first["rateClock"] <= first["clock"]  # counted when pre decided


def test_post_without_a_pre_step_decides_and_counts_itself(hook: HookRunner) -> None:
    for number in (1, 2, 3):
        hook.post(number)
    records = calls(hook.storage)
    assert [r["rules"]["constraints"][0] for r in records] == [
        "policy:allow",
        "policy:allow",
        "policy:deny",
    ]
    assert all(r["rateHits"] == ["bash-burst"] for r in records)


def test_pending_files_of_earlier_versions_still_work(hook: HookRunner) -> None:
    assert hook.pre(1) == "allow"
    pending = next((hook.storage / "pending").rglob("*.json"))
    pending.write_text(json.dumps({"started": 1.0}))  # no rateHits: written before them
    witness = witness_path(hook.storage, SESSION)  # nor any seal
    witness.write_text(json.dumps({**json.loads(witness.read_text()), "sealed": {}}))
    hook.post(1)
    (record,) = calls(hook.storage)
    assert "rateHits" not in record and record["rules"]["constraints"][0] == "policy:allow"
    assert not pending.exists()


def test_calls_of_other_tools_carry_no_rate_hits(hook: HookRunner) -> None:
    payload = json.loads((PAYLOADS / "read-source.json").read_text())
    hook("pre", payload)
    hook("post", {**payload, "hook_event_name": "PostToolUse", "tool_response": {"ok": 1}})
    (record,) = calls(hook.storage)
    assert record["tool"] == "Read" and "rateHits" not in record
