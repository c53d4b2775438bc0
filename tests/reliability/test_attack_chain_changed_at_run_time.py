"""Attacks on the chain by a name only built at run time, while its session is being written.

The store rule refuses every call that names the store, but inline code can build the name as it
runs (``'au' + 'dit'``): the call is allowed and changes the chain behind its writer. The append
of that very call's record then failed with ``ChainError``, and the exception escaped the door —
a traceback in the test instead of a verdict, a protocol error at the proxy. Now every door ends
the session: the call goes unrecorded, every later call is refused before it runs, and the
verdict is FAIL with the reason ``tamper``.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_tampers import through_proxy

from pytest_harness_audit.audit import locking
from pytest_harness_audit.audit.continuity_files import BETWEEN_DIGESTS_KEY, BETWEEN_KEY
from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.cli import main as cli
from pytest_harness_audit.doors.chain_faults import TAMPER_CODE
from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.session.harness import Harness

SESSION = "s"
#: The chain's path as inline code builds it from the workspace (``../audit/audit/s.jsonl``).
CHAIN = "os.path.join('..', 'au' + 'dit', 'audit', 'S.jsonl'.lower())"

TAMPERS = {
    "cut-short": f"p = {CHAIN}; d = open(p, 'rb').read(); open(p, 'wb').write(d[:-40])",
    "junk-appended": f"open({CHAIN}, 'ab').write(bytes([123, 125, 10]))",
    # no newline: a dead writer's torn tail would be removed, but no writer died here
    "incomplete-line-appended": f"open({CHAIN}, 'ab').write(bytes([120]))",
    "last-line-rewritten": (
        f"p = {CHAIN}; d = open(p, 'rb').read().splitlines(True); "
        "open(p, 'wb').write(b''.join(d[:-1]) + d[-1].replace(b'success', b'ok'))"
    ),
    "emptied": f"open({CHAIN}, 'wb').close()",
}


def inline(code: str) -> str:
    return f'python3 -c "import os; {code}"'


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    made = Harness.create(tmp_path, policy="safety", session_id=SESSION)
    made.call("Bash", command="git status --short")
    yield made
    made.close()


def _tamper_reasons(harness: Harness) -> list[str]:
    return [reason.text for reason in harness.verdict_reasons if reason.code == TAMPER_CODE]


@pytest.mark.parametrize(
    "code",
    [
        pytest.param(
            code,
            id=name,
            marks=() if name in ("cut-short", "incomplete-line-appended") else pytest.mark.slow,
        )
        for name, code in TAMPERS.items()
    ],
)
def test_a_chain_changed_by_inline_code_ends_the_session_without_a_traceback(
    harness: Harness, code: str
) -> None:
    tampered = harness.call("Bash", command=inline(code))
    assert tampered.status == "success"  # it ran: its record is what could not be written
    assert tampered.unrecorded is not None and tampered.record_id == ""
    after = harness.call("Bash", command="touch ran-after")
    assert after.status == "blocked"
    assert "can no longer be written" in str(after.error_message)
    assert not (harness.root / "ran-after").exists()  # refused before it ran
    assert harness.verdict == "FAIL"
    (reason,) = _tamper_reasons(harness)
    assert "changed outside the harness" in reason
    assert "FAIL: tamper: the audit chain can no longer be written" in str(harness.report())


@pytest.mark.slow
def test_a_function_tool_ends_the_same_way(harness: Harness) -> None:
    calls: list[str] = []

    @harness.tool
    def note(text: str) -> str:
        """Keep a note."""
        calls.append(text)
        return "kept"

    harness.call("Bash", command=inline(TAMPERS["cut-short"]))
    with pytest.raises(ToolCallBlocked, match="can no longer be written"):
        note("after")
    assert calls == []
    assert harness.verdict == "FAIL" and _tamper_reasons(harness)


@pytest.mark.slow
def test_a_lock_held_by_another_process_ends_the_session(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(locking, "LOCK_TIMEOUT_S", 0.2)
    (lock,) = harness.storage_dir.rglob(f"{SESSION}.lock")
    holder = os.open(lock, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        result = harness.call("Bash", command="touch while-held")
    finally:
        os.close(holder)
    assert result.unrecorded is not None and "held by another process" in result.unrecorded
    assert harness.call("Bash", command="touch after").status == "blocked"
    assert not (harness.root / "after").exists()
    assert harness.verdict == "FAIL" and _tamper_reasons(harness)


def test_a_call_after_close_still_raises(harness: Harness) -> None:
    harness.close()
    with pytest.raises(ChainError, match="closed"):
        harness.call("Bash", command="echo late")


BENIGN = [
    # the chain read by a computed name: nothing changes, nothing fails
    f'python3 -c "import os; print(len(open({CHAIN}).read()) > 0)"',
    # a file of the workspace whose name is built like the store's
    "python3 -c \"import os; os.makedirs('au' + 'dit', exist_ok=True); "
    "open(os.path.join('au' + 'dit', 's.jsonl'), 'a').write('{}')\"",
    "mkdir -p audit/audit && echo '{}' >> audit/audit/s.jsonl",
]


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, marks=() if i == 0 else pytest.mark.slow) for i, c in enumerate(BENIGN)],
)
def test_look_alikes_leave_the_session_whole(harness: Harness, command: str) -> None:
    result = harness.call("Bash", command=command)
    assert result.unrecorded is None and result.record_id
    assert harness.call("Bash", command="git status --short").status == "success"
    assert not _tamper_reasons(harness)
    assert harness.verify().valid
    assert harness.verdict != "FAIL"


@pytest.mark.slow
def test_another_honest_writer_of_the_session_is_no_tamper(harness: Harness) -> None:
    from pytest_harness_audit.audit import AuditChain, RecordDraft

    with AuditChain(harness.storage_dir, SESSION) as other:
        other.append(RecordDraft(tool="Read", category="file_read", target="README.md"))
    assert harness.call("Bash", command="git status --short").record_id
    assert not _tamper_reasons(harness) and harness.verify().valid


@pytest.mark.slow
def test_through_the_proxy_the_agent_gets_a_tool_error_and_the_session_fails(
    harness: Harness,
) -> None:
    proxy = harness.start_proxy()
    through_proxy(proxy, inline(TAMPERS["cut-short"]), "touch ran-after")
    assert not (harness.root / "ran-after").exists()
    assert harness.verdict == "FAIL" and _tamper_reasons(harness)


@pytest.mark.slow
def _chain_evidence(witness: Path) -> dict[str, object]:
    """The witness without the names and digests of the states kept between events (the
    session's end keeps the workspace's once more)."""
    data = json.loads(witness.read_bytes())
    return {k: v for k, v in data.items() if k not in (BETWEEN_KEY, BETWEEN_DIGESTS_KEY)}


def test_the_hook_door_refuses_and_its_session_end_judges_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store, project = tmp_path / "store", tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("HARNESS_AUDIT_WITNESS_DIR", str(tmp_path / "witnesses"))

    def event(command: str, name: str, **fields: object) -> tuple[int, str]:
        payload = {"session_id": SESSION, "cwd": str(project), "hook_event_name": name}
        monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({**payload, **fields})))
        code = cli(["--storage", str(store), "hook", command, "--preset", "safety"])
        return code, capsys.readouterr().err

    call = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}
    assert event("session-start", "SessionStart", source="startup")[0] == 0
    assert event("pre", "PreToolUse", **call)[0] == 0
    assert event("post", "PostToolUse", **call, tool_response={})[0] == 0
    (witness,) = (tmp_path / "witnesses").rglob(f"{SESSION}.json")
    witnessed = _chain_evidence(witness)
    chain = store / "audit" / f"{SESSION}.jsonl"
    chain.write_bytes(chain.read_bytes()[:-40])  # what the inline code of the call did
    code, err = event("pre", "PreToolUse", **{**call, "tool_use_id": "toolu_2"})
    assert code == 2 and "can no longer be written" in err and "Traceback" not in err
    code, err = event("session-end", "SessionEnd", reason="exit")
    assert code == 0 and "verdict FAIL" in err
    report = (store / "reports" / f"{SESSION}.yaml").read_text(encoding="utf-8")
    assert "can no longer be written" in report
    assert _chain_evidence(witness) == witnessed  # the evidence of what the chain was is kept
