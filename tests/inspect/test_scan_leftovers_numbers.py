"""Bytes printed as lists of numbers in layouts other than ``od``'s: ``hexdump -e`` formats,
perl ``unpack``, Python lists and arrays, JavaScript typed arrays — each found and redacted,
with number tables of ordinary work left alone."""

from __future__ import annotations

import json
import random
import struct
from array import array
from pathlib import Path

import pytest
from scan_support import ALL, ENV, KEY, secrets_registry, tool_output

from pytest_harness_audit.inspect import _number_lists
from pytest_harness_audit.inspect.secrets import SecretRegistry, fingerprint


@pytest.fixture(scope="module")
def registry() -> SecretRegistry:
    return secrets_registry()


def _words(data: bytes, fmt: str) -> list[int]:
    size = struct.calcsize(fmt)
    data += b"\0" * (-len(data) % size)
    return [word for (word,) in struct.iter_unpack(fmt, data)]


def _js_typed(name: str, values: list[int]) -> str:
    rows = [", ".join(f"{v:>3}" for v in values[i : i + 12]) for i in range(0, len(values), 12)]
    return f"{name}({len(values)}) [\n  " + ",\n  ".join(rows) + "\n]\n"


LISTS = {
    "hexdump 1/2 %u on one line": " ".join(str(w) for w in _words(ENV, "<H")),
    "hexdump 1/2 %u a line": "\n".join(str(w) for w in _words(ENV, "<H")),
    "hexdump 1/4 %u a line": "\n".join(str(w) for w in _words(ENV, "<I")),
    "hexdump 1/2 %d signed": " ".join(str(w) for w in _words(ENV, "<h")),
    "hexdump 1/4 %d signed": "\n".join(str(w) for w in _words(ENV, "<i")),
    "hexdump 1/1 %x unpadded": " ".join(f"{b:x}" for b in ENV),
    "hexdump 1/2 %x a line": "\n".join(f"{w:x}" for w in _words(ENV, "<H")),
    "hexdump 1/4 %x a line": "\n".join(f"{w:x}" for w in _words(ENV, "<I")),
    "hexdump 1/4 %08x big-endian": "\n".join(f"{w:08x}" for w in _words(ENV, ">I")),
    "hexdump 1/2 %o": " ".join(f"{w:o}" for w in _words(ENV, "<H")),
    "1/1 %o a line": "\n".join(f"{b:o}" for b in ENV),
    "comma-separated 0x bytes": ", ".join(f"0x{b:02x}" for b in ENV),
    "comma-separated 0x 16-bit words": ",".join(f"0x{w:04X}" for w in _words(ENV, "<H")),
    "perl unpack C*": " ".join(str(b) for b in ENV),
    "perl unpack n*": ",".join(str(w) for w in _words(ENV, ">H")),
    "perl unpack N*": ",".join(str(w) for w in _words(ENV, ">I")),
    "perl unpack v*": " ".join(str(w) for w in _words(ENV, "<H")),
    "python list(data)": str(list(ENV)),
    "python array H": repr(array("H", _words(ENV, "<H"))),
    "python array I": repr(array("I", _words(ENV, "<I"))),
    "python struct big-endian tuple": str(tuple(_words(ENV, ">H"))),
    "js Uint8Array": _js_typed("Uint8Array", list(ENV)),
    "js Uint32Array": _js_typed("Uint32Array", _words(ENV, "<I")),
    "JSON of a Uint8Array": json.dumps({str(i): b for i, b in enumerate(ENV)}),
    "JSON of a Uint16Array": json.dumps({str(i): w for i, w in enumerate(_words(ENV, "<H"))}),
    "python dict of bytes": str(dict(enumerate(ENV))),
    "one number a line after other text": "bytes:\na b c\n" + "\n".join(map(str, ENV)),
}


@pytest.mark.parametrize("text", LISTS.values(), ids=LISTS.keys())
def test_a_list_of_numbers_shows_every_secret(registry: SecretRegistry, text: str) -> None:
    assert {finding.label for finding in registry.scan(text).findings} == ALL


@pytest.mark.parametrize("text", LISTS.values(), ids=LISTS.keys())
def test_a_list_of_numbers_is_redacted(registry: SecretRegistry, text: str) -> None:
    redacted = registry.redact(f"output:\n{text}\ndone\n")
    assert f"[secret:{fingerprint(KEY)}]" in redacted
    assert redacted.startswith("output:\n")
    assert redacted.endswith("\ndone\n")
    assert registry.scan(redacted).findings == ()


def test_a_redacted_list_keeps_the_numbers_before_the_secret(registry: SecretRegistry) -> None:
    text = " ".join(str(b) for b in ENV)
    redacted = registry.redact(text)
    # "# Development settings\nAPI_KEY=" is left as it was
    assert redacted.startswith(" ".join(str(b) for b in ENV[:31]) + " ")


