"""Run `harness-audit hook …` as the host runs it: a fresh process per event, JSON on stdin."""

from __future__ import annotations

import atexit
import json
import os
import select
import shlex
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, NamedTuple

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.doors.hook_marks import DOOR_MARK
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


#: git with an author, for the tests' own commits.
GIT = ["git", "-c", "user.email=dev@example.com", "-c", "user.name=dev"]


def committed_project(root: Path, files: Mapping[str, str]) -> Path:
    """A git project at ``root`` holding ``files`` (path: text), all committed as ``start``."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "start"], cwd=root, check=True)
    return root


def hook(
    storage: Path,
    event: str,
    payload: str | dict[str, Any],
    *options: str,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of one ``harness-audit hook EVENT`` process.

    Each event is a process of its own, forked from a server that has only imported the
    package (see ``_ForkServer``): the same fresh state as ``python -m pytest_harness_audit``
    without paying the interpreter's start and imports per event. An environment that changes
    how Python starts (``PYTHON*``) gets a real process.
    """
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return harness_audit(["--storage", str(storage), "hook", event, *options], text, env=env)


def project_env(project: Path) -> dict[str, str]:
    """The hook process's environment for the project ``project`` (its home beside it)."""
    return host_env(CLAUDE_PROJECT_DIR=str(project), HOME=str(project.parent / "home"))


