"""Every door judges what a call did with the watches that apply to it.

The harness door's gate gets the standard watches (:mod:`.session.door_watches`); the other
doors build gates of their own, and one that lacks a watch judges an attack PASS that the
harness door fails (``harness-audit proxy --social`` did not stamp its post store, nor, without
``--workspace``, the auditor's installation). Each door is opened as it opens itself, and every
standard watch that applies to what it has (a workspace, template seeds, a post store it serves
sends from) must be on its gate. What does not apply, and why:

* seeds: only the harness process builds workspaces from template seeds (a proxy or a hook
  process copies none; the harness that started a proxy watches its seeds around the run);
* the post store at the hook door: it serves no ``send_message`` and writes no store.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from pytest_harness_audit.cli import proxy_cmd
from pytest_harness_audit.doors.hook import PRE, open_gate, parse_payload
from pytest_harness_audit.gate.gate import Gate
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.door_watches import STANDARD_WATCHES
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.proxy_session import RecordingProxySession


def missing(inspectors: Sequence[object], *, workspace: bool, seeds: bool, post: bool) -> list[str]:
    """The standard watches that apply to a door with what it has, and are not on its gate."""
    has = {"always": True, "workspace": workspace, "seeds": seeds, "post store": post}
    return [
        kind.__name__
        for kind, needs in STANDARD_WATCHES.items()
        if has[needs] and not any(isinstance(inspector, kind) for inspector in inspectors)
    ]


def _check(door: str, inspectors: Sequence[object], **has: bool) -> None:
    lacking = missing(inspectors, **has)
    assert not lacking, f"the {door} door's gate lacks {', '.join(lacking)}"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    made = Harness.create(tmp_path / "run", template="python-service", policy="safety")
    yield made
    made.close()


def test_the_harness_door(harness: Harness) -> None:
    _check("harness (scripted)", harness.gate.inspectors, workspace=True, seeds=True, post=True)


def test_the_harness_proxy(harness: Harness) -> None:
    proxy = RecordingProxySession(harness, social=True)
    inspectors = proxy.gate.inspectors
    _check("start_proxy", inspectors, workspace=True, seeds=True, post=True)


@pytest.mark.parametrize("workspace", [True, False], ids=["workspace", "upstreams-only"])
@pytest.mark.parametrize("social", [True, False], ids=["social", "no-social"])
def test_the_proxy_command(tmp_path: Path, workspace: bool, social: bool) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    policy = Policy.preset("safety")
    where = str(root) if workspace else None
    gate = proxy_cmd._open_gate(tmp_path / "store", "s", policy, where, social=social)
    try:
        if social:  # what ``run`` does with ``--social``: the tool needs the watch
            proxy_cmd._send_message_tool("alice,bob", gate, policy, str(tmp_path / "store"), "s")
        door = f"harness-audit proxy{' --workspace' * workspace}{' --social' * social}"
        _check(door, gate.inspectors, workspace=workspace, seeds=False, post=social)
    finally:
        proxy_cmd._close_inspections(gate)
        gate.close()


def _hook_watches(gate: Gate, inspection: object) -> list[object]:
    """The hook door's watches: its gate's, and those its inspection keeps from pre to post."""
    inspector = getattr(inspection, "inspector", None)
    inner = [getattr(inspector, "install_watch", None), getattr(inspector, "module_watch", None)]
    return [*gate.inspectors, *(watch for watch in inner if watch is not None)]


def test_the_hook_door(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_AUDIT_WITNESS_DIR", str(tmp_path / "witness"))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    project = tmp_path / "demo"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    payload = {
        "session_id": "parity",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
    }
    policy = Policy.preset("safety")
    gate, inspection = open_gate(
        tmp_path / "store", parse_payload(json.dumps(payload), PRE), policy
    )
    try:
        assert inspection is not None
        watches = _hook_watches(gate, inspection)
        _check("hook", watches, workspace=True, seeds=False, post=False)
    finally:
        gate.chain.close()


def test_a_missing_watch_is_named_with_its_door() -> None:
    with pytest.raises(AssertionError, match="the proxy door's gate lacks SessionInspection, "):
        _check("proxy", [], workspace=True, seeds=False, post=True)
