"""Records to scrub: known secrets in every form the inspector finds, in every record field.

:func:`cases` builds ``(name, fields)`` pairs, ``fields`` being what the gate scrubs before a
record is appended: ``(params, target, error_message, targets)``. ``scrub_expected.json`` holds,
for each case, the ``repr`` of the fields as the record-building code scrubbed them when the
file was written (one ``scan_output`` per field); ``test_scrub_record`` checks that scrubbing
still gives exactly those bytes.

    python -m tests.inspect.scrub_corpus      # rewrites scrub_expected.json from the current code
"""

from __future__ import annotations

import base64
import codecs
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"
HOOK = "whsec_test_7d1e9c3b5a2f8e4d"
PASSWORD = "hunter2-test"
WIDE = "pässwörd-ünïcode-4242"
LONG = "MIIE" + "".join(f"{n:04x}Qz" for n in range(40))
SECRETS = {"API_KEY": KEY, "WEBHOOK": HOOK, "DATABASE_PASSWORD": PASSWORD, "WIDE": WIDE}
SECRETS["PEM"] = LONG

EXPECTED = Path(__file__).with_name("scrub_expected.json")

Fields = tuple[Any, Any, Any, Any]


def _b64(data: bytes, shift: int = 0, *, urlsafe: bool = False, padded: bool = True) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    text = encode(b"ab"[:shift] + data + b"!").decode()
    return text if padded else text.rstrip("=")


def _shift(text: str, by: int) -> str:
    lower = "abcdefghijklmnopqrstuvwxyz"
    return text.translate(str.maketrans(lower, lower[by:] + lower[:by]))


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _xxd(data: bytes) -> str:
    lines = []
    for at in range(0, len(data), 16):
        row = data[at : at + 16]
        pairs = " ".join(row[i : i + 2].hex() for i in range(0, len(row), 2))
        shown = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        lines.append(f"{at:08x}: {pairs:<39}  {shown}")
    return "\n".join(lines) + "\n"


def _hexdump_c(data: bytes) -> str:
    lines = []
    for at in range(0, len(data), 16):
        row = data[at : at + 16]
        left = " ".join(f"{b:02x}" for b in row[:8])
        right = " ".join(f"{b:02x}" for b in row[8:])
        shown = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        lines.append(f"{at:08x}  {left:<23}  {right:<23}  |{shown}|")
    return "\n".join(lines) + "\n"


def _od_x(data: bytes) -> str:
    padded = data + b"\0" * (len(data) % 2)
    lines = []
    for at in range(0, len(padded), 16):
        row = padded[at : at + 16]
        words = " ".join(f"{row[i + 1]:02x}{row[i]:02x}" for i in range(0, len(row), 2))
        lines.append(f"{at:07o} {words}")
    return "\n".join(lines) + "\n"


def _od_c(data: bytes) -> str:
    names = {10: "\\n", 9: "\\t", 13: "\\r", 0: "\\0"}
    lines = []
    for at in range(0, len(data), 16):
        row = data[at : at + 16]
        fields = "".join(
            f"{names[b]:>4}" if b in names else (f"{chr(b):>4}" if 32 <= b < 127 else f" {b:03o}")
            for b in row
        )
        lines.append(f"{at:07o}{fields}")
    return "\n".join(lines) + "\n"


