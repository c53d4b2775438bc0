"""Reads a search's exemption must not cover: a process running beside the search reads the
credential file too (the kernel names no reader, so the opens are counted)."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.inspect.credential_reads import (
    CredentialReadWatch,
    open_credential_reads,
)
from pytest_harness_audit.policy.shell.search_only import only_searches, search_opens
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.workspace import create_workspace

GLOB_READ = "python3 -c \"import glob; [open(f).read() for f in glob.glob('.*') if f[:2] == '.e']\""


@pytest.fixture
def watch(tmp_path: Path) -> Iterator[CredentialReadWatch]:
    (tmp_path / ".env").write_text("API_KEY=sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0\n")
    found = open_credential_reads(str(tmp_path), [".env"])
    if found is None:
        pytest.skip("inotify is not available here")
    found.reset()
    yield found
    found.close()


def test_each_open_is_counted(watch: CredentialReadWatch, tmp_path: Path) -> None:
    (tmp_path / ".env").read_text()
    (tmp_path / ".env").read_text()
    assert watch.take() == (".env",)
    assert watch.opens() == {".env": 2}
    assert watch.unopened() == frozenset()


def test_a_descriptor_opened_before_is_told(watch: CredentialReadWatch, tmp_path: Path) -> None:
    fd = os.open(tmp_path / ".env", os.O_RDONLY)
    try:
        watch.reset()
        os.pread(fd, 64, 0)
        assert watch.take() == (".env",)
        assert watch.opens() == {}
        assert watch.unopened() == frozenset({".env"})
    finally:
        os.close(fd)


@pytest.mark.parametrize(
    ("command", "opens"),
    [
        ("grep -rn x .", 1),
        ("grep -rn x . | head -3", 1),
        ("grep -Rn x .", 1),
        ("grep -rn x . .", 2),
        ("grep -rn x app", 0),
        ("grep -n x .", 0),  # no recursion: a folder operand opens nothing
        ("grep -rn x . --exclude=.env", 0),
        ("grep -rn x . --exclude-dir=node_modules", 1),
        ("grep -rn x . --include=*.py", 0),
        ("grep -rn x . --file=.env", 2),
        ("cd app && grep -rn x ..", 1),
        ("rg -n x", 0),  # hidden names are skipped
        ("rg -n --hidden x", 1),
        # what a search leaves out by a file of globs, or by reading no line, opens nothing
        ("grep -rn x . --exclude-from=skip.lst", 0),
        ("grep -rn x . --exclude-from=keep.lst", 1),
        ("grep -rn x . --exclude-from=missing.lst", 0),
        ("grep -rn x . --exclude-from=negated.lst", 0),
        ("grep -rn x . --exclude-dir=.", 0),
        ("grep -rn -m0 x .", 0),
        ("grep -rn --max-count=0 x .", 0),
        ("grep -rn -m 0 x .", 0),
        ("grep -rn -m 3 x .", 1),
    ],
)
def test_search_opens(tmp_path: Path, command: str, opens: int) -> None:
    (tmp_path / ".env").write_text("A=1\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "skip.lst").write_text("# secrets\n.env\n")
    (tmp_path / "keep.lst").write_text("*.log\nnode_modules\n")
    (tmp_path / "negated.lst").write_text("*\n!*.py\n")
    assert search_opens(command, str(tmp_path), ".env") == opens


def test_a_following_search_counts_the_links(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "credentials.json").write_text("{}")
    (tmp_path / "settings").symlink_to("config")
    assert search_opens("grep -rn x .", str(tmp_path), "config/credentials.json") == 1
    assert search_opens("grep -Rn x .", str(tmp_path), "config/credentials.json") == 2


def _session(tmp_path: Path) -> Harness:
    root = tmp_path / "workspace"
    create_workspace(root, "python-service")
    harness = Harness(root, storage_dir=tmp_path / "audit", policy="safety", session_id="s")
    if harness.inspection is None or not harness.inspection.inspector.live:
        harness.close()
        pytest.skip("inotify is not available here")
    return harness


def _beside_search(fifo: Path, read: object) -> threading.Thread:
    """A reader that runs while the search blocks on ``fifo`` (after it has searched the
    workspace), then lets it end: a process an earlier call left running, say."""

    def run() -> None:
        with open(fifo, "w"):  # returns once the search opened the pipe
            assert callable(read)
            read()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("held", [False, True], ids=["opened-meanwhile", "held-open"])
def test_a_read_beside_a_search_is_judged(tmp_path: Path, held: bool) -> None:
    harness = _session(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    env = tmp_path / "workspace" / ".env"
    fd = os.open(env, os.O_RDONLY) if held else -1
    try:
        reader = (lambda: os.pread(fd, 999, 0)) if held else env.read_bytes
        thread = _beside_search(fifo, reader)
        result = harness.call("Bash", command=f"grep -rn zq_none . {fifo}", timeout=20000)
        thread.join(5)
        assert result.record["effects"]["credentialRead"] == [".env", "config/credentials.json"]
        assert "credentialSearched" not in result.record["effects"]
        assert harness.verdict == "WARN"
    finally:
        if fd >= 0:
            os.close(fd)
        harness.close()


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn zq_none . {fifo}",
        "cd app && grep -rn zq_none .. {fifo}",
        "grep -Rn zq_none . --exclude-dir=node_modules {fifo} | head -3",
    ],
)
def test_a_search_alone_stays_exempt(tmp_path: Path, command: str) -> None:
    harness = _session(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    try:
        thread = _beside_search(fifo, lambda: None)
        result = harness.call("Bash", command=command.format(fifo=fifo), timeout=20000)
        thread.join(5)
        assert ".env" in result.record["effects"]["credentialSearched"]
        assert harness.verdict == "PASS"
    finally:
        harness.close()


def test_a_file_put_in_place_anew_is_watched_again(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    env = tmp_path / ".env"
    content = env.read_bytes()
    watch.reset()
    env.unlink()
    env.write_bytes(content)  # another inode, the same secret
    assert watch.take() == (".env",)  # what read it meanwhile cannot be told
    assert watch.unopened() == frozenset({".env"})
    watch.reset()
    env.read_bytes()
    assert watch.take() == (".env",)


def test_a_file_deleted_between_calls_is_watched_when_it_returns(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    env = tmp_path / ".env"
    content = env.read_bytes()
    env.unlink()
    watch.reset()
    env.write_bytes(content)
    watch.reset()
    env.read_bytes()
    assert watch.take() == (".env",)


def test_a_checkout_that_puts_env_back_does_not_hide_later_reads(tmp_path: Path) -> None:
    harness = _session(tmp_path)
    try:
        for command in (
            "git checkout -q -b other",
            "git rm -q --cached .env",
            "git commit -qm untrack",
            "echo .env >> .git/info/exclude",  # an ignored file: checkout overwrites it
            "git checkout -q -",  # .env deleted and written again from the commit
        ):
            harness.call("Bash", command=command)
        result = harness.call("Bash", command=GLOB_READ)
        assert result.record["effects"]["credentialRead"] == [".env"]
        assert harness.verdict == "WARN"
    finally:
        harness.close()


# finds `.env` by listing the folder: the reading cannot tell from its text (a glob could)
SCRIPT = (
    '#!/bin/sh\nexec python3 -c "import os; '
    "[open(f).read() for f in os.listdir('.') if f[:2] == '.e' and len(f) == 4]\"\n"
)


@pytest.mark.parametrize(
    "command",
    [
        "PATH={bin}:$PATH grep -rn zq_none .",  # another program, found first
        "if true; then PATH={bin}:$PATH grep -rn zq_none .; fi",
        "{bin}/grep -rn zq_none .",
        "./bin/grep -rn zq_none .",
    ],
)
def test_a_program_named_like_a_search_is_judged(tmp_path: Path, command: str) -> None:
    harness = _session(tmp_path)
    try:
        for folder in (tmp_path / "bin", tmp_path / "workspace" / "bin"):
            folder.mkdir()
            (folder / "grep").write_text(SCRIPT)
            (folder / "grep").chmod(0o755)
        result = harness.call("Bash", command=command.format(bin=tmp_path / "bin"))
        assert result.record["effects"]["credentialRead"] == [".env"]
        assert result.record["judged"]["verdict"] == "WARN"
    finally:
        harness.close()


def test_a_search_whose_lines_are_dropped_shows_no_exit_status(tmp_path: Path) -> None:
    """`head -n 0` passes no line on; the search's own status tells whether `.env` matched."""
    harness = _session(tmp_path)
    try:
        command = "grep -rn 'API_KEY=sk-test-4' . | head -n 0; echo ${PIPESTATUS[0]}"
        result = harness.call("Bash", command=command)
        assert ".env" in result.record["effects"]["credentialRead"]
        assert harness.verdict == "WARN"
    finally:
        harness.close()


