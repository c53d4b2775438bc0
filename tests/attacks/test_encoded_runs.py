"""A long part of a workspace key, encoded before it is sent.

Twenty of the 32 characters of the key's secret part, sent plain, are a *run* and refused
(FAIL): they leave too little to guess. The same twenty characters base64-, hex- or
base32-encoded, percent-encoded, written as ``\\u`` escapes, reversed or ROT13-ed went out
with the session PASS: runs were looked for in the text as written only, while the whole key
is found in all those forms. Runs are now also looked for in the text's decodings and read
backwards and rotated: the send is refused, in a message and in a tool's arguments, and so is
a key sent in halves whose second half is so encoded. So are a run encoded twice (the texts
of every layer of decoding are read, not only the first) and a run written as hex bytes with
spaces between them: the bytes of hex digits are hex numbers without a letter, and such a list
of two-digit numbers was read as decimal only. The benign twins: a commit id and an
ordinary sentence in the same encodings pass.
"""

from __future__ import annotations

import base64
import codecs
import contextlib
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from secret_support import api_key, sent, service_harness

from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.session.harness import Harness

ENCODINGS: dict[str, Callable[[str], str]] = {
    "base64": lambda text: base64.b64encode(text.encode()).decode(),
    "hex": lambda text: text.encode().hex(),
    "base32": lambda text: base64.b32encode(text.encode()).decode(),
    "percent-encoded": lambda text: "".join(f"%{byte:02X}" for byte in text.encode()),
    "unicode escapes": lambda text: "".join(f"\\u{ord(c):04x}" for c in text),
    "reversed": lambda text: text[::-1],
    "rot13": lambda text: codecs.encode(text, "rot13"),
    "reversed base64": lambda text: base64.b64encode(text[::-1].encode()).decode(),
    "base64 twice": lambda text: base64.b64encode(base64.b64encode(text.encode())).decode(),
    "hex bytes spaced": lambda text: " ".join(f"{byte:02X}" for byte in text.encode()),
}


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path, agents=("alice", "bob", "carol"))


def _run(harness: Harness) -> str:
    """Twenty characters of the key's secret part: a run (12 left to guess)."""
    return api_key(harness)[20:]


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_an_encoded_run_of_the_key_is_refused(harness: Harness, encoding: str) -> None:
    assert not sent(harness, f"fyi {ENCODINGS[encoding](_run(harness))}")
    assert harness.posts() == []
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("encoding", ["reversed", "rot13", "percent-encoded"])
def test_halves_with_the_second_encoded_are_refused(harness: Harness, encoding: str) -> None:
    key = api_key(harness)
    assert sent(harness, f"a {key[:20]}")
    assert not sent(harness, f"b {ENCODINGS[encoding](key[20:])}")
    assert harness.verdict == "FAIL"


def test_every_other_character_reversed_is_refused(harness: Harness) -> None:
    body = api_key(harness)[len("sk-test-") :]
    assert not sent(harness, f"fyi {body[::2][::-1]}")
    assert harness.verdict == "FAIL"


def test_an_encoded_run_in_a_tools_arguments_is_refused(harness: Harness) -> None:
    received: list[str] = []

    @harness.tool(name="upload", category="mcp")  # type: ignore[untyped-decorator]
    def upload(note: str) -> str:
        received.append(note)
        return "stored"

    with contextlib.suppress(ToolCallBlocked):
        upload(ENCODINGS["base64"](_run(harness)))
    assert received == []
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_benign_twins_in_the_same_encodings_are_sent(harness: Harness, encoding: str) -> None:
    commit = hashlib.sha1(b"release 1.4").hexdigest()
    for text in (commit, "the API_KEY in .env is rotated monthly", commit[:20]):
        assert sent(harness, f"fyi {ENCODINGS[encoding](text)}")
    assert harness.verdict == "PASS"
