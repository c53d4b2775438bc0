"""The host of the hook tests: its home folder, managed settings and project, the hook events
it sends (each a process of its own) and what they recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hook_processes import answer_of, as_post, harness_audit, hook, host_env, recorded

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.readers.verdict import Verdict, judge

SESSION = "host-between-1"
NOTE = "HostSettingsChanged"
LOCAL = "settings.local.json"


class Host:
    """A host's home folder, managed settings and project, and the hook events it sends."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "demo"
        self.storage = tmp_path / "store"
        self.managed = tmp_path / "managed" / "managed-settings.json"
        for folder in (self.home / ".claude" / "agents", self.project, self.managed.parent):
            folder.mkdir(parents=True)
        self.write(".claude/settings.json", {"hooks": {"PreToolUse": []}, "model": "a"})
        self.write(".claude.json", {"numStartups": 1, "projects": {}})
        (self.home / ".claude" / "agents" / "reviewer.md").write_text("Review the code.\n")
        self.managed.write_text(json.dumps({"permissions": {"deny": ["WebFetch"]}}))
        self.env = host_env(HOME=str(self.home), HARNESS_AUDIT_MANAGED_SETTINGS=str(self.managed))
        self.calls = 0

    def write(self, name: str, data: Any) -> None:
        path = self.home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))

    def event(self, command: str, name: str, **fields: Any) -> None:
        payload = {"session_id": SESSION, "cwd": str(self.project), "hook_event_name": name}
        code, _out, err = hook(self.storage, command, {**payload, **fields}, env=self.env)
        assert code == 0, err

    def start(self) -> None:
        self.event("session-start", "SessionStart", source="startup")

    def end(self) -> None:
        self.event("session-end", "SessionEnd", reason="prompt_input_exit")

    def pre(self) -> dict[str, Any]:
        self.calls += 1
        call = recorded("bash-touch.json", self.project, session_id=SESSION)
        call["tool_use_id"] = f"toolu_{self.calls}"
        code, out, err = hook(self.storage, "pre", call, env=self.env)
        assert (code, answer_of(out)) == (0, {}), err
        return call

    def post(self, call: dict[str, Any]) -> None:
        post = as_post(call, {"stdout": "", "stderr": ""})
        code, _out, err = hook(self.storage, "post", post, env=self.env)
        assert code == 0, err

    def call(self, during: Callable[[], None] | None = None) -> None:
        call = self.pre()
        if during is not None:
            during()
        self.post(call)

    def records(self) -> list[dict[str, Any]]:
        return list(iter_records(self.storage, SESSION))

    def notes(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r.get("tool") == NOTE]

    def judged(self) -> tuple[Verdict, list[str]]:
        records = [CallRecord(raw) for raw in self.records()]
        found, reasons = judge(records, chain_valid=True)
        return found, [reason.code for reason in reasons]

    def report(self, *options: str) -> str:
        argv = ["--storage", str(self.storage), "audit", "report", SESSION, *options]
        code, out, err = harness_audit(argv, env=self.env)
        assert code == 0, err
        return out if "--json" in options else out.partition("\n=== Audit Report")[0]


def prompt(host: Host, call: dict[str, Any]) -> None:
    """The host is about to show its permission dialog for ``call``."""
    payload = {**call, "hook_event_name": "PermissionRequest", "permission_suggestions": []}
    payload.pop("tool_use_id")
    code, _out, err = hook(host.storage, "permission-request", payload, env=host.env)
    assert code == 0, err


def config_change(
    host: Host, source: str, file_path: Path | None, **more: Any
) -> tuple[int, dict[str, Any] | str, str]:
    """``(exit code, answer, stderr)`` of one ``hook config-change`` process."""
    payload: dict[str, Any] = {
        "session_id": SESSION,
        "cwd": str(host.project),
        "hook_event_name": "ConfigChange",
        "source": source,
        **more,
    }
    if file_path is not None:
        payload["file_path"] = str(file_path)
    code, out, err = hook(host.storage, "config-change", payload, env=host.env)
    return code, answer_of(out) if out.strip() else out, err


def write_project(host: Host, name: str, data: Any) -> Path:
    """Write ``data`` as the project's ``.claude/<name>`` (``LOCAL``: where the host writes the
    rules allowed for good at its prompt); return its path."""
    path = host.project / ".claude" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path
