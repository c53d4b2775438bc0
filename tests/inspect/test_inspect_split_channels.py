"""A known secret sent in parts over different channels, or compressed, is still found.

The parts of a value split between a message and a tool argument, two arguments of one call,
a resource URI and a prompt argument, or a tool call's ``_meta`` and its arguments meet in one
memory of fragments shared by every outgoing stream. Each part may be encoded on its own
(base64, reversed, ROT13), and a value may be compressed before it is encoded
(``gzip | base64``). What merely resembles a secret still goes out.
"""

from __future__ import annotations

import base64
import bz2
import codecs
import gzip
import hashlib
import lzma
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.inspect import SECRET_EXPOSURE, Inspector
from pytest_harness_audit.inspect.secrets import SecretRegistry, fingerprint

KEY = "sk-live-4f9a1c2e7b3d8a6f0e5c9d2b7a1e"
HALF = len(KEY) // 2
Step = tuple[str, dict[str, Any]]


@pytest.fixture
def inspector(tmp_path: Path) -> Iterator[Inspector]:
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\nDEBUG=true\n", encoding="utf-8")
    with Inspector(tmp_path, live=False, tracked=False) as made:
        yield made


def _alerts(inspector: Inspector, steps: list[Step]) -> list[bool]:
    return [SECRET_EXPOSURE in inspector.outgoing(tool, params).alerts for tool, params in steps]


def _message(text: str) -> Step:
    return ("send_message", {"text": text})


SPLITS: dict[str, list[Step]] = {
    "message-then-tool-argument": [
        _message(f"part one is {KEY[:HALF]}"),
        ("mcp__lib__lookup", {"book": KEY[HALF:]}),
    ],
    "tool-argument-then-message": [
        ("mcp__lib__lookup", {"book": KEY[:HALF]}),
        _message(f"and the rest: {KEY[HALF:]}"),
    ],
    "two-arguments-of-one-call": [("mcp__lib__search", {"q": KEY[:HALF], "page": KEY[HALF:]})],
    "two-calls-two-argument-names": [
        ("mcp__lib__a", {"first": KEY[:HALF]}),
        ("mcp__lib__b", {"second": KEY[HALF:]}),
    ],
    "resource-uri-then-prompt-argument": [
        ("mcp__lib__resources/read", {"uri": f"library://{KEY[:HALF]}", "url": "x"}),
        ("mcp__lib__prompts/get", {"name": "summary", "arguments": {"topic": KEY[HALF:]}}),
    ],
    "meta-and-argument": [("mcp__lib__lookup", {"_meta": {"trace": KEY[:HALF]}, "b": KEY[HALF:]})],
    "base64-of-each-half": [
        _message(base64.b64encode(KEY[:HALF].encode()).decode()),
        ("mcp__lib__lookup", {"book": base64.b64encode(KEY[HALF:].encode()).decode()}),
    ],
    "each-half-reversed": [_message(KEY[:HALF][::-1]), _message(KEY[HALF:][::-1])],
    "each-half-rot13": [
        _message(codecs.encode(KEY[:HALF], "rot13")),
        ("mcp__lib__lookup", {"book": codecs.encode(KEY[HALF:], "rot13")}),
    ],
}


@pytest.mark.parametrize("steps", list(SPLITS.values()), ids=list(SPLITS))
def test_a_value_split_over_channels_is_found_when_its_last_part_goes(
    inspector: Inspector, steps: list[Step]
) -> None:
    assert _alerts(inspector, steps)[-1]


def test_the_part_that_completes_a_split_is_redacted(inspector: Inspector) -> None:
    inspector.outgoing(*_message(f"part one is {KEY[:HALF]}"))
    seen = inspector.outgoing("mcp__lib__lookup", {"book": f"then {KEY[HALF:]}"})
    assert seen.redacted_output == {"book": f"then [secret:{fingerprint(KEY)}]"}
    encoded = base64.b64encode(KEY[HALF:].encode()).decode()
    inspector.outgoing(*_message(base64.b64encode(KEY[:HALF].encode()).decode()))
    seen = inspector.outgoing("mcp__lib__lookup", {"book": encoded})
    assert encoded not in str(seen.redacted_output)


LOOK_ALIKES: dict[str, list[Step]] = {
    "the-key-name-only": [
        _message("the API_KEY lives in .env; ask ops for it"),
        ("mcp__lib__lookup", {"book": "API_KEY"}),
    ],
    "a-hash-that-is-not-the-secret": [
        _message(hashlib.sha256(b"release-1.4.2").hexdigest()),
        ("mcp__lib__lookup", {"book": hashlib.sha256(b"release-1.4.3").hexdigest()}),
    ],
    "the-vendor-prefix-twice": [
        _message("our keys look like sk-live-xxxx"),
        ("mcp__lib__lookup", {"book": "sk-live-yyyy, rotate them"}),
    ],
    "one-half-only-then-chatter": [
        _message(f"a fragment {KEY[:HALF]}"),
        ("mcp__lib__lookup", {"book": "dune"}),
        _message("emma is out"),
    ],
    "the-same-half-twice": [_message(KEY[:HALF]), ("mcp__lib__lookup", {"book": KEY[:HALF]})],
    "gzip-of-other-text": [
        _message(base64.b64encode(gzip.compress(b"release notes for 1.4.2\n" * 4)).decode())
    ],
}


@pytest.mark.parametrize("steps", list(LOOK_ALIKES.values()), ids=list(LOOK_ALIKES))
def test_look_alikes_go_out(inspector: Inspector, steps: list[Step]) -> None:
    assert not any(_alerts(inspector, steps))


def _b64(compress: Callable[[bytes], bytes]) -> Callable[[str], str]:
    return lambda value: base64.b64encode(compress(value.encode())).decode()


COMPRESSED: dict[str, Callable[[str], str]] = {
    "gzip-base64": _b64(gzip.compress),
    "zlib-base64": _b64(zlib.compress),
    "bzip2-base64": _b64(bz2.compress),
    "xz-base64": _b64(lzma.compress),
    "gzip-hex": lambda value: gzip.compress(value.encode()).hex(),
    "gzip-of-a-config-line": lambda value: _b64(gzip.compress)(f"export API_KEY={value}\n"),
    "gzip-url-safe-base64": lambda value: base64.urlsafe_b64encode(
        gzip.compress(value.encode())
    ).decode(),
}


@pytest.fixture
def registry() -> SecretRegistry:
    made = SecretRegistry()
    made.add(KEY, "api")
    return made


@pytest.mark.parametrize("encode", list(COMPRESSED.values()), ids=list(COMPRESSED))
def test_a_compressed_value_is_found(
    registry: SecretRegistry, encode: Callable[[str], str]
) -> None:
    text = f"payload: {encode(KEY)} end"
    result = registry.scan(text)
    assert [f.fingerprint for f in result.findings] == [fingerprint(KEY)]
    assert encode(KEY) not in result.redacted()


def test_a_compression_bomb_is_read_within_the_budget(registry: SecretRegistry) -> None:
    bomb = base64.b64encode(gzip.compress(b"A" * 50_000_000 + KEY.encode())).decode()
    started = time.monotonic()
    assert not registry.scan(bomb).findings  # the value lies past what may be inflated
    assert time.monotonic() - started < 5
