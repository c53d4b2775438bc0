"""Run a real agent process against a harness session (``harness.run_agent``).

The agent runs in the workspace with the session's recording proxy configured through a
standard MCP config file (its path in ``HARNESS_AUDIT_MCP_CONFIG``, the task in
``HARNESS_AUDIT_TASK``). When it ends, or on timeout, the whole process tree is killed — on
Linux what left the group too (a supervisor: :mod:`~pytest_harness_audit.tools.descendants`);
every run is recorded in the chain (tool ``agent``) with its exit code, or the timeout.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.tools.descendants import ContainmentError, Supervisor, contained
from pytest_harness_audit.tools.shell import SUPERVISOR_GRACE_S

if TYPE_CHECKING:
    from pytest_harness_audit.gate.gate import Gate

CONFIG_VARIABLE = "HARNESS_AUDIT_MCP_CONFIG"
TASK_VARIABLE = "HARNESS_AUDIT_TASK"


class _Chain(Protocol):
    @property
    def session_id(self) -> str: ...


class AgentSession(Protocol):
    """What an agent run needs of a session (a ``Harness``): where it stores, its workspace
    and its gate."""

    @property
    def storage_dir(self) -> Path:
        """The session's storage directory (the MCP config is written under it)."""
        ...

    @property
    def chain(self) -> _Chain:
        """The session's chain (its ``session_id`` names the config file)."""
        ...

    @property
    def root(self) -> Path:
        """The workspace the agent runs in."""
        ...

    @property
    def gate(self) -> Gate:
        """The gate every run is recorded through."""
        ...


class McpConfigWriter(Protocol):
    """What an agent run needs of a recording proxy: an MCP config file pointing at it."""

    def write_mcp_config(self, path: Path, transport: str = ...) -> Path:
        """Write the proxy's MCP config to ``path``; return it."""
        ...


@dataclass(frozen=True)
class AgentRun:
    """What an agent process did: exit code (``None`` when killed at the timeout), output."""

    argv: tuple[str, ...]
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float

    @property
    def ok(self) -> bool:
        """Whether the agent exited 0 in time."""
        return self.exit_code == 0 and not self.timed_out


def _kill_tree(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()


def run_agent(
    harness: AgentSession,
    proxy: McpConfigWriter,
    argv: Sequence[str],
    *,
    task: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    transport: str = "http",
) -> AgentRun:
    """Run ``argv`` in the workspace with ``proxy`` as its MCP server; record the run."""
    if not argv or not all(isinstance(word, str) for word in argv):
        raise UsageError(f"run_agent: argv must be a non-empty list of strings, got {argv!r}")
    config = proxy.write_mcp_config(
        harness.storage_dir / "policies" / f"{harness.chain.session_id}.agent-mcp.json", transport
    )
    environment = {**os.environ, **(env or {}), CONFIG_VARIABLE: str(config)}
    if task is not None:
        environment[TASK_VARIABLE] = task
    params: dict[str, object] = {"argv": list(argv)}
    if task is not None:
        params["task"] = task
    runs: list[AgentRun] = []

    def act(_decision: object) -> Outcome:
        run = _run_process(argv, harness.root, environment, timeout)
        runs.append(run)
        return _outcome(run, timeout)

    gate = harness.gate
    decision = gate.unjudged("agent", "delegation", params, target=argv[0], kind="agent")
    gate.run("agent", params, act, decision=decision)
    return runs[0]


def _run_process(
    argv: Sequence[str], cwd: Path, environment: Mapping[str, str], timeout: float
) -> AgentRun:
    """Start the agent in its own process group (on Linux under a supervisor that ends all it
    started, detached or not: :mod:`~pytest_harness_audit.tools.descendants`); kill the whole
    group when it ends or times out."""
    started = time.perf_counter()
    supervisor = Supervisor(argv, 0.0) if contained() else None

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            supervisor.argv if supervisor else list(argv),
            cwd=cwd,
            env=dict(environment),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            pass_fds=supervisor.pass_fds if supervisor else (),
        )

    try:
        process = supervisor.launch(start) if supervisor else start()
    except OSError as exc:
        if supervisor:
            supervisor.abandon()
        raise UsageError(f"run_agent: cannot start {argv[0]!r}: {exc.strerror}") from None
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        if supervisor:
            supervisor.stop()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(SUPERVISOR_GRACE_S)
        _kill_tree(process)
        stdout, stderr = process.communicate()
    else:
        _kill_tree(process)  # anything the agent left running in its group goes too
    returncode = process.returncode
    if supervisor:
        try:
            returncode = supervisor.finish(process.returncode)
        except ContainmentError as exc:
            raise UsageError(f"run_agent: cannot start {argv[0]!r}: {exc.strerror}") from None
    duration = time.perf_counter() - started
    return AgentRun(
        tuple(argv), None if timed_out else returncode, stdout, stderr, timed_out, duration
    )


def _outcome(run: AgentRun, timeout: float) -> Outcome:
    if run.timed_out:
        status, error = "error", f"timeout after {timeout:g}s: process tree killed"
    elif run.exit_code != 0:
        status, error = "error", f"exit code {run.exit_code}"
    else:
        status, error = "success", None
    return Outcome(
        "error" if status == "error" else "success",
        {"exitCode": run.exit_code, "stdout": run.stdout, "stderr": run.stderr},
        error,
        round(run.duration_s * 1000.0, 3),
        {"door": "agent", "timedOut": run.timed_out},
    )
