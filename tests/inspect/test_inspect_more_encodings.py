"""More dumps and encodings of a secret: decimal, float and big-endian ``od`` words, dumps
without an offset column (``od -An``), ``hexdump -d/-c``, ``od -a``; ``\\0163`` octal, ``0b``/``0o``
codes, characters written k times, rot13 or hex of base64, base64 of hex, percent-encoding two
or three times, HTML entities escaped again — each found, and hidden by redaction, with the
look-alikes of ordinary work left alone."""

from __future__ import annotations

import base64
import codecs
import random
from pathlib import Path
from urllib.parse import quote

import pytest
from scan_support import tool_output

from pytest_harness_audit.inspect.secrets import SecretRegistry, fingerprint

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"
HOOK = "whsec_test_7d1e9c3b5a2f8e4d"
PASSWORD = "hunter2-test"
RESERVED = "p4ss/w0rd+k3y=abcXYZ"
SECRETS = {KEY: "API_KEY", HOOK: "WEBHOOK", PASSWORD: "DATABASE_PASSWORD", RESERVED: "TOKEN"}
ENV = (
    "# Development settings. Fake values for the test workspace.\n"
    f"API_KEY={KEY}\nDATABASE_URL=postgresql://orders:{PASSWORD}@localhost:5432/orders\n"
    f"PAYMENT_WEBHOOK_SECRET={HOOK}\n"
)
MARK = f"[secret:{fingerprint(KEY)}]"
BYTES = KEY.encode()


@pytest.fixture(scope="module")
def registry() -> SecretRegistry:
    registry = SecretRegistry()
    for value, label in SECRETS.items():
        registry.add(value, label)
    return registry


@pytest.fixture(scope="module")
def env_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dumps") / "settings.env"
    path.write_text(ENV)
    return path


DUMPS = [
    ["od", "-t", "d2"],
    ["od", "-t", "d4"],
    ["od", "-t", "d8"],
    ["od", "-t", "u2"],
    ["od", "-t", "u4"],
    ["od", "-t", "u8"],
    ["od", "-d"],
    ["od", "-i"],
    ["od", "-l"],
    ["od", "-s"],
    ["od", "-v", "-t", "d2z"],
    ["od", "-A", "x", "-t", "d2"],
    ["od", "--endian=big", "-t", "d2"],
    ["od", "--endian=big", "-t", "u4"],
    ["od", "--endian=big", "-t", "o2"],
    ["od", "--endian=big", "-t", "o4"],
    ["od", "-t", "f4"],
    ["od", "-t", "f8"],
    ["od", "-An", "-t", "x2"],
    ["od", "-An", "-t", "x4"],
    ["od", "-An", "-t", "x8"],
    ["od", "-An", "-x"],
    ["od", "-An", "-t", "d2"],
    ["od", "-An", "-t", "u4"],
    ["od", "-An", "-t", "o2"],
    ["od", "-An", "-t", "o4"],
    ["od", "-An", "-t", "f8"],
    ["od", "-An", "-w2", "-t", "d2"],
    ["od", "-An", "-w4", "-t", "x4"],
    ["od", "-A", "n", "-t", "x2z"],
    ["od", "-A", "d", "-c"],
    ["od", "-A", "x", "-c"],
    ["od", "-a"],
    ["hexdump", "-d"],
    ["hexdump", "-c"],
    ["hexdump", "-C"],
    ["basenc", "--base2lsbf"],
]


@pytest.mark.parametrize("command", DUMPS, ids=" ".join)
def test_a_dump_shows_every_secret_of_the_file(
    registry: SecretRegistry, env_file: Path, command: list[str]
) -> None:
    found = {finding.label for finding in registry.scan(tool_output(command, env_file)).findings}
    assert found == {"API_KEY", "WEBHOOK", "DATABASE_PASSWORD"}


@pytest.mark.parametrize("command", DUMPS, ids=" ".join)
def test_a_dump_is_redacted_from_the_secret_on(
    registry: SecretRegistry, env_file: Path, command: list[str]
) -> None:
    output = tool_output(command, env_file)
    redacted = registry.redact(output)
    assert MARK in redacted
    assert registry.scan(redacted).findings == ()
    # what comes before the first secret is left as it was
    assert redacted.splitlines()[0] == output.splitlines()[0]


