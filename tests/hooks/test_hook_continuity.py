"""A session's chain lost between hook processes is evidence; hooks installed mid-session are not.

Each event is a fresh ``harness-audit hook`` process with the payload Claude Code sends
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``tool_use_id``), and the
host's transcript is written as Claude Code writes it: JSON lines, a tool call being a
``tool_use`` block of an ``assistant`` line, its result a ``tool_result`` of a ``user`` line.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit import iter_records, verify_chain
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.doors.hook_continuity import (
    HookEvent,
    transcript_tool_uses,
    witness_path,
)
from pytest_harness_audit.doors.hook_marks import DOOR_MARK
from pytest_harness_audit.readers.verdict import Verdict, judge
from tests.hooks.hook_processes import harness_audit, hook, host_env

SESSION = "7f3c1e0a-5b2d-4c8e-9a1f-2d6b8e4c0a11"
ERASE = (
    "python3 -c \"import os; d=''.join(reversed(['audit', '.harness-'])); "
    '[os.remove(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs]"'
)


class Host:
    """A project, its store (inside it, as ``--storage .harness-audit``) and the host's
    transcript; each call goes pre → (the command, if not denied) → post, as the host runs it.

    ``env`` is the host's environment: its hook processes and the agent's commands both get
    it, a home of its own (``tmp_path / "home"``) included, so a command naming ``~`` never
    reaches the home of the user running the tests."""

    def __init__(self, tmp_path: Path, session: str = SESSION) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir()
        self.store = self.project / ".harness-audit"
        self.transcript = tmp_path / "claude" / "projects" / "-project" / f"{session}.jsonl"
        self.transcript.parent.mkdir(parents=True)
        self.transcript.touch()
        self.session = session
        self.number = 0
        self.home = tmp_path / "home"
        self.home.mkdir(exist_ok=True)
        self.env = host_env(HOME=str(self.home))

    def base(self, event: str) -> dict[str, Any]:
        return {
            "session_id": self.session,
            "transcript_path": str(self.transcript),
            "cwd": str(self.project),
            "permission_mode": "default",
            "hook_event_name": event,
        }

    def write(self, line: dict[str, Any]) -> None:
        line = {"sessionId": self.session, "cwd": str(self.project), "version": "2.0.0", **line}
        with self.transcript.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def event(self, name: str, command: str, **fields: Any) -> tuple[int, str, str]:
        payload = {**self.base(name), **fields}
        return hook(self.store, command, payload, "--preset", "safety", env=self.env)

    def attach(self, ident: str, context: object) -> None:
        """A ``PreToolUse`` answer's ``additionalContext``, kept in the transcript as Claude
        Code keeps it: an ``attachment`` line naming the hook, its event and the call."""
        if not isinstance(context, str) or not context:
            return
        attachment = {
            "type": "hook_additional_context",
            "content": [context],
            "hookName": "PreToolUse:Bash",
            "toolUseID": ident,
            "hookEvent": "PreToolUse",
        }
        self.write({"type": "attachment", "attachment": attachment})

    def start(self, source: str = "startup") -> None:
        assert self.event("SessionStart", "session-start", source=source)[0] == 0

    def end(self) -> str:
        code, _out, err = self.event("SessionEnd", "session-end", reason="prompt_input_exit")
        assert code == 0, err
        return err

    def bash(self, command: str, *, hooked: bool = True) -> str:
        """One Bash call; ``hooked=False``: made before the hooks were installed."""
        self.number += 1
        ident = f"toolu_01{self.number:022d}"
        params = {"command": command, "description": "run"}
        self.write(
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": ident, "name": "Bash", "input": params}],
                },
            }
        )
        call = {"tool_name": "Bash", "tool_input": params, "tool_use_id": ident}
        answer = "none"
        if hooked:
            code, out, err = self.event("PreToolUse", "pre", **call)
            assert code == 0, err
            decision = json.loads(out).get("hookSpecificOutput", {})
            answer = decision.get("permissionDecision", "none")
            self.attach(ident, decision.get("additionalContext"))
            if answer == "deny":
                return answer
        command = command.replace("python3 ", f"{sys.executable} ")
        done = subprocess.run(
            command, shell=True, cwd=self.project, capture_output=True, text=True, env=self.env
        )
        result = {"stdout": done.stdout, "stderr": done.stderr, "interrupted": False}
        self.write(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": ident, "content": "ok"}],
                },
                "toolUseResult": result,
            }
        )
        if hooked:
            code, _out, err = self.event("PostToolUse", "post", **call, tool_response=result)
            assert code == 0, err
        return answer

    def records(self) -> list[dict[str, Any]]:
        return list(iter_records(self.store, self.session))

    def lost(self) -> list[dict[str, Any]]:
        """The session's ``ChainLost`` notes."""
        return [r for r in self.records() if r["tool"] == "ChainLost"]

    def verdict(self) -> tuple[Verdict, list[str]]:
        found, reasons = judge(
            [CallRecord(raw) for raw in self.records()], chain_valid=True, chain_problem=""
        )
        return found, [reason.text for reason in reasons]

    def audit(self, *argv: str) -> tuple[int, str]:
        argv = ("--storage", str(self.store), "audit", *argv)
        code, out, _err = harness_audit(list(argv), env=self.env)
        return code, out

    def script(self, action: str) -> Path:
        """A script (written outside the project, as by an earlier call) doing ``action`` to
        the witness ``w``, whose path it builds at run time: no call names it."""
        hidden = str(self.witness())[::-1]
        path = self.project.parent / f"s{self.number}.py"
        path.write_text(f"import os\nw = {hidden!r}[::-1]\n{action}\n", encoding="utf-8")
        return path

    def witness(self) -> Path:
        return witness_path(self.store, self.session, self.env)


