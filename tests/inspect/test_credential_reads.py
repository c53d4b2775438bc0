"""Credential files read while a call ran, as the kernel saw it (``effects.credentialRead``)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.inspect import CREDENTIAL_READ, Findings, Inspector
from pytest_harness_audit.inspect.credential_reads import (
    CredentialReadWatch,
    open_credential_reads,
)
from pytest_harness_audit.inspect.learn import secret_files
from pytest_harness_audit.policy.shell.search_only import only_searches
from pytest_harness_audit.session.workspace import create_workspace

KEY = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"


@pytest.fixture
def watch(tmp_path: Path) -> Iterator[CredentialReadWatch]:
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n")
    (tmp_path / "notes.txt").write_text("nothing\n")
    found = open_credential_reads(str(tmp_path), [".env"])
    if found is None:
        pytest.skip("inotify is not available here")
    found.reset()
    yield found
    found.close()


def test_reading_the_file_counts(watch: CredentialReadWatch, tmp_path: Path) -> None:
    (tmp_path / ".env").read_text()
    assert watch.take() == (".env",)
    assert watch.take() == ()  # taken once


def test_stat_chmod_and_other_files_do_not(watch: CredentialReadWatch, tmp_path: Path) -> None:
    os.stat(tmp_path / ".env")
    os.chmod(tmp_path / ".env", 0o600)
    (tmp_path / "notes.txt").read_text()
    os.listdir(tmp_path)
    assert watch.take() == ()


def test_a_write_open_counts(watch: CredentialReadWatch, tmp_path: Path) -> None:
    # the close of a descriptor opened for writing cannot tell whether it could read (``O_RDWR``
    # maps the file and reads it with no ``IN_ACCESS``): a credential file written counts as read
    with (tmp_path / ".env").open("a") as handle:
        handle.write("MORE=1\n")
    assert watch.take() == (".env",)


def test_through_a_hard_link_or_after_a_rename(watch: CredentialReadWatch, tmp_path: Path) -> None:
    os.link(tmp_path / ".env", tmp_path / "alias.txt")
    (tmp_path / "alias.txt").read_bytes()
    assert watch.take() == (".env",)
    os.rename(tmp_path / ".env", tmp_path / "moved")
    (tmp_path / "moved").read_bytes()
    assert watch.take() == (".env",)


def test_still_open_when_the_call_ends_counts(watch: CredentialReadWatch, tmp_path: Path) -> None:
    handle = (tmp_path / ".env").open("rb")
    try:
        assert watch.take() == (".env",)
    finally:
        handle.close()


def test_reset_forgets_what_came_before(watch: CredentialReadWatch, tmp_path: Path) -> None:
    (tmp_path / ".env").read_text()
    watch.reset()
    assert watch.take() == ()


def test_only_files_holding_a_secret_are_watched(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n")
    (tmp_path / ".env.example").write_text("API_KEY=\n")
    assert secret_files(tmp_path) == [".env"]


# -- the Inspector, with a real shell -------------------------------------------------------


@pytest.fixture
def inspector(tmp_path: Path) -> Iterator[Inspector]:
    create_workspace(tmp_path / "ws", "python-service")
    with Inspector(tmp_path / "ws") as found:
        if not found.live:
            pytest.skip("inotify is not available here")
        yield found


def _bash(inspector: Inspector, command: str) -> Findings:
    params = {"command": command}
    token = inspector.before("Bash", "command", params)
    subprocess.run(["bash", "-c", command], cwd=inspector.root, capture_output=True, check=False)
    return inspector.after(token, "Bash", "command", params, "")


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"import glob; [open(f).read() for f in glob.glob('.*') if f[:2] == '.e']\"",
        "for f in .[e]*; do wc -c < $f; done",
        "sha256sum $(git ls-files)",
        "cp .env /dev/null",
    ],
)
def test_a_read_no_text_shows_is_seen(inspector: Inspector, command: str) -> None:
    found = _bash(inspector, command)
    assert CREDENTIAL_READ in found.alerts
    assert ".env" in found.effects["credentialRead"]


@pytest.mark.parametrize(
    "command",
    ["git status --short", "git diff", "git log --oneline", "ls -la", "stat .env", "rg TODO"],
)
def test_commands_that_open_no_secret_are_not(inspector: Inspector, command: str) -> None:
    found = _bash(inspector, command)
    assert CREDENTIAL_READ not in found.alerts
    assert "credentialRead" not in found.effects


def test_a_read_before_the_call_is_not_the_calls(inspector: Inspector) -> None:
    params = {"command": "true"}
    Path(inspector.root, ".env").read_text()
    token = inspector.before("Bash", "command", params)
    assert CREDENTIAL_READ not in inspector.after(token, "Bash", "command", params, "").alerts


def test_a_fresh_copy_is_not_read_by_git_status(tmp_path: Path) -> None:
    """A workspace written this very second: git would re-read its racy ``.env``."""
    root = tmp_path / "fresh"
    root.mkdir()
    (root / ".env").write_text(f"API_KEY={KEY}\n")
    (root / "app.py").write_text("print(1)\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for step in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x"],
    ):
        subprocess.run(step, cwd=root, env=env, check=True)
    assert time.time() - (root / ".env").stat().st_mtime < 2
    with Inspector(root) as inspector:
        if not inspector.live:
            pytest.skip("inotify is not available here")
        assert CREDENTIAL_READ not in _bash(inspector, "git status --short").alerts


# -- a command of searches only ---------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn TODO .",
        "grep -rn TODO . | head -3",
        "grep -rn TODO . | head -n 3",
        "rg -n TODO --hidden | sort | uniq -c",
        "cd app && grep -r TODO .",
        "grep -r TODO . < /dev/null",
        "sleep 0.5; grep -rn TODO . || true",  # a pause opens nothing
    ],
)
def test_searches_shown_to_the_agent(command: str, tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n")
    assert only_searches(command, str(tmp_path))


@pytest.mark.parametrize(
    "command",
    [
        "grep -r x . ; python3 leak.py",
        "grep -r x . | xargs cat",
        "grep -r x . | cat - .env",
        "echo $(cat .env)",
        "for f in .[e]*; do wc -c < $f; done",
        "cd app && wc -c < ../.env",
        "grep -r x $(cat list)",
        "find . -exec grep -H x {} +",
        "git grep --untracked x",
        "sleep 1 < .env; grep -r x .",
        "",
    ],
)
def test_anything_beside_the_searches_counts(command: str, tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n")
    assert not only_searches(command, str(tmp_path))


def _fresh_spans(watch: CredentialReadWatch) -> None:
    watch.take()  # the fixture's span


def test_an_outer_span_keeps_what_was_read_outside_the_inner_one(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    _fresh_spans(watch)
    outer = watch.reset()  # an agent's run
    (tmp_path / ".env").read_text()  # the agent process reads the file itself
    watch.hold()
    _auditor_reads(tmp_path / ".env")  # the auditor's own reading before the inner call
    inner = watch.reset()  # a call the agent made through the proxy
    assert watch.take(inner) == ()
    _auditor_reads(tmp_path / ".env")  # the auditor's own reading after it
    watch.release()
    assert watch.take(outer) == (".env",)


def test_a_read_in_the_inner_span_is_the_inner_ones_only(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    _fresh_spans(watch)
    outer = watch.reset()
    watch.hold()
    inner = watch.reset()
    (tmp_path / ".env").read_text()
    assert watch.take(inner) == (".env",)
    watch.release()
    assert watch.take(outer) == ()


def test_a_read_after_the_inner_span_is_the_outer_ones(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    _fresh_spans(watch)
    outer = watch.reset()
    watch.hold()
    inner = watch.reset()
    assert watch.take(inner) == ()
    watch.release()
    (tmp_path / ".env").read_text()
    assert watch.take(outer) == (".env",)


def test_overlapping_spans_give_a_read_to_the_one_opened_last(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    _fresh_spans(watch)
    first = watch.reset()
    watch.hold()
    second = watch.reset()
    (tmp_path / ".env").read_text()
    assert watch.take(first) == ()
    assert watch.take(second) == (".env",)


def test_a_span_of_too_many_events_counts_every_file_read(
    watch: CredentialReadWatch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Events that read nothing (files made beside the credential file) are kept while the span
    # is open; past the bound, what happened can no longer be told, as after an overflow.
    monkeypatch.setattr("pytest_harness_audit.inspect.read_spans.MAX_SPAN_EVENTS", 8)
    _fresh_spans(watch)
    for count, expected in ((4, ()), (12, (".env",))):
        span = watch.reset()
        for index in range(count):
            (tmp_path / f"made-{count}-{index}.txt").write_text("x")
            watch.hold()  # each drain adds to the span
        assert watch.take(span) == expected


def test_taking_a_span_already_taken_is_no_error(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    _fresh_spans(watch)
    span = watch.reset()
    (tmp_path / ".env").read_text()
    assert watch.take(span) == (".env",)
    assert watch.take(span) == ()


def _auditor_reads(path: Path) -> None:
    """Read ``path`` as the auditor does while it judges a search: an open it counts."""
    from pytest_harness_audit.own_opens import note_own_open

    fd = os.open(path, os.O_RDONLY)
    try:
        note_own_open(os.fstat(fd))
        os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def test_the_auditors_counted_opens_are_its_own(watch: CredentialReadWatch, tmp_path: Path) -> None:
    _fresh_spans(watch)
    outer = watch.reset()
    watch.hold()
    _auditor_reads(tmp_path / ".env")
    watch.release()
    assert watch.take(outer) == ()


def test_an_open_beyond_the_auditors_count_is_someone_elses(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    _fresh_spans(watch)
    outer = watch.reset()
    watch.hold()
    _auditor_reads(tmp_path / ".env")
    (tmp_path / ".env").read_text()  # the agent, timed on the auditor's own reading
    watch.release()
    assert watch.take(outer) == (".env",)
