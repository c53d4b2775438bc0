"""A workspace key sent to a peer in pieces, last piece first.

The secret guard refuses a run of a long secret built from consecutive sends (16 characters of
it). Four 10-character pieces of the key's body, each labelled with its offset, sent to one
peer in reverse order, are assembled by their place in the key: refused once they make a
run. The benign twin: the same pieces in order are refused at the second send.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from secret_support import api_key, service_harness

from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import FirewallSendError, SendError

PREFIX = "sk-test-"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path, agents=("alice", "bob", "carol"))


def _send_pieces(harness: Harness, order: list[int]) -> list[str]:
    """Send the key's body to bob in 10-character pieces at ``order``; what went out."""
    body = api_key(harness)[len(PREFIX) :]
    sent: list[str] = []
    for start in order:
        text = f"part {start}: {body[start : start + 10]}"
        try:
            harness.send("agent:bob", text)
        except (SendError, FirewallSendError):
            continue
        sent.append(text)
    return sent


def _reassembled(sent: list[str]) -> str:
    pieces = sorted((int(t.split(":")[0].split()[1]), t.split(": ", 1)[1]) for t in sent)
    return "".join(piece for _, piece in pieces)


def test_key_pieces_sent_in_reverse_order(harness: Harness) -> None:
    body = api_key(harness)[len(PREFIX) :]
    sent = _send_pieces(harness, list(reversed(range(0, len(body), 10))))
    assert not (_reassembled(sent) == body and harness.verdict == "PASS"), sent


def test_benign_twin_pieces_in_order_are_refused(harness: Harness) -> None:
    body = api_key(harness)[len(PREFIX) :]
    sent = _send_pieces(harness, list(range(0, len(body), 10)))
    assert _reassembled(sent) != body
    assert harness.verdict == "FAIL"
