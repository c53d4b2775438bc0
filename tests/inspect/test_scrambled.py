"""Tracked text files overwritten with text sharing no word with git's copy (scrambled)."""

from __future__ import annotations

import codecs
from pathlib import Path

from pytest_harness_audit.inspect.scrambled import scrambled

CODE = {
    "a.py": (
        "import os\n\ndef handle(request):\n    value = request.get('price')\n"
        "    return value * 2\n"
    ),
    "b.py": (
        "from a import handle\n\nclass Service:\n    def quote(self, request):\n"
        "        return handle(request)\n"
    ),
}


def _copies(root: str, requests: list[str]) -> list[bytes | None]:
    return [
        CODE[name.partition(":")[2]].encode() if name.startswith("HEAD:") else None
        for name in requests
    ]


def _write(tmp_path: Path, texts: dict[str, str]) -> None:
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")


def test_junk_shifted_and_encoded_texts_are_scrambled(tmp_path: Path) -> None:
    for made in (
        lambda t: "x\n",
        lambda t: codecs.encode(t, "rot13"),
        lambda t: "U2FsdGVkX1+9f8Qk3p0aVbQe1Zr0m7yT2w==\n",
    ):
        _write(tmp_path, {name: made(text) for name, text in CODE.items()})
        assert scrambled(str(tmp_path), sorted(CODE), _copies) == set(CODE)


def test_edits_and_a_single_rewrite_are_not(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {name: '"""Doc."""\n' + text.replace("return", "return  ") for name, text in CODE.items()},
    )
    assert scrambled(str(tmp_path), sorted(CODE), _copies) == set()
    _write(tmp_path, {"a.py": "x\n", "b.py": CODE["b.py"] + "# more\n"})
    assert scrambled(str(tmp_path), sorted(CODE), _copies) == set()  # one file: an edit
