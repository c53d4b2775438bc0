"""``audit prune`` removes the hook door's continuity witnesses of the sessions it removes.

The witness of a hook session lives outside its store. Pruning removed the session's files but
left its witness, so when the host resumed the session (its id unchanged) the next event found a
witness naming a chain that was no longer there and recorded the session's chain as lost — a
FAIL for what was ordinary housekeeping.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit import AuditChain, RecordDraft, iter_records
from pytest_harness_audit.audit.continuity_files import store_witness_dir, witness_path
from pytest_harness_audit.audit.prune import prune
from pytest_harness_audit.cli import main as cli

SESSION = "0c1d2e3f-prune"


class InProcessHost:
    """A host running the hook door's events in this process (stdin swapped per event)."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.store = tmp_path / "store"
        self.project = tmp_path / "project"
        self.project.mkdir()
        self.monkeypatch = monkeypatch
        self.number = 0
        monkeypatch.setenv("HARNESS_AUDIT_WITNESS_DIR", str(tmp_path / "witnesses"))

    def event(self, command: str, name: str, session: str = SESSION, **fields: Any) -> int:
        payload = {"session_id": session, "cwd": str(self.project), "hook_event_name": name}
        self.monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({**payload, **fields})))
        argv = ["--storage", str(self.store), "hook", command, "--preset", "safety"]
        return cli(argv)

    def session(self, session: str = SESSION, source: str = "startup") -> None:
        assert self.event("session-start", "SessionStart", session, source=source) == 0
        self.number += 1
        call = {
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "tool_use_id": f"toolu_{self.number:04d}",
        }
        assert self.event("pre", "PreToolUse", session, **call) == 0
        assert self.event("post", "PostToolUse", session, **call, tool_response={}) == 0

    def prune(self, *argv: str) -> int:
        return cli(["--storage", str(self.store), "audit", "prune", *argv])

    def tools(self, session: str = SESSION) -> list[str]:
        return [str(record["tool"]) for record in iter_records(self.store, session)]


@pytest.fixture
def host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> InProcessHost:
    return InProcessHost(tmp_path, monkeypatch)


@pytest.mark.slow
def test_prune_removes_the_witness_and_a_resumed_session_starts_afresh(
    host: InProcessHost,
) -> None:
    host.session()
    witness = witness_path(host.store, SESSION)
    assert witness.is_file()
    assert host.prune("--keep", "0") == 0
    assert not witness.exists()
    assert not store_witness_dir(host.store).exists()  # its store's folder went with it
    host.session(source="resume")
    tools = host.tools()
    assert "ChainLost" not in tools, tools
    assert tools.count("Bash") == 1  # the new chain holds the resumed session's call
    assert witness.is_file()  # and is witnessed again


@pytest.mark.slow
def test_without_the_witness_removed_the_resumed_session_is_recorded_as_lost(
    host: InProcessHost,
) -> None:
    # What prune left before: the store's files gone, the witness kept.
    host.session()
    for path in host.store.rglob(f"{SESSION}*"):
        if path.is_file():
            path.unlink()
    host.session(source="resume")
    assert "ChainLost" in host.tools()


# -- prune itself, on sessions written directly (fast) ------------------------------------------


def _session(store: Path, session: str, *, age: float = 0.0) -> Path:
    """A stored session with a witness (as the hook door leaves one); ``age`` seconds old."""
    with AuditChain(store, session) as chain:
        chain.append(RecordDraft(tool="Bash", category="command", target="ls"))
    witness = witness_path(store, session)
    witness.parent.mkdir(parents=True, exist_ok=True)
    witness.write_text('{"count": 1}', encoding="utf-8")
    if age:
        moment = 1_700_000_000.0 - age
        for path in (*store.rglob(f"{session}.*"), witness):
            os.utime(path, (moment, moment), follow_symlinks=False)
    return witness


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HARNESS_AUDIT_WITNESS_DIR", str(tmp_path / "witnesses"))
    return tmp_path / "store"


def test_prune_removes_the_witnesses_of_the_sessions_it_removes(store: Path) -> None:
    old = _session(store, "old-session", age=2000.0)
    new = _session(store, "new-session", age=10.0)
    result = prune(store, keep=1, now=1_700_000_000.0)
    assert result.removed_sessions == ["old-session"]
    assert not old.exists() and new.is_file()
    assert store_witness_dir(store).is_dir()  # still holds the kept session's witness
    prune(store, keep=0)
    assert not new.exists() and not store_witness_dir(store).exists()


def test_a_dry_run_keeps_every_witness(store: Path) -> None:
    witness = _session(store, SESSION)
    assert prune(store, keep=0, dry_run=True).removed_sessions == [SESSION]
    assert witness.is_file()


def test_another_stores_witness_of_the_same_session_is_kept(store: Path, tmp_path: Path) -> None:
    mine = _session(store, SESSION)
    theirs = _session(tmp_path / "other-store", SESSION)
    prune(store, keep=0)
    assert not mine.exists() and theirs.is_file()


def test_a_witness_that_is_a_symlink_is_not_followed(store: Path, tmp_path: Path) -> None:
    witness = _session(store, SESSION)
    target = tmp_path / "elsewhere.json"
    target.write_text("{}", encoding="utf-8")
    witness.unlink()
    witness.symlink_to(target)
    prune(store, keep=0)
    assert target.is_file()  # what the link pointed at is not removed through it
