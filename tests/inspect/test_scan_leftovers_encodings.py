"""Encodings beyond base64 and hex (uuencode, base32hex, Ascii85, base85, Z85, text read
backwards), encodings nested in each other to any depth the scan bounds, and UTF-16 text seen
through a dump — each found and redacted, with look-alikes of ordinary work left alone, and
hostile texts scanned in bounded time."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import random
import shutil
import subprocess
from collections.abc import Callable

import pytest
from scan_support import ALL, ENV, HOOK, KEY, PASSWORD

from pytest_harness_audit.inspect import _layers, _matcher
from pytest_harness_audit.inspect.secrets import SecretRegistry, fingerprint

MARK = f"[secret:{fingerprint(KEY)}]"
_B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


@pytest.fixture(scope="module")
def registry() -> SecretRegistry:
    registry = SecretRegistry()
    for value, label in ((KEY, "API_KEY"), (HOOK, "WEBHOOK"), (PASSWORD, "DATABASE_PASSWORD")):
        registry.add(value, label)
    return registry


def _b64(data: bytes) -> bytes:
    """As ``base64`` writes it: lines of 76 characters."""
    return base64.encodebytes(data)


def _times(encode: Callable[[bytes], bytes], data: bytes, times: int) -> bytes:
    for _ in range(times):
        data = encode(data)
    return data


def _uu(data: bytes, *, backtick: bool = False) -> str:
    lines = (binascii.b2a_uu(data[i : i + 45], backtick=backtick) for i in range(0, len(data), 45))
    return "begin 644 .env\n" + b"".join(lines).decode() + "`\nend\n"


def _z85(data: bytes) -> str:
    data += b"\n" * (-len(data) % 4)  # Z85 takes whole 4-byte groups
    return base64.b85encode(data).decode().translate(str.maketrans(_B85, _Z85))


def _xxd_plain(data: bytes) -> bytes:
    """``xxd -p``: hex in lines of 60 digits."""
    digits = data.hex()
    return "".join(digits[i : i + 60] + "\n" for i in range(0, len(digits), 60)).encode()


def _xxd(data: bytes) -> bytes:
    lines = []
    for at in range(0, len(data), 16):
        row = data[at : at + 16]
        groups = " ".join(row[i : i + 2].hex() for i in range(0, len(row), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        lines.append(f"{at:08x}: {groups:<39}  {text}\n")
    return "".join(lines).encode()


def _rev_lines(text: str) -> str:
    return "\n".join(line[::-1] for line in text.splitlines())


ENCODED = {
    "uuencode": _uu(ENV),
    "uuencode with backticks": _uu(ENV, backtick=True),
    "b2a_uu lines alone": "".join(
        binascii.b2a_uu(ENV[i : i + 45]).decode() for i in range(0, len(ENV), 45)
    ),
    "base32hex": base64.b32hexencode(ENV).decode(),
    "base32hex wrapped": "\n".join(
        base64.b32hexencode(ENV).decode()[i : i + 76] for i in range(0, 400, 76)
    ),
    "ascii85": base64.a85encode(ENV).decode(),
    "ascii85 <~ ~> wrapped": base64.a85encode(ENV, adobe=True, wrapcol=76).decode(),
    "base85": base64.b85encode(ENV).decode(),
    "z85": _z85(ENV),
    "base64 | rev": base64.b64encode(ENV).decode()[::-1],
    "base64 wrapped | rev": _rev_lines(_b64(ENV).decode()),
    "rev": _rev_lines(ENV.decode()),
    "tac": "\n".join(reversed(ENV.decode().splitlines())),
    "base64 twice": _times(_b64, ENV, 2).decode(),
    "base64 three times": _times(_b64, ENV, 3).decode(),
    "base64 four times": _times(_b64, ENV, 4).decode(),
    "base64 four times, one line": _times(base64.b64encode, ENV, 4).decode(),
    "url-safe base64 three times": _times(base64.urlsafe_b64encode, ENV, 3).decode(),
    "base32 of base64": base64.b32encode(_b64(ENV)).decode(),
    "base64 of base32": _b64(base64.b32encode(ENV)).decode(),
    "base64 of xxd -p": _b64(_xxd_plain(ENV)).decode(),
    "hex of xxd -p": _xxd_plain(_xxd_plain(ENV)).decode(),
    "hex of hex": ENV.hex().encode().hex(),
    "base64 of an xxd dump": _b64(_xxd(ENV)).decode(),
    "ascii85 of base64": base64.a85encode(_b64(ENV)).decode(),
    "base64 of UTF-16, twice": _times(_b64, ENV.decode().encode("utf-16-le"), 2).decode(),
    "uuencode of base64": _uu(_b64(ENV)),
    "base64 of a list of numbers": _b64(str(list(ENV)).encode()).decode(),
    "base64 three times in a JSON string": json.dumps(
        {"content": _times(base64.b64encode, ENV, 3).decode()}
    ),
    "base64 twice in a data URL": "data:text/plain;base64,"
    + _times(base64.b64encode, ENV, 2).decode(),
    "hex of base64 after a key": "blob:" + base64.b64encode(ENV).hex(),
}


@pytest.mark.parametrize("text", ENCODED.values(), ids=ENCODED.keys())
def test_an_encoding_shows_every_secret(registry: SecretRegistry, text: str) -> None:
    assert {finding.label for finding in registry.scan(f"$ cmd\n{text}\n$ ").findings} == ALL


@pytest.mark.parametrize("text", ENCODED.values(), ids=ENCODED.keys())
def test_an_encoding_is_redacted(registry: SecretRegistry, text: str) -> None:
    redacted = registry.redact(f"$ cmd\n{text}\n$ done")
    assert redacted.startswith("$ cmd\n")
    assert redacted.endswith("\n$ done")
    # a block read whole (uuencode, lines reversed) is one marker, of the first secret in it
    assert "[secret:" in redacted
    assert registry.scan(redacted).findings == ()


def test_a_nested_hit_is_mapped_to_the_characters_that_encode_it(
    registry: SecretRegistry,
) -> None:
    inner = base64.b64encode(base64.b64encode(KEY.encode()))
    outer = base64.b64encode(b"A" * 300 + inner + b"B" * 300).decode()
    (finding,) = registry.scan(outer).findings
    assert finding.transform.endswith("decoded")
    # the base64 of the 300 bytes before the value is left as it was
    assert finding.start >= 390
    assert finding.end <= len(outer) - 390


def test_a_value_a_form_finds_and_the_same_value_nested_are_both_redacted(
    registry: SecretRegistry,
) -> None:
    once = base64.b64encode(KEY.encode()).decode()
    nested = _times(base64.b64encode, KEY.encode(), 4).decode()
    redacted = registry.redact(f"{once} and {nested}")
    assert redacted.count(MARK) == 2
    assert redacted.split(" and ")[0].startswith(MARK)


def _run(command: list[str], data: bytes) -> str:
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    done = subprocess.run(command, input=data, capture_output=True, check=False)
    if done.returncode != 0 or not done.stdout:
        pytest.skip(f"{' '.join(command)} is not supported here")
    return done.stdout.decode("latin-1")


UTF16_DUMPS = [["od", "-c"], ["xxd"], ["hexdump", "-C"], ["od", "-x"], ["od", "-An", "-c"]]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-16"])
@pytest.mark.parametrize("command", UTF16_DUMPS, ids=" ".join)
def test_utf16_text_seen_through_a_dump_is_found(
    registry: SecretRegistry, command: list[str], codec: str
) -> None:
    output = _run(command, ENV.decode().encode(codec))
    found = {finding.label for finding in registry.scan(output).findings}
    assert found == ALL
    assert registry.scan(registry.redact(output)).findings == ()


@pytest.mark.parametrize(
    "command",
    [
        ["basenc", "--base32hex"],
        ["basenc", "--z85"],
        ["rev"],
        ["tac"],
    ],
    ids=" ".join,
)
def test_a_tool_encoding_shows_every_secret(registry: SecretRegistry, command: list[str]) -> None:
    data = ENV + b"\n" * (-len(ENV) % 4)  # basenc --z85 takes whole 4-byte groups
    output = _run(command, data)
    assert {finding.label for finding in registry.scan(output).findings} == ALL


def _random(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


PROSE = (b"The quick brown fox jumps over the lazy dog; the build passed in 3.2s.\n") * 200

BENIGN = {
    "base64 of random bytes": _b64(_random(200_000, 1)).decode(),
    "short base64 blobs": "\n".join(
        base64.b64encode(_random(n, n)).decode() for n in range(8, 300)
    ),
    "base64 of prose, four times": _times(_b64, PROSE, 4).decode(),
    "sha256 hashes": "\n".join(
        f"{hashlib.sha256(str(n).encode()).hexdigest()}  file{n}.py" for n in range(3000)
    ),
    "git log": "".join(
        f"commit {hashlib.sha1(str(n).encode()).hexdigest()}\nAuthor: Dev <dev@example.com>\n"
        f"Date:   Mon Jan {n % 28 + 1} 10:00:00 2024 +0000\n\n    Fix issue #{n}\n\n"
        for n in range(1000)
    ),
    "uuencode of random bytes": _uu(_random(60_000, 2)),
    "ascii85 of random bytes": base64.a85encode(_random(60_000, 3), wrapcol=76).decode(),
    "base85 of random bytes": base64.b85encode(_random(60_000, 4)).decode(),
    "z85 of random bytes": _z85(_random(60_000, 5)),
    "base32hex of random bytes": base64.b32hexencode(_random(60_000, 6)).decode(),
    "hex of hex of random bytes": _random(30_000, 7).hex().encode().hex(),
    "an xxd dump of a binary": _xxd(_random(60_000, 8) + b"API_KEY=\n").decode(),
    "base64 of an xxd dump of a binary": _b64(_xxd(_random(20_000, 9))).decode(),
    "UTF-16 prose in base64": _b64(PROSE.decode().encode("utf-16-le")).decode(),
    "reversed prose": PROSE.decode()[::-1],
    "JWT-like tokens": "\n".join(
        ".".join(base64.urlsafe_b64encode(_random(n, k)).decode().rstrip("=") for k in (1, 2, 3))
        for n in range(20, 120)
    ),
    "the words of a short secret": "the hunter2 test suite; hunter-test2; test-hunter2",
}


@pytest.mark.parametrize("text", BENIGN.values(), ids=BENIGN.keys())
def test_look_alikes_of_ordinary_work_find_nothing(registry: SecretRegistry, text: str) -> None:
    assert registry.scan(text).findings == ()
    assert registry.redact(text) == text


def test_a_short_secret_is_found_nested_but_not_in_its_parts() -> None:
    registry = SecretRegistry()
    registry.add("q7Zp2x", "SHORT")
    nested = _times(base64.b64encode, b"token=q7Zp2x;", 3).decode()
    assert {finding.label for finding in registry.scan(nested).findings} == {"SHORT"}
    parts = _times(base64.b64encode, b"token=q7Zp ... 2x;", 3).decode()
    assert registry.scan(parts).findings == ()


def test_nesting_deeper_than_the_bound_is_not_read(registry: SecretRegistry) -> None:
    deep = _times(base64.b64encode, KEY.encode(), _layers.MAX_DEPTH + 4).decode()
    assert registry.scan(deep).findings == ()  # a documented limit: the depth is bounded


HOSTILE = {
    "one long run": "A" * 2**20,
    "a long run of digits": "0123456789" * 2**17,
    "runs of every alphabet": "".join(
        chr(c) * 25 + " " for c in range(33, 127) if chr(c) not in "\\"
    ),
    "uuencoded lines of nothing": "M" + " " * 60 + "\n",
    "base64 of zeros, nested": _times(_b64, bytes(2**16), 3).decode(),
    "padding between short segments": "abcdABCD0123=" * 1000,
    "wrapped lines of ascii85": ("<~" + "9jqo^BlbD-BleB1DJ+*+F(f,q" * 3 + "~>\n") * 100,
}


@pytest.mark.slow
@pytest.mark.parametrize("unit", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_megabyte_of_hostile_text_is_scanned(registry: SecretRegistry, unit: str) -> None:
    text = (unit * (2**20 // len(unit) + 1))[: 2**20]
    # a decoding that is not bounded takes minutes here (the suite stalls)
    assert registry.scan(text).findings == ()


@pytest.mark.parametrize("prefix", ["", "$", "$$", "$$$"])
def test_a_nested_encoding_is_read_past_the_first_chunk(
    registry: SecretRegistry, prefix: str
) -> None:
    # the prefix puts the chunk boundary at each place of a base64 group
    data = _random(150_000, 1) + ENV + _random(10_000, 9)
    text = prefix + _times(base64.b64encode, data, 3).decode()
    found = registry.scan(text).findings
    assert {finding.label for finding in found} == ALL
    assert min(finding.start for finding in found) > _matcher.CHUNK  # in a later chunk