def pre_payload(
    project: Path,
    session: str,
    tool: str,
    tool_input: dict[str, Any],
    *,
    permission_mode: str = "acceptEdits",
) -> dict[str, Any]:
    """The host's ``PreToolUse`` payload for one call in ``project``."""
    return {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "transcript_path": str(project.parent / "transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": permission_mode,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }


def pre_answer(storage: Path, payload: dict[str, Any]) -> Any:
    """The ``pre`` hook's JSON answer to ``payload`` (the hook must exit 0), without the door's
    mark (:func:`answer_of`)."""
    code, out, err = hook(storage, "pre", payload, env=project_env(Path(payload["cwd"])))
    assert code == 0, err
    return answer_of(out)


def harness_audit(
    argv: list[str], text: str = "", *, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of one ``python -m pytest_harness_audit ARGV`` process
    with ``text`` on its standard input (forked, as ``hook`` says)."""
    environment = env if env is not None else host_env()
    if _SERVER.can_run(environment):
        return _SERVER.run(argv, text, environment)
    done = subprocess.run(
        [sys.executable, "-m", "pytest_harness_audit", *argv],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    return done.returncode, done.stdout, done.stderr


def _serve() -> None:
    """The fork server's loop (run by ``python -c``, see ``_ForkServer``).

    It imports the command line and the hook door's modules, and runs nothing else. For each
    request it forks a child that takes the request's environment, working directory and
    standard streams (files), runs ``harness-audit`` as ``python -m pytest_harness_audit``
    does (exit handlers included) and exits; the server answers the child's exit code.
    """
    import importlib
    import io
    import threading
    import traceback

    import pytest_harness_audit.cli as cli

    for name in _PRELOADED:
        importlib.import_module(name)
    main_path = str(Path(cli.__file__).parent.parent / "__main__.py")
    requests = os.fdopen(0, "r", encoding="utf-8", closefd=False)
    answers = os.fdopen(1, "w", encoding="utf-8", closefd=False)
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the child: one hook process
            code = 1
            try:
                os.chdir(request["cwd"])
                os.environ.clear()
                os.environ.update(request["env"])
                for fd, (path, flags) in enumerate(
                    [
                        (request["stdin"], os.O_RDONLY),
                        (request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                        (request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                    ]
                ):
                    opened = os.open(path, flags, 0o600)
                    os.dup2(opened, fd)
                    os.close(opened)
                sys.stdin = sys.__stdin__ = io.TextIOWrapper(
                    io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8"
                )
                sys.stdout = sys.__stdout__ = io.TextIOWrapper(
                    io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8"
                )
                sys.stderr = sys.__stderr__ = io.TextIOWrapper(
                    io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
                    encoding="utf-8",
                    errors="backslashreplace",
                    line_buffering=True,
                )
                sys.argv = [main_path, *request["argv"]]
                try:
                    code = cli.main(request["argv"])
                except SystemExit as exc:  # as the interpreter reads it
                    if exc.code is None:
                        code = 0
                    elif isinstance(exc.code, int):
                        code = exc.code
                    else:
                        print(exc.code, file=sys.stderr)
                        code = 1
                except BaseException:
                    traceback.print_exc()
                    code = 1
                for thread in threading.enumerate():
                    if thread is not threading.main_thread() and not thread.daemon:
                        thread.join()
                atexit._run_exitfuncs()
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code & 0xFF)
        _, status = os.waitpid(pid, 0)
        answers.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}) + "\n")
        answers.flush()


#: Modules the hook events load: imported once by the server (importing runs no command).
_PRELOADED = (
    "pytest_harness_audit.cli.hook_cmd",
    "pytest_harness_audit.doors.hook",
    "pytest_harness_audit.gate.gate",
    "pytest_harness_audit.policy.policy",
    "pytest_harness_audit.inspect",
    "pytest_harness_audit.readers.report",
    "yaml",
    "subprocess",
)


class _ForkServer:
    """One fork server per test process, started at its first request."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._env: dict[str, str] = {}

    def can_run(self, env: dict[str, str]) -> bool:
        """Whether a process forked from the server starts as one with ``env`` would."""
        if not hasattr(os, "fork") or os.environ.get("HARNESS_AUDIT_TEST_REAL_HOOKS"):
            return False
        if threading.current_thread() is not threading.main_thread():
            # one request pipe serves one caller at a time: events a test runs concurrently
            # (threads) are real processes, so they really run at once
            return False
        server_env = host_env()
        return all(
            env.get(key) == server_env.get(key)
            for key in {*env, *server_env}
            if key.startswith("PYTHON")
        )

    def _started(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            code += "import hook_processes; hook_processes._serve()"
            self._process = subprocess.Popen(
                [sys.executable, "-c", code],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=host_env(),
            )
            atexit.register(self.stop)
        return self._process

    def run(self, argv: list[str], text: str, env: dict[str, str]) -> tuple[int, str, str]:
        """Run one ``harness-audit`` process with ``text`` on its standard input."""
        process = self._started()
        with tempfile.TemporaryDirectory(prefix="hook-io-") as io_dir:
            paths = {name: os.path.join(io_dir, name) for name in ("stdin", "stdout", "stderr")}
            Path(paths["stdin"]).write_text(text, encoding="utf-8")
            request = {"argv": argv, "env": env, "cwd": os.getcwd(), **paths}
            stdin, stdout = process.stdin, process.stdout
            assert stdin is not None and stdout is not None
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
            answer = _read_line(stdout, 120)
            out = Path(paths["stdout"]).read_text(encoding="utf-8")
            err = Path(paths["stderr"]).read_text(encoding="utf-8")
        return int(json.loads(answer)["code"]), out, err

    def stop(self) -> None:
        """End the server (its standard input closed, it leaves its loop)."""
        if self._process is not None and self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait(timeout=30)


def _read_line(stream: IO[str], timeout: float) -> str:
    ready, _, _ = select.select([stream], [], [], timeout)
    line = stream.readline() if ready else ""
    if not line:
        raise RuntimeError(f"the hook fork server gave no answer within {timeout} s")
    return line


_SERVER = _ForkServer()


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


def run_as_host(
    pre: dict[str, Any], cwd: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Do what the host does for an allowed call (Bash runs, Write writes in place) and return
    the tool response it reports. A command runs in the host's environment ``env`` (by default
    :func:`project_env` of ``cwd``: a home beside it), never in the test's own: a command
    naming ``~`` must not reach the home of the user running the tests."""
    tool, params = pre["tool_name"], pre["tool_input"]
    if tool == "Bash":
        command = params["command"].replace("python3 ", shlex.quote(sys.executable) + " ")
        environment = env if env is not None else project_env(cwd)
        done = subprocess.run(
            command,
            shell=True,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=60,
            env=environment,
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


class DoorAnswer(NamedTuple):
    """What the door made of one Bash call at its ``pre`` step: its decision (``None``: it left
    the call to the host), whether a record of it is tamper evidence, and the session's verdict."""

    decision: str | None
    tamper: bool
    verdict: str


def door_answer(tmp_path: Path, command: str) -> DoorAnswer:
    """Run ``hook pre`` for a Bash call of ``command`` (the recorded ``bash-benign.json``
    payload, moved to ``tmp_path``, its store ``tmp_path / "store"``); the step must exit 0 and
    write nothing on stderr. A denied call leaves exactly one record: its refusal."""
    storage = tmp_path / "store"
    pre = recorded("bash-benign.json", tmp_path)
    pre["tool_input"] = {"command": command}
    code, out, err = hook(storage, "pre", pre)
    assert (code, err) == (0, "")
    decision = json.loads(out).get("hookSpecificOutput", {}).get("permissionDecision")
    records = call_records(storage, pre["session_id"])
    if decision == "deny":
        assert len(records) == 1, records
    tamper = any("tamper_attempt" in record.get("alerts", ()) for record in records)
    return DoorAnswer(decision, tamper, str(verdict(storage, pre["session_id"])))


def answer_of(out: str) -> dict[str, Any]:
    """A hook's stdout answer, without the mark every ``pre`` answer leaves in the host's
    transcript (:data:`~pytest_harness_audit.doors.hook_marks.DOOR_MARK`, the last line of its
    ``additionalContext``): what the answer says about the call itself. An answer without the
    mark is returned as it is (``test_hook_marks`` checks every ``pre`` answer carries it)."""
    answer: dict[str, Any] = json.loads(out)
    specific = answer.get("hookSpecificOutput")
    context = specific.get("additionalContext") if isinstance(specific, dict) else None
    if not isinstance(specific, dict) or not isinstance(context, str):
        return answer
    if not context.endswith(DOOR_MARK):
        return answer
    fields = dict(specific)
    rest = context[: -len(DOOR_MARK)].removesuffix("\n")
    if rest:
        fields["additionalContext"] = rest
    else:
        del fields["additionalContext"]
    if set(fields) == {"hookEventName"}:
        return {key: value for key, value in answer.items() if key != "hookSpecificOutput"}
    return {**answer, "hookSpecificOutput": fields}
