"""Run `harness-audit hook …` as the host runs it: a fresh process per event, JSON on stdin."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.readers.verdict import Verdict, judge

PAYLOADS = Path(__file__).with_name("payloads")
RECORDED_CWD = "/home/dev/demo"


def host_env(**more: str) -> dict[str, str]:
    """The environment a hook process gets: the test's, without host variables it may carry."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"CLAUDE_PROJECT_DIR", "HARNESS_AUDIT_HOOK_WARN", "HARNESS_AUDIT_DIR"}
        and not k.startswith("HARNESS_AUDIT_P")
    }
    # the continuity witnesses (one folder per store) kept out of the user's state directory
    env["HARNESS_AUDIT_WITNESS_DIR"] = os.path.join(tempfile.gettempdir(), "harness-audit-witness")
    env.update(more)
    return env


def hook(
    storage: Path,
    event: str,
    payload: str | dict[str, Any],
    *options: str,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of one ``harness-audit hook EVENT`` process."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_harness_audit",
            "--storage",
            str(storage),
            "hook",
            event,
            *options,
        ],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        env=env if env is not None else host_env(),
    )
    return done.returncode, done.stdout, done.stderr


def _moved(value: Any, cwd: Path) -> Any:
    if isinstance(value, str):
        return value.replace(RECORDED_CWD, str(cwd))
    if isinstance(value, dict):
        return {key: _moved(item, cwd) for key, item in value.items()}
    if isinstance(value, list):
        return [_moved(item, cwd) for item in value]
    return value


def recorded(name: str, cwd: Path, session_id: str | None = None) -> dict[str, Any]:
    """A recorded PreToolUse payload, moved to the project at ``cwd``."""
    data: dict[str, Any] = _moved(json.loads((PAYLOADS / name).read_text()), cwd)
    if session_id is not None:
        data["session_id"] = session_id
    return data


def as_post(pre: dict[str, Any], response: Any) -> dict[str, Any]:
    """The PostToolUse payload the host sends after running ``pre``'s call."""
    return {**pre, "hook_event_name": "PostToolUse", "tool_response": response}


def run_as_host(pre: dict[str, Any], cwd: Path) -> dict[str, Any]:
    """Do what the host does for an allowed call (Bash runs, Write writes in place) and return
    the tool response it reports."""
    tool, params = pre["tool_name"], pre["tool_input"]
    if tool == "Bash":
        command = params["command"].replace("python3 ", shlex.quote(sys.executable) + " ")
        done = subprocess.run(
            command, shell=True, cwd=cwd, capture_output=True, text=True, timeout=60
        )
        return {"stdout": done.stdout, "stderr": done.stderr, "interrupted": False}
    if tool == "Write":
        with open(params["file_path"], "w", encoding="utf-8") as out:
            out.write(params["content"])
        return {"type": "create", "filePath": params["file_path"]}
    raise AssertionError(f"no host action for {tool}")


def call_records(storage: Path, session_id: str) -> list[dict[str, Any]]:
    """The session's call records, in order."""
    return [r for r in iter_records(storage, session_id) if r.get("kind", "call") == "call"]


def verdict(storage: Path, session_id: str) -> Verdict:
    """The session's verdict, from its stored chain."""
    records = [CallRecord(raw) for raw in iter_records(storage, session_id)]
    return judge(records, chain_valid=True, chain_problem="")[0]
