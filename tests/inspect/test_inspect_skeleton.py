"""More forms of a secret: letter rotations, base32, nested base64, UTF-16, a value among its
text's letters and digits alone (separators changed or spread), character codes, a value
without its vendor prefix (:mod:`pytest_harness_audit.inspect._skeleton`) and a value behind
character escapes (:mod:`pytest_harness_audit.inspect._escapes`)."""

from __future__ import annotations

import base64
import codecs
import json
import shutil
import subprocess

import pytest

from pytest_harness_audit.inspect import _dumps, _escapes, _skeleton
from pytest_harness_audit.inspect.secrets import SecretRegistry, fingerprint

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"
HOOK = "whsec_test_7d1e9c3b5a2f8e4d"
MARK = f"[secret:{fingerprint(KEY)}]"


@pytest.fixture
def registry() -> SecretRegistry:
    registry = SecretRegistry()
    registry.add(KEY, "API_KEY")
    registry.add(HOOK, "WEBHOOK")
    registry.add("hunter2-test", "DATABASE_PASSWORD")
    return registry


def _shift(text: str, by: int) -> str:
    lower = "abcdefghijklmnopqrstuvwxyz"
    return text.translate(str.maketrans(lower, lower[by:] + lower[:by]))


ENCODED = {
    "rot13": codecs.encode(KEY, "rot13"),
    "rot13 upper": codecs.encode(KEY, "rot13").upper(),
    "shift 1": _shift(KEY, 1),
    "shift 25": _shift(KEY, 25),
    "base32": base64.b32encode(KEY.encode()).decode(),
    "base32 shifted": base64.b32encode(b"xy" + KEY.encode()).decode(),
    "base64 twice": base64.b64encode(base64.b64encode(KEY.encode())).decode(),
    "base64 twice, the line": base64.b64encode(base64.b64encode(f"KEY={KEY}\n".encode())).decode(),
    "base64 reversed": base64.b64encode(KEY[::-1].encode()).decode(),
    "hex read backwards": KEY.encode().hex()[::-1],
    "utf16-le hex": KEY.encode("utf-16-le").hex(),
    "utf16-le base64": base64.b64encode(KEY.encode("utf-16-le")).decode(),
    "utf16-be base64": base64.b64encode(KEY.encode("utf-16-be")).decode(),
    "underscores": KEY.replace("-", "_"),
    "dots": KEY.replace("-", "."),
    "no separators": KEY.replace("-", ""),
    "a dash after each": "-".join(KEY),
    "a line each": "\n".join(KEY),
    "decimal": ",".join(str(b) for b in KEY.encode()),
    "decimal list": str(list(KEY.encode())),
    "x escapes": "".join(f"\\x{b:02x}" for b in KEY.encode()),
    "u escapes": "".join(f"\\u{ord(c):04x}" for c in KEY),
    "html decimal": "".join(f"&#{b};" for b in KEY.encode()),
    "html hex": "".join(f"&#x{b:x};" for b in KEY.encode()),
    "body": KEY.removeprefix("sk-test-"),
    "body reversed": KEY.removeprefix("sk-test-")[::-1],
    "body upper hex": KEY.removeprefix("sk-test-").encode().hex().upper(),
    "octal codes": " ".join(f"{b:o}" for b in KEY.encode()),
    "octal codes, padded": " ".join(f"{b:03o}" for b in KEY.encode()),
    "binary codes": " ".join(f"{b:08b}" for b in KEY.encode()),
    "binary codes, unpadded": ",".join(f"{b:b}" for b in KEY.encode()),
    "each character doubled": "".join(c * 2 for c in KEY),
    "rot47": KEY.translate(
        str.maketrans(
            "".join(chr(c) for c in range(33, 127)),
            "".join(chr(33 + (c - 33 + 47) % 94) for c in range(33, 127)),
        )
    ),
    "atbash": KEY.translate(
        str.maketrans("abcdefghijklmnopqrstuvwxyz", "zyxwvutsrqponmlkjihgfedcba")
    ),
    "base64 of rot13": base64.b64encode(codecs.encode(KEY, "rot13").encode()).decode(),
    "double url encoding": "".join(f"%25{b:02X}" for b in KEY.encode()),
    "utf32-le hex": KEY.encode("utf-32-le").hex(),
    "utf32-be hex": KEY.encode("utf-32-be").hex(),
    "tag characters": "".join(chr(0xE0000 + ord(c)) for c in KEY),
    "variation selectors": "\U0001f600" + "".join(chr(0xE0100 + ord(c) - 16) for c in KEY),
    "braille bytes": "".join(chr(0x2800 + b) for b in KEY.encode()),
}


