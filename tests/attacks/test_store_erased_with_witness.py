"""A hook session's store and continuity witness moved away together.

By default the store (``~/.local/state/harness-audit/<project>``) and the witnesses
(``~/.local/state/harness-audit/witness``) share a folder. ``cd ~/.local/state && mv * ../gone``
carried both away while the shell reading placed no bare ``*`` after a ``cd``; it is now refused
at the gate (``protect-audit-store``). The same move made by code that builds the folder's name
in a way no reading follows still runs: the next event finds no witness and no chain, and takes
the session for one whose hooks came in its middle, the refusals before it gone.

The host's transcript still shows those refusals: each is an error result holding this door's
refusal (``[blocked] [web4-…``), as Claude Code shows it to the model. A call whose result is
the door's refusal and that no record holds is a lost record wherever it stands, so the session
ends FAIL with a ``ChainLost`` record. The twin: a session whose refusals are all recorded
claims nothing lost.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.readers.verdict import Verdict
from tests.hooks.hook_processes import harness_audit, hook
from tests.hooks.test_hook_continuity import Host


class DefaultStore(Host):
    """A host whose store and witnesses are where they are by default (its home's
    ``.local/state``), and that writes a refused call's result as Claude Code does: an error
    holding the ``pre`` step's reason."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.state = tmp_path / "home" / ".local" / "state"
        self.store = self.state / "harness-audit" / "project-1"
        for default in ("HARNESS_AUDIT_WITNESS_DIR", "XDG_STATE_HOME"):
            self.env.pop(default, None)
        self.reason = ""

    def event(self, name: str, command: str, **fields: Any) -> tuple[int, str, str]:
        payload = {**self.base(name), **fields}
        code, out, err = hook(self.store, command, payload, "--preset", "safety", env=self.env)
        if command == "pre" and code == 0:
            answer = json.loads(out).get("hookSpecificOutput", {})
            self.reason = answer.get("permissionDecisionReason", "")
        return code, out, err

    def bash(self, command: str, *, hooked: bool = True) -> str:
        answer = super().bash(command, hooked=hooked)
        if answer == "deny":
            ident = f"toolu_01{self.number:022d}"
            block = {
                "type": "tool_result",
                "tool_use_id": ident,
                "content": self.reason,
                "is_error": True,
            }
            self.write({"type": "user", "message": {"role": "user", "content": [block]}})
        return answer


def _move_away(state: Path) -> str:
    """A command moving everything in ``state`` (the store and the witnesses) beside it, to
    ``gone-*``: the folder's name reversed in the text, which no reading follows."""
    hidden = str(state)[::-1]
    return (
        f"python3 -c \"import os; d = ''.join(reversed('{hidden}')); "
        "[os.rename(os.path.join(d, n), d + '/../gone-' + n) for n in os.listdir(d)]\""
    )


def test_store_and_witness_moved_away_by_a_bare_glob_are_refused(tmp_path: Path) -> None:
    host = DefaultStore(tmp_path)
    host.start()
    assert host.bash(f"cd {host.state} && mv * ../gone") == "deny"
    assert (host.state / "harness-audit" / "witness").is_dir()
    assert host.verdict()[0] is Verdict.FAIL


@pytest.mark.slow
def test_store_and_witness_moved_away_by_code_fail(tmp_path: Path) -> None:
    host = DefaultStore(tmp_path)
    host.start()
    host.bash("echo one")
    assert host.bash("cat ~/.ssh/id_rsa") == "deny"
    assert (host.state / "harness-audit" / "witness").is_dir()
    assert host.bash(_move_away(host.state)) == "none"
    assert (host.state.parent / "gone-harness-audit" / "witness").is_dir()
    host.bash("echo after")
    host.end()
    (lost,) = host.lost()
    assert lost["continuity"]["how"] == "rolledBack"
    assert lost["continuity"]["toolUseIds"] == ["toolu_010000000000000000000002"]
    verdict, reasons = host.verdict()
    assert verdict is Verdict.FAIL, reasons


def test_recorded_refusals_with_their_results_claim_nothing_lost(tmp_path: Path) -> None:
    host = DefaultStore(tmp_path)
    host.start()
    host.bash("echo one")
    assert host.bash("cat ~/.ssh/id_rsa") == "deny"
    host.bash("ls -a")
    host.end()
    host.start("resume")
    host.end()
    assert host.lost() == []
    assert host.verdict()[0] is Verdict.FAIL  # the refusal's own FAIL, nothing more


def test_a_session_resumed_after_its_files_were_pruned_claims_nothing(tmp_path: Path) -> None:
    """``audit prune`` removes a session's files and witness; the host may resume it later:
    its new chain begins at ``SessionStart``, and the refusals before it are not claimed."""
    host = DefaultStore(tmp_path)
    host.start()
    assert host.bash("cat ~/.ssh/id_rsa") == "deny"
    host.end()
    argv = ["--storage", str(host.store), "audit", "prune", "--keep", "0"]
    code, out, err = harness_audit(argv, env=host.env)
    assert code == 0, out + err
    assert not list(host.store.rglob("*.jsonl"))
    host.start("resume")
    host.bash("echo again")
    host.end()
    assert host.lost() == []
    assert host.verdict()[0] is Verdict.PASS, host.verdict()


