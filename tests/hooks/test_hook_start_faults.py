"""A hook process that fails before it can judge anything still answers the way the host reads
as a refusal (exit 2 with one line), never with a crash (exit 1: "non-blocking", the call runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PAYLOAD = json.dumps(
    {
        "session_id": "s-1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf app"},
        "tool_use_id": "t-1",
        "cwd": "/nowhere",
    }
)


def _environment() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if k not in {"CLAUDE_PROJECT_DIR", "HARNESS_AUDIT_DIR", "PYTHONPATH"}
    } | {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}


def test_pre_in_a_working_directory_that_is_gone_refuses_in_one_line(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    script = (
        f"mkdir {gone} && cd {gone} && rmdir {gone} && "
        f"exec {sys.executable} -m pytest_harness_audit hook pre"
    )
    result = subprocess.run(
        ["bash", "-c", script],
        input=PAYLOAD,
        capture_output=True,
        text=True,
        env=_environment(),
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("harness-audit: error: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_post_with_a_policy_that_cannot_be_read_exits_1_in_one_line(tmp_path: Path) -> None:
    policy = tmp_path / "broken.yaml"
    policy.write_text("rules: [oops\n")
    post = json.loads(PAYLOAD) | {"hook_event_name": "PostToolUse", "tool_response": {}}
    storage = str(tmp_path / "store")
    argv = [sys.executable, "-m", "pytest_harness_audit", "--storage", storage, "hook", "post"]
    result = subprocess.run(
        [*argv, "--policy", str(policy)],
        input=json.dumps(post),
        capture_output=True,
        text=True,
        env=_environment(),
        cwd=tmp_path,
        timeout=60,
    )
    # exit 2 at PostToolUse would show the error to the model as if the call had been refused
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("harness-audit: error: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
