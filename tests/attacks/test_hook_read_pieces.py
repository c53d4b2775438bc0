"""A known key handed to the model in pieces shorter than a run, one piece a call, at the hook
door: each host event is a process of its own, so what the earlier outputs held of the key is
carried in the session's continuity witness (places of the value by fingerprint, no text), and
the output that completes a run is redacted and fails the session, as at the proxy and the
harness. The benign twins: ordinary outputs over many calls stay PASS, and a piece of another
session's reads makes no run with this one's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit.continuity_files import witness_path
from pytest_harness_audit.readers.verdict import Verdict
from tests.hooks.hook_processes import call_records, hook, host_env, verdict

KEY = "sk-live-9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a"
CORE = KEY[len("sk-live-") :]
SESSION = "read-pieces"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".env").write_text(f"API_KEY={KEY}\n", encoding="utf-8")
    return root


def _call(storage: Path, project: Path, index: int, text: str, session: str = SESSION) -> Any:
    """One Bash call as the host makes it (pre, then post with ``text`` as its output): the
    post's answer."""
    base = {
        "session_id": session,
        "tool_name": "Bash",
        "tool_input": {"command": f"cat notes/part{index}.txt", "description": "read notes"},
        "tool_use_id": f"toolu_piece_{index}",
        "cwd": str(project),
        "permission_mode": "default",
    }
    code, out, err = hook(storage, "pre", {**base, "hook_event_name": "PreToolUse"})
    assert code == 0, err
    assert json.loads(out).get("hookSpecificOutput", {}).get("permissionDecision") != "deny"
    response = {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
    post = {**base, "hook_event_name": "PostToolUse", "tool_response": response}
    code, out, err = hook(storage, "post", post)
    assert code == 0, err
    return json.loads(out)


def test_a_key_read_in_eight_character_pieces_over_several_calls_fails(
    project: Path, tmp_path: Path
) -> None:
    storage = tmp_path / "store"
    # out of order, chatter around them: no piece alone is a run (16 characters of this key)
    pieces = [(16, 24), (0, 8), (24, 32), (8, 16)]
    answers = [
        _call(storage, project, i, f"note {i}: part {CORE[a:b]} (see next)\n")
        for i, (a, b) in enumerate(pieces)
    ]
    assert answers[:2] == [{"suppressOutput": True}] * 2  # no run yet
    replaced = answers[2]["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
    assert CORE[24:32] not in replaced and replaced.startswith("note 2: part [secret:")
    records = call_records(storage, SESSION)
    assert "secret_exposure" in records[2]["alerts"]
    assert records[2]["judged"]["verdict"] == "FAIL"
    assert verdict(storage, SESSION) is Verdict.FAIL
    # what is carried between the events holds no character of the key
    witness = witness_path(storage, SESSION, host_env()).read_text(encoding="utf-8")
    assert '"read"' in witness
    for start in range(len(CORE) - 5):
        assert CORE[start : start + 6] not in witness


@pytest.mark.slow
def test_ordinary_outputs_over_many_calls_stay_pass(project: Path, tmp_path: Path) -> None:
    storage = tmp_path / "store"
    texts = [
        f"the key ending in {CORE[-4:]}\n",
        "sk-live- keys are for production\n",
        f"build {CORE[4:10]} ok\n",
        "commit 9d8c7b6a1234567890abcdef1234567890abcdef\n",
        "request 0b1e2d3c-4f5a-4978-a8b9-cadbecfd0e1f\n",
        f"digest {'0' * 32}\n",
        "tests: 312 passed, 4 skipped\n",
        f"version 9.{CORE[-3:]}\n",
    ]
    for index, text in enumerate(texts):
        assert _call(storage, project, index, text) == {"suppressOutput": True}, text
    assert verdict(storage, SESSION) is Verdict.PASS


def test_pieces_read_in_another_session_do_not_add_up(project: Path, tmp_path: Path) -> None:
    storage = tmp_path / "store"
    _call(storage, project, 0, f"part {CORE[0:8]}\n", session="read-pieces-other")
    assert _call(storage, project, 1, f"part {CORE[8:16]}\n") == {"suppressOutput": True}
    assert verdict(storage, SESSION) is Verdict.PASS