def _erase(state: Path) -> str:
    """Python code removing ``state``'s ``harness-audit`` folder (the store and the witnesses),
    its name and the function's reversed in the text: no reading follows them."""
    hidden = str(state / "harness-audit")[::-1]
    return (
        "import shutil; getattr(shutil, ''.join(reversed('eertmr')))"
        f"(''.join(reversed('{hidden}')))"
    )


def _gone(folder: Path) -> bool:
    """Whether ``folder`` is gone within 30 s (a process left running removes it)."""
    limit = time.monotonic() + 30
    while folder.exists() and time.monotonic() < limit:
        time.sleep(0.05)
    return not folder.exists()


@pytest.mark.slow
def test_store_and_witness_erased_by_a_background_process_fail_at_the_next_event(
    tmp_path: Path,
) -> None:
    """A process a call left running erases the store and the witnesses between two events:
    the next event finds neither, and the transcript shows the door's refusal before it."""
    host = DefaultStore(tmp_path)
    host.start()
    host.bash("echo one")
    assert host.bash("cat ~/.ssh/id_rsa") == "deny"
    (host.project.parent / "e.py").write_text(_erase(host.state), encoding="utf-8")
    later = "nohup sh -c 'sleep 1; python3 ../e.py' >/dev/null 2>&1 &"
    assert host.bash(later) == "none"
    assert _gone(host.state / "harness-audit")
    assert host.bash("echo after") == "none"
    (lost,) = host.lost()  # recorded at once: no end may come
    assert lost["continuity"]["event"] == "PreToolUse"
    assert lost["continuity"]["toolUseIds"] == ["toolu_010000000000000000000002"]
    verdict, reasons = host.verdict()
    assert verdict is Verdict.FAIL, reasons
    host.end()
    assert len(host.lost()) == 1  # the end claims no refusal twice


def test_store_and_witness_erased_between_events_fail_at_the_next_event(tmp_path: Path) -> None:
    """The same, the erasing process's work done by the test between two events."""
    host = DefaultStore(tmp_path)
    host.start()
    assert host.bash("cat ~/.ssh/id_rsa") == "deny"
    shutil.rmtree(host.state / "harness-audit")
    assert host.bash("echo after") == "none"
    (lost,) = host.lost()
    assert lost["continuity"]["how"] == "rolledBack"
    assert "refused calls of the host's transcript" in lost["judged"]["reason"]
    assert host.verdict()[0] is Verdict.FAIL
    code, out = host.audit("verify", host.session)
    assert code == 1 and "CHAIN LOST" in out, out


def test_a_compaction_after_store_and_witness_were_erased_fails(tmp_path: Path) -> None:
    """A start within the session (a compaction) finds neither: the refusal before it is the
    door's, so its chain was erased; a chain begun there claims nothing by itself."""
    host = DefaultStore(tmp_path)
    host.start()
    assert host.bash("cat ~/.ssh/id_rsa") == "deny"
    shutil.rmtree(host.state / "harness-audit")
    host.start("compact")
    (lost,) = host.lost()
    assert lost["continuity"]["event"] == "SessionStart"
    assert host.verdict()[0] is Verdict.FAIL


def _unhooked(host: DefaultStore, command: str, result: str, *, error: bool) -> None:
    """A Bash call the transcript shows before the hooks were installed, with its result."""
    host.number += 1
    ident = f"toolu_01{host.number:022d}"
    use = {"type": "tool_use", "id": ident, "name": "Bash", "input": {"command": command}}
    host.write({"type": "assistant", "message": {"role": "assistant", "content": [use]}})
    block = {"type": "tool_result", "tool_use_id": ident, "content": result, "is_error": error}
    host.write({"type": "user", "message": {"role": "user", "content": [block]}})


def test_hooks_installed_after_calls_that_printed_a_refusal_text_claim_nothing(
    tmp_path: Path,
) -> None:
    """Hooks installed mid-session into a session whose earlier calls printed the door's
    refusal text (a search of this project's sources) or were refused by the host's own rules:
    no result is an error holding the door's refusal, so no chain was there to lose."""
    host = DefaultStore(tmp_path)
    found = 'hook_unfinished.py:223:REFUSAL_MARK = "[blocked] [web4-"'
    _unhooked(host, "grep -rn 'blocked] \\[web4' src", found, error=False)
    _unhooked(host, "rm -rf build", "Permission to use Bash has been denied.", error=True)
    assert host.bash("echo first hooked") == "none"
    assert host.bash("echo second hooked") == "none"
    assert host.records()[0]["tool"] == "MidSessionStart"
    host.end()
    assert host.lost() == []
    verdict, reasons = host.verdict()
    assert verdict is Verdict.PASS, reasons


def test_a_session_resumed_on_a_fresh_machine_claims_nothing(tmp_path: Path) -> None:
    """The session ran elsewhere (its transcript holds the door's refusal); the host resumes
    it on a machine with no store and no witness: its chain begins at that start."""
    (tmp_path / "first").mkdir()
    (tmp_path / "fresh").mkdir()
    elsewhere = DefaultStore(tmp_path / "first")
    elsewhere.start()
    assert elsewhere.bash("cat ~/.ssh/id_rsa") == "deny"
    elsewhere.end()
    host = DefaultStore(tmp_path / "fresh")
    host.transcript.write_bytes(elsewhere.transcript.read_bytes())
    host.number = elsewhere.number
    host.start("resume")
    assert host.bash("echo again") == "none"
    host.end()
    assert host.lost() == []
    verdict, reasons = host.verdict()
    assert verdict is Verdict.PASS, reasons
