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
