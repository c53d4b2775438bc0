"""Spans open at once (calls made in parallel through the proxy): an open of a watched file goes
to a span whose call may open it (a search's budget), what is read through it follows it, and
every other open to the span opened last (:meth:`CredentialReadWatch.reset`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.inspect.credential_reads import (
    CredentialReadWatch,
    open_credential_reads,
)
from pytest_harness_audit.policy.shell.search_only import exhaustive_searches, search_opens

SEARCH = {".env": 1}


def _opens(allowed: dict[str, int]) -> Callable[[tuple[str, ...]], dict[str, int]]:
    return lambda files: {path: allowed.get(path, 0) for path in files}


@pytest.fixture
def watch(tmp_path: Path) -> Iterator[CredentialReadWatch]:
    (tmp_path / ".env").write_text("API_KEY=sk-live-0123456789abcdef0123456789\n")
    found = open_credential_reads(str(tmp_path), [".env"])
    if found is None:
        pytest.skip("inotify is not available here")
    yield found
    found.close()


def _read(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.read(fd, 64)
    finally:
        os.close(fd)


def test_a_searchs_open_while_a_later_call_runs_is_the_searchs(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    search = watch.reset(budget=_opens(SEARCH))
    later = watch.reset()
    _read(tmp_path / ".env")  # the search opens it, the later call is in flight
    assert watch.take(later) == ()
    assert watch.take(search) == (".env",)
    assert watch.opens() == {".env": 1}
    assert watch.unopened() == frozenset()


def test_an_open_beyond_the_budget_is_the_span_opened_last(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    search = watch.reset(budget=_opens(SEARCH))
    later = watch.reset()
    _read(tmp_path / ".env")  # the search's one open
    _read(tmp_path / ".env")  # and another process's
    assert watch.take(later) == (".env",)
    assert watch.opens() == {".env": 1}
    assert watch.take(search) == (".env",)


def test_the_budget_is_spent_by_the_searchs_span_alone_too(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    search = watch.reset(budget=_opens(SEARCH))
    _read(tmp_path / ".env")  # before the later call: still spends the search's budget
    watch.hold()
    later = watch.reset()
    _read(tmp_path / ".env")  # the later call's own
    assert watch.take(later) == (".env",)
    assert watch.take(search) == (".env",)
    assert watch.opens() == {".env": 1}


def test_a_read_through_a_budgeted_open_follows_it(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    search = watch.reset(budget=_opens(SEARCH))
    fd = os.open(tmp_path / ".env", os.O_RDONLY)  # the search opens it
    try:
        watch.hold()
        later = watch.reset()  # a call starts while the search holds it open
        os.read(fd, 64)
    finally:
        os.close(fd)
    assert watch.take(later) == ()
    assert watch.take(search) == (".env",)
    assert watch.unopened() == frozenset()


def test_a_file_the_search_may_not_open_is_the_span_opened_last(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    search = watch.reset(budget=_opens({}))  # `grep -rn --exclude=.env x .`
    later = watch.reset()
    _read(tmp_path / ".env")
    assert watch.take(search) == ()
    assert watch.take(later) == (".env",)


def test_without_budgets_the_span_opened_last_takes_all(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    first = watch.reset()
    second = watch.reset()
    _read(tmp_path / ".env")
    assert watch.take(first) == ()
    assert watch.take(second) == (".env",)


def test_each_thread_is_told_what_its_own_take_saw(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    search = watch.reset(budget=_opens(SEARCH))
    later = watch.reset()
    for _ in range(3):  # one open the search's, two the later call's
        _read(tmp_path / ".env")
    seen: dict[str, dict[str, int]] = {}

    def take_later() -> None:
        watch.take(later)
        seen["later"] = watch.opens()

    watch.take(search)
    thread = threading.Thread(target=take_later)
    thread.start()
    thread.join()
    assert watch.opens() == {".env": 1}  # this thread's take, not the other's
    assert seen["later"] == {".env": 2}


def test_two_searches_at_once_each_keep_their_own_open(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    earlier = watch.reset(budget=_opens(SEARCH))
    later = watch.reset(budget=_opens(SEARCH))
    _read(tmp_path / ".env")  # the later search's open: its budget is spent first
    assert watch.take(later) == (".env",)
    _read(tmp_path / ".env")  # the earlier search's, after the later one ended
    assert watch.take(earlier) == (".env",)
    assert watch.opens() == {".env": 1}


def test_spans_open_at_once_are_concurrent_an_agent_run_is_not(
    watch: CredentialReadWatch, tmp_path: Path
) -> None:
    run = watch.reset(container=True)  # an agent's run holds the calls it makes
    alone = watch.reset()
    watch.take(alone)
    assert not watch.concurrent()
    first = watch.reset()
    second = watch.reset()
    watch.take(first)
    assert watch.concurrent()
    watch.take(second)
    assert watch.concurrent()
    watch.take(run)
    assert not watch.concurrent()


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn TODO .",
        "sleep 0.5; grep -rn TODO .",
        "egrep -rn 'TODO +' src",
        "grep -rn --exclude=.env -m 3 TODO .",
    ],
)
def test_searches_that_run_to_their_end(command: str, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert exhaustive_searches(command, str(tmp_path))


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn TODO . | head -3",  # head may stop it before it opens every file
        "grep -rn TODO . || true",  # a kill of the search would not show
        "grep -rqn TODO .",  # stops at the first match anywhere
        "grep --quiet -r TODO .",
        "grep --help -r TODO .",
        "grep -rnV TODO .",
        "cd src; grep -rn TODO .",  # where it searches depends on the cd
        "grep -rn TODO . &",
        "grep -rn TODO $HOME",
        "grep -rn TODO .; python3 x.py",
        "rg -n TODO",  # only grep's opens are known exactly
        "if true; then grep -rn TODO .; fi",
    ],
)
def test_searches_that_may_stop_early(command: str, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert not exhaustive_searches(command, str(tmp_path))


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn -f /dev/null .",  # no pattern: nothing is searched
        "grep -rnm0 TODO .",
        "grep -rn -m 00 TODO .",
        "grep -rn --max=0 TODO .",  # an unambiguous prefix of --max-count
        "grep -rn --max-count=+0 TODO .",
        "grep -r -d skip TODO .",
        "grep -r --dir=skip TODO .",
        "grep -r --exclude-dir='.*' TODO .",  # matches `.` itself
        "grep -r --include=.ENV TODO .",  # the include is case-sensitive
    ],
)
def test_a_grep_that_may_search_nothing_opens_nothing(command: str, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("API_KEY=x\n")
    assert search_opens(command, str(tmp_path), ".env") == 0
    assert search_opens("grep -rn TODO .", str(tmp_path), ".env") == 1


@pytest.mark.parametrize(
    ("command", "exhaustive"),
    [
        ("grep -rn -m 3 TODO .", True),
        ("grep -rn --exclude-dir=.git TODO .", True),
        ("grep -rn -f pats .", False),  # the other call may empty the pattern file
        ("grep -rn --exclude-from=skip TODO .", False),  # or rewrite the list
        ("grep -rnA 3 TODO .", False),  # options outside the known full spellings
    ],
)
def test_only_greps_with_options_spelled_in_full_run_to_their_end(
    command: str, exhaustive: bool, tmp_path: Path
) -> None:
    assert exhaustive_searches(command, str(tmp_path)) is exhaustive
