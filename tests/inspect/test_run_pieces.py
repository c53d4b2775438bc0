"""Pieces of a value sent in any order over a stream are assembled by their place in it
(:class:`~pytest_harness_audit.inspect._runs.PieceMemory`)."""

from __future__ import annotations

import threading

import pytest

from pytest_harness_audit.inspect._runs import PieceMemory
from pytest_harness_audit.inspect.secrets import SecretRegistry

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"
BODY = KEY[len("sk-test-") :]


@pytest.fixture
def registry() -> SecretRegistry:
    made = SecretRegistry()
    made.add(KEY, ".env:API_KEY")
    return made


def _found(registry: SecretRegistry, texts: list[str]) -> list[int]:
    """Which of ``texts``, sent in turn on one stream, were findings."""
    stream = registry.stream()
    return [i for i, text in enumerate(texts) if stream.scan(text, runs=True).findings]


def test_pieces_sent_last_first_are_found_when_they_make_a_run(registry: SecretRegistry) -> None:
    texts = [f"part {start}: {BODY[start : start + 10]}" for start in (20, 10, 0)]
    assert _found(registry, texts) == [1, 2]


def test_pieces_out_of_order_with_chatter_between(registry: SecretRegistry) -> None:
    texts = [
        f"see {BODY[16:25]} (second)",
        "the weather is fine, commit 0a1b2c3d4e5f6a7b8c9d",
        f"and first {BODY[7:16]}",
    ]
    assert _found(registry, texts) == [2]


def test_a_finding_spans_the_piece_in_its_text(registry: SecretRegistry) -> None:
    stream = registry.stream()
    stream.scan(f"b {BODY[20:30]}", runs=True)
    result = stream.scan(f"a {BODY[10:20]} z", runs=True)
    assert result.redacted() == f"a [secret:{result.findings[0].fingerprint}] z"


def test_pieces_that_do_not_meet_are_no_run(registry: SecretRegistry) -> None:
    texts = [
        f"key starts {KEY[:16]}",
        f"and ends {BODY[-8:]}",
        f"build {BODY[12:20]} ok",
        f"again {KEY[:16]} and {BODY[-8:]}",
    ]
    assert _found(registry, texts) == []


def test_a_reset_stream_forgets_the_pieces(registry: SecretRegistry) -> None:
    stream = registry.stream()
    stream.scan(f"x {BODY[20:30]}", runs=True)
    stream.reset()
    assert not stream.scan(f"y {BODY[10:20]}", runs=True).findings


def test_streams_sharing_places_update_them_under_its_lock(registry: SecretRegistry) -> None:
    # the inspector's streams (one a channel) share one memory and scan at once, each under
    # its own lock: the places are read and marked under the memory's (the inspector's) lock
    lock = threading.Lock()
    memory = PieceMemory(lock)
    first, second = registry.stream(memory), registry.stream(memory)
    results: list[bool] = []
    with lock:
        worker = threading.Thread(
            target=lambda: results.append(bool(first.scan(f"a {BODY[20:30]}", runs=True).findings))
        )
        worker.start()
        worker.join(timeout=0.3)
        assert worker.is_alive(), "the places were marked without the owner's lock"
    worker.join(timeout=10)
    assert results == [False]
    # a piece sent on another channel completes the run
    assert second.scan(f"b {BODY[10:20]}", runs=True).findings


def test_pieces_sent_at_once_on_many_channels_make_one_run(registry: SecretRegistry) -> None:
    memory = PieceMemory()
    streams = [registry.stream(memory) for _ in range(3)]
    barrier = threading.Barrier(3)
    found: list[bool] = []

    def send(index: int) -> None:
        barrier.wait()
        piece = BODY[index * 10 : index * 10 + 10]
        found.append(bool(streams[index].scan(f"part {piece}", runs=True).findings))

    workers = [threading.Thread(target=send, args=(index,)) for index in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=10)
    assert len(found) == 3 and any(found)  # whichever piece came last completed the run
    assert sorted(memory.runs()) == [(0, len(BODY), 0, 30)]