def forms(value: str) -> dict[str, str]:
    """The texts a value can be written as, one per form the inspector knows (and a few it
    does not, which must be left alone just the same)."""
    data = value.encode()
    body = value.split("-", 2)[-1] if value.startswith("sk-") else value.split("_", 2)[-1]
    found: dict[str, str] = {
        "plain": value,
        "in a sentence": f"the key is {value}.",
        "reversed": value[::-1],
        "upper": value.upper(),
        "spaced": " ".join(value),
        "wrapped": "\n".join(value[i : i + 5] for i in range(0, len(value), 5)),
        "hex": data.hex(),
        "hex upper": data.hex().upper(),
        "base64": _b64(data),
        "base64 shift 1": _b64(data, 1),
        "base64 shift 2": _b64(data, 2),
        "base64 unpadded": _b64(data, 2, padded=False),
        "base64url": _b64(data, 1, urlsafe=True),
        "base64 wrapped": "\n".join(_b64(data, 1)[i : i + 8] for i in range(0, 60, 8)),
        "percent all": "".join(f"%{b:02X}" for b in data),
        "quote": "q=" + quote(value, safe=""),
        "quote plus": quote_plus(f"a {value} b"),
        "rot13": codecs.encode(value, "rot13"),
        "shift 1": _shift(value.lower(), 1),
        "base32": base64.b32encode(data).decode(),
        "base64 twice": base64.b64encode(base64.b64encode(data)).decode(),
        "base64 reversed": base64.b64encode(value[::-1].encode()).decode(),
        "hex backwards": data.hex()[::-1],
        "utf16-le hex": value.encode("utf-16-le").hex(),
        "utf16-le base64": base64.b64encode(value.encode("utf-16-le")).decode(),
        "utf16-be base64": base64.b64encode(value.encode("utf-16-be")).decode(),
        "underscores": value.replace("-", "_"),
        "dots": value.replace("-", ".").replace("_", "."),
        "dash each": "-".join(value),
        "line each": "\n".join(value),
        "decimal": ",".join(str(b) for b in data),
        "x escapes": "".join(f"\\x{b:02x}" for b in data),
        "u escapes": "".join(f"\\u{ord(c):04x}" for c in value),
        "html decimal": "".join(f"&#{b};" for b in data),
        "html hex": "".join(f"&#x{b:x};" for b in data),
        "octal": "".join(f"\\{b:03o}" for b in data),
        "repr utf16": repr(f"A={value}".encode("utf-16")),
        "raw utf16": f"x={value}".encode("utf-16-le").decode("latin-1"),
        "json fullwidth": json.dumps(_fullwidth(value)),
        "body": body,
        "body reversed": body[::-1],
        "body hex upper": body.encode().hex().upper(),
        "fullwidth": _fullwidth(value),
        "zero-width": "\u200b".join(value),
        "soft hyphens": "\u00ad".join(value),
        "cyrillic": value.replace("a", "\u0430").replace("e", "\u0435"),
        "combining": "\u0336".join(value),
        "minus sign": value.replace("-", "\u2212"),
        "xxd": _xxd(f"# settings\nAPI={value}\n".encode()),
        "hexdump -C": _hexdump_c(f"# settings\nAPI={value}\n".encode()),
        "od -x": _od_x(f"# settings\nAPI={value}\n".encode()),
        "od -c": _od_c(f"# settings\nAPI={value}\n".encode()),
        "first half": value[: len(value) // 2],
        "last part": value[-10:],
    }
    return found


BENIGN = [
    "",
    "README.md",
    "file_path",
    "app/__init__.py",
    "tests/test_orders.py",
    "pyproject.toml",
    "echo 100% done; printf '%s' x; curl 'https://x.example/?q=a%20b'",
    "plain words \\x41\\x42 and \\u00e9 and &#233; nothing secret",
    "a\x00b\x00c\x00 bytes with NULs",
    "\\777 \\xZZ &#99999999; \\ud800 malformed escapes",
    "ﷺ ﬃ ¼ fullwidth ｓｋ－ｔｅｓｔ and nothing more",
    "sha256 09098ef372a1623e882b5d05d47a0e206df3e0dab3d44c322d18d7c0a6ace93a",
    "the hunter2 test suite",
    _xxd(b"ordinary bytes of a build artefact\n" * 3),
]


def _records(text: str, other: str) -> Iterator[tuple[str, Fields]]:
    yield "read", ({"file_path": text}, text, None, (text,))
    yield (
        "command",
        (
            {"command": f"echo {text} | base64", "env": {"X": text, "Y": [other, 7, None]}},
            f"echo {text} | base64",
            f"Bash raised RuntimeError: {text}",
            (text, other, text),
        ),
    )
    yield "key", ({text: "value", "n": 1.5, "ok": True}, None, None, ())
    yield (
        "bytes",
        (
            {"data": text.encode("utf-8", "surrogatepass"), "t": (text, other)},
            other,
            text,
            (other,),
        ),
    )


def cases() -> list[tuple[str, Fields]]:
    """Every ``(name, fields)`` of the corpus, in a fixed order."""
    found: list[tuple[str, Fields]] = []
    for label, value in SECRETS.items():
        for form, text in forms(value).items():
            for where, fields in _records(text, "README.md"):
                found.append((f"{label}/{form}/{where}", fields))
    for index, text in enumerate(BENIGN):
        for where, fields in _records(text, "README.md"):
            found.append((f"benign {index}/{where}", fields))
    nested: Any = KEY
    for depth in range(70):  # deeper than the scan goes: the innermost leaf stays unscanned
        nested = {"d": [nested, f"{depth}"]}
    found.append(("deep", (nested, KEY, None, (KEY,))))
    found.append(("several", ({"a": f"{KEY} and {HOOK}", "b": [PASSWORD, KEY]}, HOOK, KEY, ())))
    found.append(("all forms at once", (list(forms(KEY).values()), KEY, None, (KEY, HOOK))))
    return found


def write_expected() -> None:
    """Rewrite :data:`EXPECTED` with the current code's scrubbing (one field at a time)."""
    import tempfile

    from pytest_harness_audit.gate.inspection import SessionInspection
    from pytest_harness_audit.inspect import Inspector
    from pytest_harness_audit.inspect.secrets import SecretRegistry
    from pytest_harness_audit.policy import Policy

    registry = SecretRegistry()
    for label, value in SECRETS.items():
        registry.add(value, label)
    with tempfile.TemporaryDirectory() as root:
        inspector = Inspector(root, secrets=registry, learn=False, live=False)
        inspection = SessionInspection(inspector, Policy.preset("safety"))
        expected = {}
        for name, (params, target, error, targets) in cases():
            scrub = inspection.scrub
            fields = (scrub(params), scrub(target), scrub(error), tuple(scrub(list(targets))))
            expected[name] = repr(fields)
    EXPECTED.write_text(json.dumps(expected, indent=0, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    write_expected()
