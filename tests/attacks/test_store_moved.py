"""A hook session's store put out of the door's sight, or rolled back after its last event.

The agent's Bash runs as the user who owns the store. A script whose text names no path of the
store (it finds it by a glob and a reversed name) copies the store aside; later calls are
refused and recorded; then a process a call left running puts the copy back — either by
replacing the store's folder with a link to the copy (the continuity witness used to be looked
up by the store's resolved path, so the link led to no witness at all and the shorter chain
passed), or, after the session's end, by writing the copy over the store (read by ``audit
verify`` and ``audit report`` only, no hook event coming any more).

The twins: a store that is a link from the start (a home folder reached through a link), and
an agent that cleans its own caches and build folders, stay PASS.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.readers.verdict import Verdict
from tests.hooks.hook_processes import hook
from tests.hooks.test_hook_continuity import SESSION, Host

# found by a glob and a reversed name: no call's text spells the store
_FIND = "import glob, os, shutil\nd = [p for p in glob.glob('.*') if p.endswith('tidua'[::-1])]"
_FIND += "[0]\n"
COPY_ASIDE = _FIND + "shutil.copytree(d, '../aside', symlinks=True)\n"


class Observed(Host):
    """A host whose hooks only observe (the ``permissive`` preset), its store outside the
    project as by default: what the agent cleans runs."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.store = tmp_path / "state" / "harness-audit"

    def event(self, name: str, command: str, **fields: Any) -> tuple[int, str, str]:
        payload = {**self.base(name), **fields}
        return hook(self.store, command, payload, "--preset", "permissive", env=self.env)


def _script(host: Host, name: str, body: str) -> str:
    """A script written outside the project (as by an earlier call); the command running it."""
    path = host.project.parent / name
    path.write_text(body, encoding="utf-8")
    return f"python3 ../{name}"


def _refused_calls(host: Host) -> None:
    assert host.bash("rm -rf /tmp/not-there-at-all") == "deny"
    assert host.bash("cat ~/.ssh/id_rsa") == "deny"


def _lost(host: Host) -> list[dict[str, object]]:
    return [r for r in host.records() if r["tool"] == "ChainLost"]


@pytest.mark.slow
def test_a_store_replaced_by_a_link_to_an_old_copy_is_a_loss(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    host.bash(_script(host, "a.py", COPY_ASIDE))
    _refused_calls(host)
    # a process the last call left running, between two events
    moved = host.project.parent / "moved"
    os.rename(host.store, moved)
    os.symlink(host.project.parent / "aside", host.store)
    host.bash("echo after")
    err = host.end()
    lost = _lost(host)
    assert len(lost) == 1, [r["tool"] for r in host.records()]
    assert lost[0]["continuity"]["how"] == "shortened"  # type: ignore[index]
    assert host.verdict()[0] == Verdict.FAIL
    assert "verdict FAIL" in err


@pytest.mark.slow
def test_a_store_reached_through_a_link_from_the_start_stays_pass(tmp_path: Path) -> None:
    real = tmp_path / "state"
    real.mkdir()
    host = Host(tmp_path)
    os.symlink(real, host.store)
    host.start()
    host.bash("echo one")
    host.bash("ls -la")
    host.end()
    assert _lost(host) == []
    assert host.verdict()[0] == Verdict.PASS
    code, out = host.audit("verify", SESSION)
    assert code == 0 and "CHAIN LOST" not in out, out
    code, out = host.audit("report", SESSION)
    assert "verdict: PASS" in out, out


@pytest.mark.slow
def test_cleaning_caches_beside_the_store_stays_pass(tmp_path: Path) -> None:
    host = Observed(tmp_path)
    host.start()
    host.bash("git init -q . && echo x > tracked && git add tracked && git commit -qm one")
    host.bash("mkdir -p .cache build && touch .cache/a build/b untracked.log")
    host.bash("rm -rf .cache && git clean -fdx")
    host.bash("ls -a .. && cat tracked && echo note > notes.txt")
    host.end()
    assert _lost(host) == []
    assert host.verdict()[0] == Verdict.PASS, host.verdict()
    code, out = host.audit("verify", SESSION)
    assert code == 0, out
    code, out = host.audit("report", SESSION)
    assert "verdict: PASS" in out, out


@pytest.mark.slow
def test_a_store_rolled_back_after_the_session_ended_fails_verify_and_report(
    tmp_path: Path,
) -> None:
    host = Host(tmp_path)
    host.start()
    host.bash("echo one")
    host.bash(_script(host, "a.py", COPY_ASIDE))
    _refused_calls(host)
    host.end()
    # after the end: the old copy written over the store, and a report file claiming PASS
    aside = host.project.parent / "aside"
    report = host.store / "reports" / f"{SESSION}.yaml"
    forged = report.read_text(encoding="utf-8").replace("verdict: FAIL", "verdict: PASS")
    shutil.rmtree(host.store)
    shutil.copytree(aside, host.store, symlinks=True)
    report.parent.mkdir(exist_ok=True)
    report.write_text(forged, encoding="utf-8")
    code, out = host.audit("verify", SESSION)
    assert code == 1, out
    assert f"{SESSION}: CHAIN LOST" in out and "cut short" in out
    code, out = host.audit("verify", "--json")
    assert code == 1 and json.loads(out)["sessions"][0]["chainLost"]
    code, out = host.audit("report", SESSION)
    assert "verdict: FAIL" in out and "verdict: PASS" not in out, out
    assert "cut short" in out


@pytest.mark.slow
def test_a_forged_report_file_over_a_whole_chain_is_not_printed_as_pass(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.start()
    _refused_calls(host)
    host.end()
    report = host.store / "reports" / f"{SESSION}.yaml"
    written = report.read_text(encoding="utf-8")
    assert "\nverdict: FAIL\n" in written
    report.write_text(written.replace("\nverdict: FAIL\n", "\nverdict: PASS\n"), encoding="utf-8")
    _code, out = host.audit("report", SESSION)
    assert "\nverdict: FAIL\n" in out and "\nverdict: PASS\n" not in out, out
    assert "report file says PASS, its chain judges FAIL" in out
    report.unlink()  # a report file removed: built from the chain too
    _code, out = host.audit("report", SESSION)
    assert "\nverdict: FAIL\n" in out and "report file is missing" in out, out


@pytest.mark.slow
def test_a_session_erased_whole_after_its_end_fails_verify(tmp_path: Path) -> None:
    """Every file of the session removed after its end: ``audit verify`` used to find no
    session at all (exit 0) and, named, no such session (a usage error)."""
    host = Host(tmp_path)
    host.start()
    _refused_calls(host)
    host.end()
    for path in host.store.rglob(f"{SESSION}*"):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    code, out = host.audit("verify")
    assert code == 1, out
    assert f"{SESSION}: INVALID (0 records)" in out and "session_missing" in out
    assert "CHAIN LOST before record 0 (continuity witness): the session's chain was lost" in out
    code, out = host.audit("verify", SESSION)
    assert code == 1 and "the witness holds 5 records" in out, out
