"""Parameters an agent's JSON can carry but UTF-8 cannot: every tool is judged and recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit.verify import verify_chain
from pytest_harness_audit.session.harness import Harness

LONE = "\udc80"  # what a "\udc80" escape in JSON decodes to

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("Read", {"file_path": "notes" + LONE}),
    ("Read", {"file_path": ".env" + LONE}),
    ("Write", {"file_path": "out" + LONE + ".txt", "content": "x" + LONE}),
    ("Write", {"file_path": "memory.md", "content": LONE}),
    ("Edit", {"file_path": "README.md", "old_string": LONE, "new_string": "y"}),
    ("Glob", {"pattern": "*" + LONE}),
    ("Grep", {"pattern": "a" + LONE}),
    ("Grep", {"pattern": "a", "glob": "*" + LONE}),
    ("Bash", {"command": "echo " + LONE + " > memory.md"}),
    ("Bash", {"command": "cat .env " + LONE}),
    ("WebFetch", {"url": "https://example.org/" + LONE, "prompt": LONE}),
    ("mcp__git__git_status", {"repo_path": LONE}),
]


@pytest.mark.parametrize(
    ("tool", "params"), CALLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(CALLS)]
)
def test_a_lone_surrogate_in_any_parameter_is_judged_and_recorded(
    tmp_path: Path, tool: str, params: dict[str, Any]
) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "README.md").write_text("hello\n", encoding="utf-8")
    harness = Harness(root, storage_dir=tmp_path / "audit", policy="safety", session_id="s")
    result = harness.call(tool, **params)
    assert result.status in ("success", "error", "blocked")
    record = result.record
    assert record["tool"] == tool and record["result"]["status"] == result.status
    assert harness.calls()[-1].status == result.status
    assert verify_chain(tmp_path / "audit", "s").valid
    harness.close()


def test_secrets_and_memory_writes_are_still_seen_next_to_a_lone_surrogate(
    tmp_path: Path,
) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    harness = Harness(root, storage_dir=tmp_path / "audit", policy="safety", session_id="s")
    assert harness.call("Bash", command="cat .env " + LONE).blocked
    written = harness.call("Bash", command="echo " + LONE + " > memory.md")
    assert "memory_write" in written.record.get("alerts", [])
    harness.close()
