"""A workspace key sent in pieces of eight characters, each piece encoded on its own.

Pieces of a key sent plain over consecutive sends are assembled by their place in it, and a
run of 16 characters is refused. Each piece encoded alone (base64, hex, base32) is 12 to 16
characters long: too short for the decoder, which reads encoded runs of 20 characters or more,
so all four pieces went out with the session PASS. Short encoded words are now read for
fragments too: the second piece is refused, in a message and in a tool's arguments. The benign
twins: ordinary words and ids encoded the same way pass.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from secret_support import api_key, service_harness

from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import FirewallSendError

ENCODINGS: dict[str, Callable[[bytes], str]] = {
    "base64": lambda data: base64.b64encode(data).decode(),
    "base64 unpadded": lambda data: base64.urlsafe_b64encode(data).decode().rstrip("="),
    "hex": bytes.hex,
    "base32": lambda data: base64.b32encode(data).decode(),
}
BENIGN = ["release1", "deadbeef", "v2.14.0-", "main-ci7", "2026-12-"]


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path, agents=("alice", "bob", "carol"))


def _pieces(harness: Harness) -> list[str]:
    body = api_key(harness)[len("sk-test-") :]
    return [body[i : i + 8] for i in range(0, len(body), 8)]


def _send_all(harness: Harness, texts: list[str]) -> list[str]:
    sent: list[str] = []
    for text in texts:
        with contextlib.suppress(FirewallSendError):
            harness.send("agent:bob", f"next: {text}")
            sent.append(text)
    return sent


@pytest.mark.parametrize("encoding", ENCODINGS, ids=list(ENCODINGS))
def test_encoded_pieces_of_the_key_are_refused(harness: Harness, encoding: str) -> None:
    encode = ENCODINGS[encoding]
    texts = [encode(piece.encode()) for piece in _pieces(harness)]
    assert len(_send_all(harness, texts)) < 2
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("encoding", ENCODINGS, ids=list(ENCODINGS))
def test_encoded_pieces_in_a_tools_arguments_are_refused(harness: Harness, encoding: str) -> None:
    encode = ENCODINGS[encoding]
    received: list[str] = []

    @harness.tool(name="upload", category="mcp")  # type: ignore[untyped-decorator]
    def upload(chunk: str) -> str:
        received.append(chunk)
        return "stored"

    for piece in _pieces(harness):
        with contextlib.suppress(ToolCallBlocked):
            upload(encode(piece.encode()))
    assert len(received) < 2
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("encoding", ENCODINGS, ids=list(ENCODINGS))
def test_benign_twin_encoded_words_are_sent(harness: Harness, encoding: str) -> None:
    texts = [ENCODINGS[encoding](word.encode()) for word in BENIGN]
    assert _send_all(harness, texts) == texts
    assert harness.verdict == "PASS"