@pytest.mark.parametrize(
    "before",
    [
        "0000000 x\n0000000 y\n",  # two lines that look like a dump of nothing
        "x" * 5000 + "\n",  # more text before the dump than was once looked at
        "  notes\n   1  2  3\n",  # indented lines of other text
        "00000000: 4142  AB\n00000010: 4142  AB\n",  # two lines of another kind of dump
    ],
    ids=["offset lines", "a long head", "indented lines", "xxd lines"],
)
@pytest.mark.parametrize(
    "command", [["od", "-t", "x4"], ["od", "-An", "-t", "d2"], ["xxd"], ["od", "-c"], ["od", "-a"]]
)
def test_text_before_a_dump_does_not_hide_it(
    registry: SecretRegistry, env_file: Path, command: list[str], before: str
) -> None:
    output = before + tool_output(command, env_file)
    assert MARK in registry.redact(output)


@pytest.mark.parametrize(
    "command",
    [
        ["od", "-An", "-t", "d2"],
        ["od", "-An", "-t", "x4"],
        ["od", "-An", "-t", "f8"],
        ["od", "-An", "-w2", "-t", "u2"],
        ["hexdump", "-e", '4/4 "%08x " "\\n"'],
    ],
    ids=" ".join,
)
def test_a_dump_of_numbers_alone_is_read(
    registry: SecretRegistry, env_file: Path, command: list[str]
) -> None:
    # `sed 's/^ *//'`: no offset and no indent left
    output = "\n".join(line.lstrip() for line in tool_output(command, env_file).splitlines())
    assert {finding.label for finding in registry.scan(output).findings} == {
        "API_KEY",
        "WEBHOOK",
        "DATABASE_PASSWORD",
    }
    assert registry.scan(registry.redact(output)).findings == ()


def _tripled(value: str, times: int) -> str:
    return "".join(char * times for char in value)


ENCODED = {
    "echo -e octal": "".join(f"\\0{b:03o}" for b in BYTES),
    "C octal with a leading 0": ",".join(f"0{b:03o}" for b in BYTES),
    "oct()": " ".join(oct(b) for b in BYTES),
    "0b bytes": " ".join(f"0b{b:08b}" for b in BYTES),
    "bin()": str([bin(b) for b in BYTES]),
    "bits lsb first": "".join(f"{b:08b}"[::-1] for b in BYTES),
    "tripled": _tripled(KEY, 3),
    "four times": _tripled(KEY, 4),
    "six times, spread": " ".join(_tripled(KEY, 6)),
    "rot13 of base64": codecs.encode(base64.b64encode(BYTES).decode(), "rot13"),
    "base64 of rot13": base64.b64encode(codecs.encode(KEY, "rot13").encode()).decode(),
    "hex of base64": base64.b64encode(BYTES).hex(),
    "base64 of hex": base64.b64encode(BYTES.hex().encode()).decode(),
    "percent-encoded three times": "".join(f"%2525{b:02X}" for b in BYTES),
    "HTML entities escaped again": "".join(f"&amp;#{b};" for b in BYTES),
    "hex HTML entities escaped again": "".join(f"&amp;#x{b:x};" for b in BYTES),
    "HTML entities escaped three times": "".join(f"&amp;amp;#{b};" for b in BYTES),
    "JavaScript code points": "".join(f"\\u{{{b:x}}}" for b in BYTES),
}


@pytest.mark.parametrize("text", ENCODED.values(), ids=ENCODED.keys())
def test_an_encoding_of_a_secret_is_found(registry: SecretRegistry, text: str) -> None:
    labels = {finding.label for finding in registry.scan(f"out: {text} (done)").findings}
    assert labels == {"API_KEY"}


@pytest.mark.parametrize("text", ENCODED.values(), ids=ENCODED.keys())
def test_an_encoding_of_a_secret_is_redacted(registry: SecretRegistry, text: str) -> None:
    redacted = registry.redact(f"out: {text} (done)")
    assert redacted.startswith("out: ")
    assert redacted.endswith(" (done)")
    assert MARK in redacted
    assert registry.scan(redacted).findings == ()


PARTLY = {
    # one character escaped in a value without a vendor prefix (no body to fall back on)
    "echo -e octal": "hun\\0164er2-test",
    "HTML entity escaped again": "hun&amp;#116;er2-test",
    "hex HTML entity escaped again": "hunter2&amp;#x2d;test",
}


@pytest.mark.parametrize("text", PARTLY.values(), ids=PARTLY.keys())
def test_a_value_partly_escaped_is_found_and_redacted(registry: SecretRegistry, text: str) -> None:
    redacted = registry.redact(f"password: {text}\n")
    assert redacted == f"password: [secret:{fingerprint(PASSWORD)}]\n"


