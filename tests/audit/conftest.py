"""Fixtures for the audit chain tests: storage, drafts, chains and a writer subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit import AuditChain, RecordDraft

# A separate process appending to a chain: prints each recordId once ``append`` has returned.
WRITER = r"""
import sys
from pytest_harness_audit.audit import AuditChain, RecordDraft

storage, session, count, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
chain = AuditChain(storage, session)
sys.stdout.write("ready\n")
sys.stdout.flush()
i = 0
while count < 0 or i < count:
    command = f"echo {tag} {i}"
    record = chain.append(
        RecordDraft(
            tool="Bash",
            category="command",
            target=command,
            params={"command": command},
            constraints=("policy:allow", "rule:default"),
            output=str(i),
        )
    )
    sys.stdout.write(record["recordId"] + "\n")
    sys.stdout.flush()
    i += 1
chain.close()
"""


def draft_for(index: int = 0, **overrides: Any) -> RecordDraft:
    """A typical Bash call draft; ``overrides`` replace fields."""
    command = f"echo step {index}"
    fields: dict[str, Any] = {
        "tool": "Bash",
        "category": "command",
        "target": command,
        "targets": (command,),
        "params": {"command": command},
        "constraints": ("policy:allow", "rule:default"),
        "status": "success",
        "output": f"step {index}\n",
        "duration_ms": 1.5,
    }
    fields.update(overrides)
    return RecordDraft(**fields)


@pytest.fixture
def storage(tmp_path: Path) -> Path:
    """An empty storage directory."""
    return tmp_path / "store"


@pytest.fixture
def make_draft() -> Callable[..., RecordDraft]:
    """Build a draft: ``make_draft(index, **overrides)``."""
    return draft_for


@pytest.fixture
def make_chain(storage: Path) -> Callable[..., AuditChain]:
    """Append ``count`` records to session ``session`` and return the (open) chain."""
    opened: list[AuditChain] = []

    def build(session: str = "s1", count: int = 5, **options: Any) -> AuditChain:
        chain = AuditChain(storage, session, **options)
        opened.append(chain)
        for index in range(count):
            chain.append(draft_for(index))
        return chain

    yield build  # type: ignore[misc]
    for chain in opened:
        chain.close()


@pytest.fixture
def start_writer(tmp_path: Path) -> Callable[..., subprocess.Popen[str]]:
    """Start the writer subprocess: ``start_writer(storage, session, count, tag)``."""
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    processes: list[subprocess.Popen[str]] = []

    def start(storage: Path, session: str, count: int, tag: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, str(script), str(storage), session, str(count), tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        processes.append(process)
        return process

    yield start  # type: ignore[misc]
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def chain_lines(path: Path) -> list[bytes]:
    """The complete lines of a chain file (without newlines)."""
    data = path.read_bytes()
    return data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")


@pytest.fixture
def read_lines() -> Callable[[Path], list[bytes]]:
    """``read_lines(path)``: the lines of a chain file."""
    return chain_lines


def _list_dead_writer(session_file: Path) -> int:
    """List, in ``session_file``, a writer whose process died without closing: its pid."""
    data = json.loads(session_file.read_text())
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    entry = {"pid": dead, "host": os.uname().nodename, "token": "killed"}
    data["writers"] = [*data.get("writers", []), entry]
    session_file.write_text(json.dumps(data))
    return dead


@pytest.fixture
def list_dead_writer() -> Callable[[Path], int]:
    """``list_dead_writer(session_file)``: list a writer killed mid-write; returns its pid."""
    return _list_dead_writer