@pytest.mark.parametrize("text", ENCODED.values(), ids=ENCODED.keys())
def test_an_encoded_key_is_found_and_redacted(registry: SecretRegistry, text: str) -> None:
    result = registry.scan(f"before {text} after")
    assert [f.fingerprint for f in result.findings] == [fingerprint(KEY)], result.findings
    redacted = result.redacted()
    assert redacted.startswith("before ") and redacted.endswith(" after")
    assert MARK in redacted
    # what is left of the encoded text are the few edge characters that depend on neighbours
    # (twice encoded, the encoding of the text before the value on its line too)
    assert len(redacted) - len("before  after") - len(MARK) <= 16, redacted


def test_the_webhook_body_and_the_password_with_another_separator(
    registry: SecretRegistry,
) -> None:
    assert registry.scan("7d1e9c3b5a2f8e4d").findings
    assert registry.scan("whsec-test-7d1e9c3b5a2f8e4d").findings
    # a value whose letters and digits are fewer than 12 is matched only as it is written
    assert not registry.scan("the password: hunter2_test").findings
    assert registry.scan("the password: hunter2-test").findings


def test_the_transform_is_named(registry: SecretRegistry) -> None:
    def transform(text: str) -> str:
        (finding,) = registry.scan(text).findings
        return finding.transform

    assert transform(codecs.encode(KEY, "rot13")) == "rot13"
    assert transform(KEY.replace("-", "_")).endswith("separators_ignored")
    assert transform(",".join(str(b) for b in KEY.encode())).startswith("decimal")
    assert transform(KEY.removeprefix("sk-test-")).startswith("body")


def test_a_skeleton_split_over_two_sends(registry: SecretRegistry) -> None:
    stream = registry.stream()
    dashed = "-".join(KEY)
    assert not stream.scan(dashed[:30]).findings
    result = stream.scan(dashed[30:])
    assert [f.fingerprint for f in result.findings] == [fingerprint(KEY)]
    assert "split" in result.findings[0].transform