def _lost(host: Host) -> list[dict[str, Any]]:
    return [record for record in host.records() if record["tool"] == "ChainLost"]


@pytest.mark.slow
def test_a_store_erased_mid_session_is_recorded_as_lost(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    host.bash("echo two")
    host.bash(ERASE)
    host.bash("echo three")
    err = host.end()
    lost = _lost(host)
    assert len(lost) == 1, [r["tool"] for r in host.records()]
    record = lost[0]
    assert record["alerts"] == ["chain_lost", "tamper_attempt"]
    assert record["continuity"]["how"] == "missing"
    assert record["continuity"]["recordsMissing"] >= 3  # the start and the first two calls
    assert record["continuity"]["callsMissing"] == 2  # echo one, echo two (the erase is current)
    reason = record["judged"]["reason"]
    assert reason.startswith("the session's chain was lost: ")
    assert "2 earlier tool calls in the host's transcript" in reason
    assert host.verdict()[0] == Verdict.FAIL
    assert "verdict FAIL" in err
    report = (host.store / "reports" / f"{SESSION}.yaml").read_text()
    assert "tool: ChainLost, verdict: FAIL" in report
    # the new chain is whole: the record is the evidence, and verify says so
    assert verify_chain(host.store, SESSION).valid
    code, out = host.audit("verify", SESSION)
    assert code == 1 and "Chain valid: true" in out
    assert f"{SESSION}: CHAIN LOST before record 0 (" in out and "chain was lost" in out
    code, out = host.audit("verify", "--json")
    assert code == 1 and json.loads(out)["sessions"][0]["chainLost"][0].startswith("record 0")
    assert "Chain lost before record 0" in host.audit("summary")[1]


def test_hooks_installed_mid_session_are_not_a_loss(tmp_path: Path) -> None:
    """The benign look-alike: the first event is a PreToolUse, there never was a chain, and
    the transcript holds tool calls made before the hooks were installed."""
    host = Host(tmp_path)
    host.bash("echo before-one", hooked=False)
    host.bash("ls", hooked=False)
    assert host.bash("echo first hooked") == "none"
    host.bash("echo second hooked")
    host.end()
    assert _lost(host) == []
    notes = [r for r in host.records() if r["tool"] == "MidSessionStart"]
    assert len(notes) == 1 and notes[0]["continuity"]["earlierToolCalls"] == 2
    assert host.records()[0]["tool"] == "MidSessionStart"  # the chain says where it begins
    assert host.verdict()[0] == Verdict.PASS
    code, out = host.audit("verify", SESSION)
    assert code == 0 and "CHAIN LOST" not in out


@pytest.mark.slow
def test_a_whole_session_without_tampering_stays_pass(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    host.bash("echo two")
    host.start("resume")  # a resumed session keeps its chain
    host.bash("echo three")
    host.end()
    assert _lost(host) == [] and not any(r["tool"] == "MidSessionStart" for r in host.records())
    assert host.verdict()[0] == Verdict.PASS
    witness = json.loads(host.witness().read_text())
    assert witness["count"] == len(host.records())  # noted after every event, the end too
    assert witness["transcriptOffset"] == 0


def test_a_rolled_back_store_is_recorded_as_cut_short(tmp_path: Path) -> None:
    """A copy of the store taken early and put back later: a valid chain with its own anchor,
    the same first record, fewer records."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    saved = tmp_path / "saved"
    shutil.copytree(host.store, saved)
    host.bash("echo two")
    host.bash("echo three")
    shutil.rmtree(host.store)
    shutil.copytree(saved, host.store)
    host.bash("echo four")
    lost = _lost(host)
    assert len(lost) == 1 and lost[0]["continuity"]["how"] == "shortened"
    assert "cut short" in lost[0]["judged"]["reason"]
    assert host.verdict()[0] == Verdict.FAIL


def test_a_rolled_back_store_extended_past_the_witness_is_recorded_as_replaced(
    tmp_path: Path,
) -> None:
    """The old copy put back and lengthened with valid records (links and anchor recomputed by
    the writer itself, out of the witness's sight) to as many records as the witness saw: the
    line the witness saw last is no longer where it ended."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    saved = tmp_path / "saved"
    shutil.copytree(host.store, saved)
    saved_witness = host.witness().read_bytes()
    host.bash("echo two")
    host.bash("echo three")
    seen = json.loads(host.witness().read_text())["count"]
    shutil.rmtree(host.store)
    shutil.copytree(saved, host.store)
    # the writer's own witness of the old copy, in a folder of its own
    elsewhere = {**host.env, "HARNESS_AUDIT_WITNESS_DIR": str(tmp_path / "elsewhere")}
    private = witness_path(host.store, SESSION, elsewhere)
    private.parent.mkdir(parents=True)
    private.write_bytes(saved_witness)
    payload = {**host.base("SessionStart"), "source": "resume"}
    while len(host.records()) < seen + 1:
        assert (
            hook(host.store, "session-start", payload, "--preset", "safety", env=elsewhere)[0] == 0
        )
    assert verify_chain(host.store, SESSION).valid
    host.bash("echo four")
    lost = _lost(host)
    assert len(lost) == 1 and lost[0]["continuity"]["how"] == "replaced"
    assert host.verdict()[0] == Verdict.FAIL


def test_a_forged_chain_put_in_the_store_is_recorded_as_replaced(tmp_path: Path) -> None:
    """A chain of the same session written elsewhere (valid links, its own anchor) put in
    place of the real one: its first record is not the one the witness saw."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    forged = tmp_path / "forged"
    payload = {**host.base("SessionStart"), "source": "startup"}
    assert hook(forged, "session-start", payload, "--preset", "safety", env=host.env)[0] == 0
    shutil.rmtree(host.store)
    shutil.copytree(forged, host.store)
    host.bash("echo two")
    lost = _lost(host)
    assert len(lost) == 1 and lost[0]["continuity"]["how"] == "replaced"
    assert host.verdict()[0] == Verdict.FAIL


@pytest.mark.slow
def test_a_loss_is_recorded_once(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    host.bash(ERASE)
    for number in range(3):
        host.bash(f"echo after-{number}")
    host.end()
    assert len(_lost(host)) == 1
    assert host.verdict()[0] == Verdict.FAIL


def test_store_and_witness_erased_by_a_call_fail_at_its_post(tmp_path: Path) -> None:
    """Store and witness erased by a call, in a session with no refusal: its post finds
    neither, and the transcript holds the mark the door's ``pre`` answers leave there (``echo
    one``'s and the erasing call's own): the door ran, so a chain and a witness were there.
    It was a ``MidSessionStart`` WARN (the late-install look-alike)."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    remove = host.script("os.remove(w)")
    host.bash(f"{ERASE} && python3 {remove}")
    host.bash("echo two")
    (lost,) = _lost(host)
    assert lost["continuity"]["how"] == "erased"
    assert lost["continuity"]["event"] == "PostToolUse"
    assert lost["continuity"]["toolUseIds"] == [
        "toolu_010000000000000000000001",
        "toolu_010000000000000000000002",
    ]
    assert "calls of the host's transcript that this door answered" in lost["judged"]["reason"]
    assert not any(r["tool"] == "MidSessionStart" for r in host.records())
    assert host.verdict()[0] == Verdict.FAIL


def test_store_and_witness_erased_in_the_background_fail_at_the_next_event(
    tmp_path: Path,
) -> None:
    """Erased between two events (by a process a call left running), the next one a
    PreToolUse, in a session with no refusal: the earlier calls' marks in the transcript say
    the door ran (it was a ``MidSessionStart`` note and PASS)."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    host.bash("echo started in the background &")
    # what the process it left behind does later, between two events
    erase = ERASE.replace("python3 ", f"{sys.executable} ")
    subprocess.run(erase, shell=True, cwd=host.project, check=True)
    host.witness().unlink()
    host.bash("echo two")
    (lost,) = _lost(host)
    assert lost["continuity"]["how"] == "erased"
    assert lost["continuity"]["event"] == "PreToolUse"
    assert lost["continuity"]["callsMissing"] == 2
    assert host.verdict()[0] == Verdict.FAIL
    host.end()
    assert len(_lost(host)) == 1  # the end claims nothing twice


@pytest.mark.slow
def test_a_chain_begun_anew_by_the_door_run_on_a_blank_transcript_fails_at_the_end(
    tmp_path: Path,
) -> None:
    """Store and witness erased, then a new chain and witness made by running the door itself
    on a payload naming an empty transcript (what code of the agent's can do): the next event
    finds a chain its witness vouches for. At the end the chain begun in the session's middle
    holds none of the calls the transcript shows the door answered before it: a lost chain
    (it was PASS)."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    host.bash("echo two")
    shutil.rmtree(host.store)
    host.witness().unlink()
    blank = tmp_path / "blank.jsonl"
    blank.touch()
    params = {"command": "echo forged", "description": "run"}
    forged = {"tool_name": "Bash", "tool_input": params, "tool_use_id": "toolu_01forged"}
    for name, command, more in (
        ("PreToolUse", "pre", {}),
        ("PostToolUse", "post", {"tool_response": {"stdout": "forged\n", "stderr": ""}}),
    ):
        payload = {**host.base(name), "transcript_path": str(blank), **forged, **more}
        assert hook(host.store, command, payload, "--preset", "safety", env=host.env)[0] == 0
    host.bash("echo three")
    assert _lost(host) == []  # the witness vouches for the forged chain
    host.end()
    (lost,) = _lost(host)
    assert lost["continuity"]["event"] == "SessionEnd"
    assert lost["continuity"]["toolUseIds"] == [
        "toolu_010000000000000000000001",
        "toolu_010000000000000000000002",
    ]
    assert host.verdict()[0] == Verdict.FAIL


@pytest.mark.slow
def test_a_session_resumed_on_a_fresh_machine_claims_nothing(tmp_path: Path) -> None:
    """The look-alike: the transcript holds the door's marks from before, the store and the
    witnesses are not there (another machine, or pruned): a start resuming the session begins
    a new chain there, and the marked calls before it are not claimed."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    host.end()
    shutil.rmtree(host.store)
    host.witness().unlink()
    host.start("resume")
    host.bash("echo two")
    host.end()
    assert _lost(host) == []
    assert host.verdict()[0] == Verdict.PASS


def test_the_mark_printed_by_a_call_is_no_mark(tmp_path: Path) -> None:
    """The look-alike: hooks installed mid-session after calls whose output (or the agent's
    text) holds the door's mark. Only the host's ``attachment`` line of a ``PreToolUse``
    hook's output counts; a tool result quoting it is the call's output."""
    host = Host(tmp_path)
    host.bash(f"echo '{DOOR_MARK}'", hooked=False)
    host.write(
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": DOOR_MARK}]},
        }
    )
    assert host.bash("echo first hooked") == "none"
    host.end()
    assert _lost(host) == []
    (note,) = [r for r in host.records() if r["tool"] == "MidSessionStart"]
    assert note["continuity"]["earlierToolCalls"] == 1
    assert host.verdict()[0] == Verdict.PASS


def test_another_sessions_marks_are_not_this_ones(tmp_path: Path) -> None:
    """The look-alike: a transcript holding another session's marked calls (a session
    resumed into a new id copies its lines), hooks installed in this one's middle."""
    host = Host(tmp_path)
    other = {
        "type": "hook_additional_context",
        "content": [DOOR_MARK],
        "hookName": "PreToolUse:Bash",
        "toolUseID": "toolu_01other",
        "hookEvent": "PreToolUse",
    }
    host.write({"type": "attachment", "attachment": other, "sessionId": "another-session"})
    host.bash("ls", hooked=False)
    assert host.bash("echo first hooked") == "none"
    host.end()
    assert _lost(host) == []
    assert host.verdict()[0] == Verdict.PASS


def test_a_witness_written_over_with_the_store_erased_fails(tmp_path: Path) -> None:
    """The door writes its witness whole, as JSON: one that cannot be read was written over,
    and the chain it vouched for is unseen (it was a WARN: the erasure went unjudged)."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    overwrite = host.script("open(w, 'w').write('garbage')")
    host.bash(f"{ERASE} && python3 {overwrite}")
    host.bash("echo two")
    (lost,) = _lost(host)
    assert lost["alerts"] == ["chain_lost", "tamper_attempt"]
    assert lost["continuity"]["how"] == "witnessUnreadable"
    assert "written over or made unreadable (JSONDecodeError)" in lost["judged"]["reason"]
    assert host.verdict()[0] == Verdict.FAIL
    assert json.loads(host.witness().read_text())["count"] == len(host.records())  # whole again


@pytest.mark.parametrize("kind", ["link", "folder"])
def test_a_witness_put_out_of_reach_fails_once(tmp_path: Path, kind: str) -> None:
    """A link to an older copy of the witness, or a folder in its place (which no witness can
    replace): unreadable, a lost chain, recorded once however many events follow."""
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    witness = host.witness()
    old = tmp_path / "old-witness.json"
    old.write_bytes(witness.read_bytes())
    witness.unlink()
    if kind == "link":
        witness.symlink_to(old)
    else:
        witness.mkdir()
    host.bash("echo two")
    host.bash("echo three")
    (lost,) = _lost(host)
    assert lost["continuity"]["how"] == "witnessUnreadable"
    assert host.verdict()[0] == Verdict.FAIL


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf {dir}",
        "rm {witness}",
        "cat {witness}",
        "echo '{{}}' > {witness}",
        "cp /dev/null {witness}",
        "W={dir}; rm -r $W",
    ],
)
def test_a_call_naming_the_witnesses_is_refused(tmp_path: Path, command: str) -> None:
    host = Host(tmp_path)
    host.start()
    witness = host.witness()
    assert host.bash(command.format(dir=witness.parent.parent, witness=witness)) == "deny"
    refused = [r for r in host.records() if r["tool"] == "Bash"]
    assert "tamper_attempt" in refused[0]["alerts"] and witness.exists()
    assert host.verdict()[0] == Verdict.FAIL


@pytest.mark.parametrize("command", ["ls {parent}", "echo witness", "ls {parent}/.."])
def test_calls_beside_the_witnesses_are_not_refused(tmp_path: Path, command: str) -> None:
    host = Host(tmp_path)
    host.start()
    parent = host.witness().parent.parent.parent
    assert host.bash(command.format(parent=parent)) == "none"
    assert host.verdict()[0] == Verdict.PASS


@pytest.mark.slow  # many hook processes at once
def test_parallel_first_events_are_not_a_loss(tmp_path: Path) -> None:
    """Pre events of parallel calls at a session's first moment: none of them sees a witness
    of a chain that does not exist yet."""
    host = Host(tmp_path)
    env = host.env
    argv = [sys.executable, "-m", "pytest_harness_audit", "--storage", str(host.store)]
    processes = []
    for number in range(3):
        ident = f"toolu_par{number}"
        call = {"tool_name": "Read", "tool_input": {"file_path": str(host.project / "x")}}
        payload = {**host.base("PreToolUse"), **call, "tool_use_id": ident}
        processes.append(
            subprocess.Popen(
                [*argv, "hook", "pre", "--preset", "safety"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
        )
        assert processes[-1].stdin is not None
        processes[-1].stdin.write(json.dumps(payload))
        processes[-1].stdin.close()
    for process in processes:
        assert process.wait(timeout=120) == 0
    host.bash("echo after")
    assert _lost(host) == []


@pytest.mark.parametrize(
    "lines",
    [
        ["not json", '{"type": "assistant", "message": {"content": "text only"}}'],
        ['{"type": "user", "message": {"content": [{"type": "tool_use", "id": "x"}]}}'],
        ['{"type": "assistant", "message": {"content": [{"type": "tool_use"}]}}'],
    ],
)
def test_transcript_lines_that_are_not_tool_calls_are_skipped(
    tmp_path: Path, lines: list[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert transcript_tool_uses(str(path)) == []
    assert transcript_tool_uses(str(tmp_path / "missing.jsonl")) == []


def test_a_payload_without_a_session_is_left_to_the_handler() -> None:
    assert HookEvent.parse("[]") is None
    assert HookEvent.parse('{"session_id": ""}') is None
    assert HookEvent.parse("{") is None


def test_the_agents_commands_run_in_the_hosts_environment(tmp_path: Path) -> None:
    """A command naming ``~`` reaches the host's home (the test's own), never the home of the
    user running the tests; the witnesses' folder it is given is the hooks' too."""
    host = Host(tmp_path)
    host.start()
    assert host.bash("echo ~ > home && env > environment") == "none"
    assert (host.project / "home").read_text().strip() == str(host.home)
    given = (host.project / "environment").read_text().splitlines()
    assert f"HARNESS_AUDIT_WITNESS_DIR={host.env['HARNESS_AUDIT_WITNESS_DIR']}" in given
