"""A workspace key sent as its every-n-th characters, all in one text, or every fourth apart.

``body[0::3]``, ``body[1::3]`` and ``body[2::3]`` sent apart were refused (the places they
hold in the key were marked and made a run), but the same three columns in *one* message went
out with the session PASS: pieces that alone made a run were taken for a run the plain
matcher had found, and skipped. A text whose pieces make a run is now a finding itself; and
pieces are also read at every fourth character, so ``body[k::4]`` sent apart is refused
too (a fifth of a 32-character key is shorter than a piece). The benign twins: a commit id
sent the same ways passes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from secret_support import api_key, sent, service_harness

from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path, agents=("alice", "bob", "carol"))


def _columns(text: str, step: int) -> list[str]:
    return [text[phase::step] for phase in range(step)]


def _body(harness: Harness) -> str:
    return api_key(harness)[len("sk-test-") :]


@pytest.mark.parametrize("step", [2, 3, 4])
def test_the_columns_of_the_key_in_one_message_are_refused(harness: Harness, step: int) -> None:
    assert not sent(harness, " / ".join(_columns(_body(harness), step)))
    assert harness.posts() == []
    assert harness.verdict == "FAIL"


def test_every_fourth_character_sent_apart_is_refused(harness: Harness) -> None:
    columns = _columns(_body(harness), 4)
    outcomes = [sent(harness, f"column {n}: {part}") for n, part in enumerate(columns)]
    assert outcomes == [True, True, True, False]
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("step", [2, 3, 4])
def test_benign_twin_a_commit_ids_columns_are_sent(harness: Harness, step: int) -> None:
    commit = hashlib.sha1(b"release 1.4").hexdigest()
    assert sent(harness, " / ".join(_columns(commit, step)))
    for n, part in enumerate(_columns(commit, step)):
        assert sent(harness, f"column {n}: {part}")
    assert harness.verdict == "PASS"
