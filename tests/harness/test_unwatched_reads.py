"""A session whose credential files the kernel cannot watch starts with a note judged WARN.

The kernel's watch of credential-file reads cannot be set up when the user's inotify instances
are used up; reads no command text shows then go unseen, and the session said nothing: a
benign session stayed PASS over a missing check. The failure is made where it happens, in the
C library call that gives an inotify instance (``inotify_init1`` answering -1, as under
``EMFILE``), for the credential watch alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.inspect import credential_reads, watch
from pytest_harness_audit.inspect.inotify import inotify_libc
from pytest_harness_audit.session import kernel_watch
from pytest_harness_audit.session.harness import Harness

pytestmark = pytest.mark.skipif(inotify_libc() is None, reason="no inotify on this system")


class _UsedUp:
    """The C library, with every inotify instance taken."""

    def __init__(self, libc: Any) -> None:
        self._libc = libc

    def inotify_init1(self, flags: int) -> int:
        return -1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._libc, name)


def _used_up(monkeypatch: pytest.MonkeyPatch, module: object) -> None:
    """``module`` finds every inotify instance taken."""
    used_up = _UsedUp(inotify_libc())
    monkeypatch.setattr(module, "inotify_libc", lambda: used_up)


def _session(tmp_path: Path, template: str = "python-service") -> Iterator[Harness]:
    session = Harness.create(tmp_path, template=template, policy="safety")
    try:
        yield session
    finally:
        session.close()


def test_a_session_without_its_kernel_watch_says_so_and_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _used_up(monkeypatch, credential_reads)
    for session in _session(tmp_path):
        assert session.inspection.inspector.credential_reads is None
        session.call("Read", file_path="README.md")
        first = session.records[0]
        assert (first.kind, first.tool) == ("note", kernel_watch.READS_UNWATCHED)
        verdict, reasons = session.judge()
        assert verdict.name == "WARN"
        # the credential watch alone is refused here; were the live tree refused too (another
        # process holding every instance), the note would say so instead
        inspector = session.inspection.inspector
        expected = kernel_watch.unwatched_reason(inspector)
        assert expected == kernel_watch.UNWATCHED_REASON or not inspector.live
        assert any(reason.text.endswith(str(expected)) for reason in reasons), reasons


def test_a_workspace_the_kernel_cannot_watch_at_all_says_so_and_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the credential watch rides on the live tree: without it, no file is watched either
    _used_up(monkeypatch, watch)
    for session in _session(tmp_path):
        assert not session.inspection.inspector.live
        assert session.inspection.inspector.credential_reads is None
        verdict, reasons = session.judge()
        assert verdict.name == "WARN"
        assert any("more than 8192 folders" in reason.text for reason in reasons), reasons


def test_a_workspace_without_credential_files_records_no_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _used_up(monkeypatch, credential_reads)
    for session in _session(tmp_path, template="empty"):
        assert session.inspection.inspector.credential_files == ()
        session.call("Read", file_path="README.md")
        assert [r.tool for r in session.records] == ["Read"]
        assert session.verdict.name == "PASS"


def test_a_session_with_its_kernel_watch_records_no_note(tmp_path: Path) -> None:
    for session in _session(tmp_path):
        assert session.inspection.inspector.credential_reads is not None
        session.call("Read", file_path="README.md")
        assert [r.tool for r in session.records] == ["Read"]
        assert session.verdict.name == "PASS"


def test_a_system_without_inotify_records_no_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(credential_reads, "inotify_libc", lambda: None)
    monkeypatch.setattr(kernel_watch, "inotify_libc", lambda: None)
    for session in _session(tmp_path):
        session.call("Read", file_path="README.md")
        assert [r.tool for r in session.records] == ["Read"]
        assert session.verdict.name == "PASS"


def test_the_stdio_proxy_s_workspace_without_its_kernel_watch_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_harness_audit.cli import proxy_cmd
    from pytest_harness_audit.policy import Policy

    for session in _session(tmp_path / "made"):  # a workspace with credential files
        workspace = session.root
    _used_up(monkeypatch, credential_reads)
    gate = proxy_cmd._open_gate(tmp_path / "store", "s", Policy.preset("safety"), str(workspace))
    try:
        (note,) = [record for record in gate.chain.records() if record["kind"] == "note"]
        assert note["tool"] == kernel_watch.READS_UNWATCHED
    finally:
        gate.close()