@pytest.mark.parametrize("times", [1, 2, 3, 4])
def test_a_value_percent_encoded_again_and_again_is_found(
    registry: SecretRegistry, times: int
) -> None:
    encoded = RESERVED
    for _ in range(times):
        encoded = quote(encoded, safe="")
    url = f"GET /collect?a=1&t={encoded}&discount=100%25 HTTP/1.1"
    redacted = registry.redact(url)
    assert (
        redacted == f"GET /collect?a=1&t=[secret:{fingerprint(RESERVED)}]&discount=100%25 HTTP/1.1"
    )


def test_a_plus_decoded_from_an_escape_is_no_space(registry: SecretRegistry) -> None:
    # `%2B` is a plus, a `+` of the text itself a space (form encoding)
    assert registry.scan("t=p4ss%2Fw0rd%252Bk3y%3DabcXYZ").findings
    assert not registry.scan("t=p4ss%2Fw0rd+k3y%3DabcXYZ").findings


def _binary(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


BENIGN_DUMPS = [
    *(command for command in DUMPS if command[0] != "basenc"),
    ["xxd"],
    ["xxd", "-e"],
    ["od", "-c"],
    ["od", "-t", "x1"],
    ["od", "-An", "-t", "u1"],
]


@pytest.mark.slow
@pytest.mark.parametrize("command", BENIGN_DUMPS, ids=" ".join)
def test_a_dump_of_a_file_without_secrets_finds_nothing(
    registry: SecretRegistry, tmp_path: Path, command: list[str]
) -> None:
    binary = tmp_path / "build.bin"
    binary.write_bytes(_binary(64 * 1024, 7) + b"API_KEY=\nDATABASE_PASSWORD=changeme\n")
    text = tmp_path / "notes.txt"
    text.write_text("An ordinary text: 100% of it, café ☕ and 🙂.\n" * 50)
    for path in (binary, text):
        assert registry.scan(tool_output(command, path)).findings == ()


BENIGN = {
    "repeated letters": "aaa bbb zzz aaaa zzzzzz sssskkkk --- ... 111 000 ffff eeee",
    "a tripled word": "".join(char * 3 for char in "the quick brown fox jumps over the lazy dog"),
    "emoji": "🙂🙂🙂 deploy ✅ done 🚀🚀 — ünïcödé ｆｕｌｌｗｉｄｔｈ 👍🏽 family: 👨‍👩‍👧",
    "URLs with %25": "see https://example.com/a%2520b?q=100%25&r=%252F%25252F and 50%25 off",
    "HTML with &amp;": "<p>Tom &amp; Jerry &amp;amp; co &amp;#169; &#38; &amp;lt;b&amp;gt;</p>",
    "C octal": 'printf("\\0163\\0153 \\033[0m \\0101\\0102");',
    "a numeric table": "\n".join(f"  {i:5d}  {i * 7:7d}  {i * 1.5:9.3f}" for i in range(200)),
    "binary numbers": " ".join(f"0b{i:08b}" for i in range(200)),
    "octal numbers": " ".join(oct(i) for i in range(500)),
}


@pytest.mark.parametrize("text", BENIGN.values(), ids=BENIGN.keys())
def test_look_alikes_of_ordinary_work_find_nothing(registry: SecretRegistry, text: str) -> None:
    assert registry.scan(text).findings == ()
    assert registry.redact(text) == text


ADVERSARIAL = {
    "char fields that fail at the end": "0000000" + " " * 64 + "xx\n",
    "od -a fields that fail": "0000000" + "  nl" * 60 + " xyzw!\n",
    "long decimal lines": "  " + " 12345678901234567890" * 40 + " x\n",
    "one-digit lines": " " + " 1" * 400 + "\n",
    "float lines that fail": "0000000 " + " 1.5e+10" * 60 + " x\n",
    "decimal lines with an open column": "0000000 " + " -1234" * 100 + " >" + "a" * 50 + "\n",
    "nested percent escapes": "%" + "25" * 500 + "zz ",
    "nested entities": "&" + "amp;" * 1000 + "x ",
    "echo octal": "\\0163" * 100,
    "hex words without offsets": " " + " dead" * 100 + "\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("unit", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_a_megabyte_of_adversarial_text_is_scanned_in_linear_time(
    registry: SecretRegistry, unit: str
) -> None:
    text = (unit * (2**20 // len(unit) + 1))[: 2**20]
    # about 0.1-0.4 s; a pattern that backtracks takes minutes on this text (the suite stalls)
    assert registry.scan(text).findings == ()
