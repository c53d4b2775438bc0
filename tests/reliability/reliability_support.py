"""Helpers shared by the reliability suites: time limits, the CLI in-process, record drafts."""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from unittest import mock

from hypothesis import strategies as st

from pytest_harness_audit import cli
from pytest_harness_audit.audit import RecordDraft

HERE = Path(__file__).resolve().parent
CHAIN_WRITER = HERE / "chain_writer.py"
_BUILD_PARSER = cli.build_parser


class Hang(Exception):
    """A call under test did not return within its time limit."""


@contextlib.contextmanager
def time_limit(seconds: float, what: str = "call") -> Iterator[None]:
    """Fail with :class:`Hang` when the body runs longer than ``seconds`` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"{what} did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True)
class CliOutcome:
    """Exit code and output of one in-process ``harness-audit`` run."""

    code: int
    stdout: str
    stderr: str


def run_cli(argv: Sequence[str], stdin: str = "") -> CliOutcome:
    """Run ``harness-audit ARGV`` in this process, ``stdin`` as its standard input.

    ``SystemExit`` from argument parsing is turned into its exit code, as the shell would see it.
    The argument parser is built once (building it costs more than most commands).
    """
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.object(cli, "build_parser", _parser),
        mock.patch.object(sys, "stdin", io.StringIO(stdin)),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return CliOutcome(code, out.getvalue(), err.getvalue())


def _parser(group: str | None = None) -> argparse.ArgumentParser:
    return _every_group()  # one parser with every group serves any command line


@functools.lru_cache(maxsize=1)
def _every_group() -> argparse.ArgumentParser:
    return _BUILD_PARSER()


def assert_clean_error(text: str) -> None:
    """A user-facing error: one non-empty line, no traceback."""
    assert "Traceback" not in text, text
    lines = text.strip().splitlines()
    assert len(lines) == 1, text


drafts = st.builds(
    RecordDraft,
    tool=st.sampled_from(["Bash", "Read", "Write", "mcp__git__git_status", "WebFetch", "Task"]),
    category=st.sampled_from(["command", "file_read", "file_write", "mcp", "network"]),
    target=st.none() | st.text(max_size=100),
    params=st.dictionaries(st.text(max_size=8), st.text(max_size=24), max_size=3),
    constraints=st.lists(
        st.sampled_from(["policy:allow", "policy:deny", "policy:warn", "rule:x"]), max_size=2
    ).map(tuple),
    status=st.sampled_from(["success", "error", "blocked"]),
    output=st.none() | st.text(max_size=40),
    error_message=st.none() | st.text(max_size=24),
    extra=st.none() | st.just({"alerts": ["credential_access"]}),
)
"""Record drafts of every shape the chain writes (unicode targets and outputs included)."""


def bash_draft(command: str, output: str = "") -> RecordDraft:
    """A plain allowed Bash call."""
    return RecordDraft(
        tool="Bash",
        category="command",
        target=command,
        targets=(command,),
        params={"command": command},
        constraints=("policy:allow", "rule:default"),
        output=output,
    )
