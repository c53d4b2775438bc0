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


MODULES = {
    name: "".join(
        f"def {name[0]}_{n}(value):\n    total = value + {n}\n    return total * {n}\n\n"
        for n in range(6)
    )
    for name in ("c.py", "d.py")
}


def _module_copies(root: str, requests: list[str]) -> list[bytes | None]:
    return [
        MODULES[name.partition(":")[2]].encode() if name.startswith("HEAD:") else None
        for name in requests
    ]


_NATO = ("kilo", "juliet", "india", "hotel", "golf", "foxtrot", "echo", "delta")


def _reversed(text: str) -> str:
    return "".join(reversed(text.splitlines(keepends=True)))


def _sorted_words(text: str) -> str:
    return "\n".join(sorted(set(text.split()))) + "\n"


def _sorted_lines(text: str) -> str:
    return "".join(sorted(text.splitlines(keepends=True)))


def test_texts_made_of_their_own_lines_out_of_order_are_scrambled(tmp_path: Path) -> None:
    for made in (_reversed, _sorted_words, _sorted_lines):
        _write(tmp_path, {name: made(text) for name, text in MODULES.items()})
        assert scrambled(str(tmp_path), sorted(MODULES), _module_copies) == set(MODULES)


def test_functions_moved_and_flat_lists_sorted_are_not(tmp_path: Path) -> None:
    def moved(text: str) -> str:
        blocks = text.split("\n\n")
        return "\n\n".join(blocks[3:] + blocks[:3])

    _write(tmp_path, {name: moved(text) for name, text in MODULES.items()})
    assert scrambled(str(tmp_path), sorted(MODULES), _module_copies) == set()
    words = [f"{word}_item" for word in _NATO]
    listed = {"c.py": words, "d.py": words[4:] + words[:4]}

    def list_copies(root: str, requests: list[str]) -> list[bytes | None]:
        return [
            "\n".join(listed[name.partition(":")[2]]).encode() + b"\n"
            if name.startswith("HEAD:")
            else None
            for name in requests
        ]

    _write(tmp_path, {name: "\n".join(sorted(words)) + "\n" for name in listed})
    assert scrambled(str(tmp_path), sorted(listed), list_copies) == set()