def test_a_skeleton_across_chunks(
    registry: SecretRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_harness_audit.inspect import _matcher

    monkeypatch.setattr(_matcher, "CHUNK", 64)
    text = "x" * 50 + "_".join(KEY.split("-")) + "y" * 100
    (finding,) = registry.scan(text).findings
    assert (finding.start, finding.end) == (50, 50 + len(KEY))


BENIGN = [
    "tests pass; pricing refactor is ready for review",
    "keys look like sk_test_ then hex; the webhook one is whsec_test_ plus hex",
    "bytes: 104,101,108,108,111,44,32,119,111,114,108,100",
    "\\x68\\x65\\x6c\\x6c\\x6f \\u0077\\u006f\\u0072\\u006c\\u0064",
    "rot13 of hello is uryyb; caesar ciphers are fun",
    "sha256 09098ef372a1623e882b5d05d47a0e206df3e0dab3d44c322d18d7c0a6ace93a",
    "request id 9b2f6c1e-8a7d-4e3b-b5c0-2d4f6a8e1c3b",
    "the hunter2 test suite",  # a short value across words is not matched
    KEY[:20],  # a part of the key is not the key
    KEY[-18:],
    base64.b64encode(b"an ordinary sentence, encoded twice").decode(),
    "I \u2764\ufe0f this \U0001f44d\U0001f3fd release",  # emoji with their selectors
    "\u2813\u2811\u2807\u2807\u2815 in braille, and flags \U0001f3f4\U000e0067\U000e0062\U000e007f",
    "permissions 0644 0755 and masks 11111111 00000000 10101010",
    "%2Fsrv%2Fapp%252Fdata double-encoded path",
]


@pytest.mark.parametrize("text", BENIGN)
def test_benign_texts(registry: SecretRegistry, text: str) -> None:
    assert registry.scan(text).findings == ()


def test_forms_are_bounded() -> None:
    forms = list(_skeleton.extra_forms(KEY)) + list(_skeleton.skeleton_forms(KEY))
    assert len(forms) < 128
    assert all(len(form) >= 1 for _, form in forms)
    assert _skeleton.body("ghp_" + "a1" * 10) == "a1" * 10
    assert _skeleton.body("sk-short") is None
    assert _skeleton.body("abcdef0123456789abcd") is None  # no prefix
    short = list(_skeleton.skeleton_forms("hunter2-test"))
    assert all(len(key) >= _skeleton.SKELETON_MIN for _, key in short)


def test_a_large_text_is_scanned_in_one_pass(registry: SecretRegistry) -> None:
    text = ("word " * 200_000) + "-".join(KEY) + (" tail" * 1000)
    (finding,) = registry.scan(text).findings
    assert text[finding.start : finding.end] == "-".join(KEY)


ESCAPED = {
    "python repr of UTF-16": repr(f"A={KEY}".encode("utf-16")),
    "raw UTF-16": f"x={KEY}".encode("utf-16-le").decode("latin-1"),
    "json of fullwidth": json.dumps("".join(chr(ord(c) + 0xFEE0) for c in KEY)),
    "json of reversed": json.dumps("naïve " + KEY[::-1]),
    "octal": "".join(f"\\{b:03o}" for b in KEY.encode()),
    "hex entities mixed": "".join(f"&#x{ord(c):x};" if i % 2 else c for i, c in enumerate(KEY)),
}


@pytest.mark.parametrize("text", ESCAPED.values(), ids=ESCAPED.keys())
def test_a_key_behind_escapes_is_found_and_redacted(registry: SecretRegistry, text: str) -> None:
    result = registry.scan(text)
    assert [f.fingerprint for f in result.findings] == [fingerprint(KEY)], result.findings
    redacted = result.redacted()
    assert MARK in redacted
    assert registry.scan(redacted).findings == ()


@pytest.mark.parametrize(
    "text",
    [
        "plain words \\x41\\x42 and \\u00e9 and &#233; nothing secret",
        "a\x00b\x00c\x00 bytes with NULs",
        "\\777 \\xZZ &#99999999; \\ud800 malformed escapes",
    ],
)
def test_escapes_without_a_secret(registry: SecretRegistry, text: str) -> None:
    assert registry.scan(text).findings == ()


def test_unescaped_maps_positions_back() -> None:
    decoded = _escapes.unescaped("ab\\x41\x00c&#68;")
    assert decoded is not None
    text, pieces = decoded
    assert text == "abAcD"
    assert (pieces.start(2), pieces.end(3)) == (2, 6)
    assert (pieces.start(3), pieces.end(5)) == (7, 13)
    assert _escapes.unescaped("nothing to decode") is None


def _dump(command: list[str], data: bytes) -> str:
    return subprocess.run(command, input=data, capture_output=True, check=True).stdout.decode()


DUMPS = [
    ["xxd"],
    ["hexdump", "-C"],
    ["od", "-c"],
    ["od", "-x"],
    ["hexdump"],
    ["od", "-An", "-c"],
    ["xxd", "-i"],
    ["xxd", "-u"],
    ["xxd", "-u", "-e"],
    ["xxd", "-b"],
    ["xxd", "-e"],
    ["xxd", "-g4"],
    ["xxd", "-g8"],
    ["od"],
    ["od", "-b"],
    ["od", "-t", "d1"],
    ["od", "-t", "u1"],
    ["od", "-An", "-t", "d1"],
    ["od", "-t", "x1"],
    ["od", "-A", "x", "-t", "x1z"],
    ["od", "-t", "x4"],
    ["od", "-t", "x8"],
    ["od", "-t", "o2"],
    ["od", "-t", "o4"],
    ["basenc", "--base2msbf"],
    ["hexdump", "-e", '16/1 "%03o "'],
]


@pytest.mark.parametrize("command", DUMPS, ids=[" ".join(c) for c in DUMPS])
def test_a_key_in_a_dump_is_found_and_redacted(
    registry: SecretRegistry, command: list[str]
) -> None:
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    data = f"# settings\nAPI_KEY={KEY}\nOTHER=1\n".encode()
    text = _dump(command, data)
    result = registry.scan(text)
    assert fingerprint(KEY) in {f.fingerprint for f in result.findings}
    redacted = result.redacted()
    for part in (KEY[8:20], KEY[-11:], KEY.encode().hex()[20:36]):
        assert part not in redacted.replace(" ", ""), redacted


@pytest.mark.parametrize("command", DUMPS, ids=[" ".join(c) for c in DUMPS])
def test_a_dump_without_a_secret(registry: SecretRegistry, command: list[str]) -> None:
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    text = _dump(command, b"ordinary bytes of a build artefact\n" * 4)
    assert registry.scan(text).findings == ()


def test_undump_reads_the_bytes_back() -> None:
    text = "00000000: 4150 495f  API_\n00000004: 4b45 593d  KEY=\n"
    decoded = _dumps.undump(text)
    assert decoded is not None
    assert decoded[0] == "API_KEY="
    assert _dumps.undump("just one line 00000000: 41\n") is None


def test_bit_lines_without_an_ascii_column_are_read_in_linear_time(
    registry: SecretRegistry,
) -> None:
    # a nested repeat in the xxd pattern once backtracked for seconds on such lines
    lines = [f"{i * 6:08x}: " + " ".join(["01101001"] * 6) for i in range(2000)]
    assert registry.scan("\n".join(lines)).findings == ()


def test_a_numeric_dump_is_redacted_from_the_field_of_the_first_byte(
    registry: SecretRegistry,
) -> None:
    if shutil.which("od") is None:
        pytest.skip("od is not installed")
    text = _dump(["od", "-t", "d1"], b"x" * 20 + KEY.encode() + b"\n")
    redacted = registry.scan(text).redacted()
    assert redacted.startswith(text.splitlines()[0])  # the line before the key is kept
    assert "0000020  120  120  120  120 [secret:" in redacted.replace("  [secret:", " [secret:")