TOOLS = [
    ["hexdump", "-v", "-e", '1/2 "%u "'],
    ["hexdump", "-v", "-e", '1/2 "%u\\n"'],
    ["hexdump", "-v", "-e", '1/4 "%u\\n"'],
    ["hexdump", "-v", "-e", '1/4 "%x\\n"'],
    ["hexdump", "-v", "-e", '1/2 "%x\\n"'],
    ["hexdump", "-v", "-e", '1/2 "%o "'],
    ["hexdump", "-v", "-e", '1/1 "%d,"'],
    ["hexdump", "-v", "-e", '1/4 "%d "'],
    ["perl", "-0777", "-ne", 'print join(",", unpack("n*", $_))'],
    ["perl", "-0777", "-ne", 'print join(" ", unpack("V*", $_))'],
]


@pytest.mark.parametrize("command", TOOLS, ids=" ".join)
def test_a_tool_printing_numbers_shows_every_secret(
    registry: SecretRegistry, tmp_path: Path, command: list[str]
) -> None:
    path = tmp_path / "settings.env"
    path.write_bytes(ENV + b"\n\n\n")  # whole words for every width
    output = tool_output(command, path)
    assert {finding.label for finding in registry.scan(output).findings} == ALL
    assert registry.scan(registry.redact(output)).findings == ()


def _binary() -> bytes:
    rng = random.Random(11)
    return rng.randbytes(32 * 1024) + b"API_KEY=\nDATABASE_PASSWORD=changeme\n" + bytes(range(256))


BENIGN = {
    "seq": "\n".join(str(i) for i in range(1, 20000)),
    "a numeric table": "\n".join(f"{i:5d} {i * i:9d} {i * 37 % 1000:4d}" for i in range(3000)),
    "a CSV of numbers": "\n".join(
        ",".join(str(random.Random(i).randint(-5000, 70000)) for _ in range(8)) for i in range(2000)
    ),
    "JSON of numbers": json.dumps({"ids": list(range(0, 40000, 7)), "n": {"0": 1, "1": 2}}),
    "python list(range)": str(list(range(5000))),
    "bytes of a binary as a list": str(list(_binary())),
    "words of a binary, one a line": "\n".join(str(w) for w in _words(_binary(), "<H")),
    "hex words of a binary": "\n".join(f"{w:x}" for w in _words(_binary(), "<I")),
    "dates and versions": "2024-01-15 v1.2.3 10:42:07 3.11.7 1 2 3 4 2025-12-31 " * 200,
    "ls -l": "".join(
        f"-rw-r--r-- 1 user staff {n * 977 % 100000:6d} Jan {n % 28 + 1:2d} 10:{n % 60:02d} f{n}\n"
        for n in range(2000)
    ),
    "git log --oneline": "".join(
        f"{random.Random(n).getrandbits(28):07x} Fix the thing number {n}\n" for n in range(2000)
    ),
}


@pytest.mark.parametrize("text", BENIGN.values(), ids=BENIGN.keys())
def test_numbers_of_ordinary_work_find_nothing(registry: SecretRegistry, text: str) -> None:
    assert registry.scan(text).findings == ()
    assert registry.redact(text) == text


def test_short_runs_and_keys_are_not_read() -> None:
    assert _number_lists.views("1 2 3") == []  # fewer than MIN_NUMBERS numbers
    assert _number_lists.views("version 1.2.3.4.5.6.7") == []  # dotted: one word
    keyed = json.dumps({str(i): byte for i, byte in enumerate(b"hello!")})
    assert [view for view, _ in _number_lists.views(keyed)] == ["hello!"]  # keys dropped


def test_a_run_is_read_at_the_width_its_numbers_need() -> None:
    text = " ".join(str(word) for word in _words(b"hi-short", "<H"))
    readings = {view for view, _ in _number_lists.views(text)}
    assert readings == {"hi-short", "ihs-ohtr"}  # 16-bit words, little- and big-endian


ADVERSARIAL = {
    "one-digit numbers": "1 " * 100,
    "hex-looking words": "add bead cafe face " * 30,
    "keys alone": '"1": ' * 100,
    "numbers too long for any width": "123456789012345678901 " * 40,
    "dense separators": "1,,,,,,,,,,,,,,,,,,,,,,,2 " * 20,
}


@pytest.mark.slow
@pytest.mark.parametrize("unit", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_a_megabyte_of_hostile_numbers_is_scanned(registry: SecretRegistry, unit: str) -> None:
    text = (unit * (2**20 // len(unit) + 1))[: 2**20]
    # a reading that is not linear takes minutes here (the suite stalls)
    assert registry.scan(text).findings == ()