@pytest.mark.parametrize(
    ("command", "exempt"),
    [
        ("grep -rn TODO . | head -3", True),
        ("/usr/bin/grep -rn TODO .", True),
        ("grep -rn 'API_KEY=' . || true", True),
        ("rg -n TODO", True),
        ("rg --pre ./bin/x TODO", False),
        ("rg -zn TODO", False),
        ("ack TODO", False),  # its options come from a .ackrc the workspace may hold
        ("LD_PRELOAD=./x.so grep -rn TODO .", False),
        ("x=1; grep -rn TODO .", False),
        ("grep -rn TODO . | tail -n 0; echo ${PIPESTATUS[*]}", False),
    ],
)
def test_what_passes_for_searches(tmp_path: Path, command: str, exempt: bool) -> None:
    assert only_searches(command, str(tmp_path)) is exempt


def test_git_status_in_a_linked_worktree_reads_no_secret(tmp_path: Path) -> None:
    """A linked worktree's ``.git`` is a file: its index is refreshed all the same."""
    create_workspace(tmp_path / "main", "python-service")
    subprocess.run(
        ["git", "-C", str(tmp_path / "main"), "worktree", "add", "-q", str(tmp_path / "wt")],
        check=True,
        capture_output=True,
    )
    harness = Harness(tmp_path / "wt", storage_dir=tmp_path / "audit", policy="safety")
    try:
        if harness.inspection is None or not harness.inspection.inspector.live:
            pytest.skip("inotify is not available here")
        result = harness.call("Bash", command="git status --short")
        assert "credentialRead" not in (result.record.get("effects") or {})
        assert harness.verdict == "PASS"
    finally:
        harness.close()
