"""The fenced code blocks of the documentation (README.md and docs/*.md), as data for
tests/test_readme.py.

A block is the text between a fence line (three backticks and a language) and the closing
fence, at any indentation (blocks inside list items keep their indentation out of the text).
An HTML comment ``<!-- readme: skip (reason) -->`` on the nearest non-blank line above a fence
marks a block that cannot run in a test; the reason is the skip message.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: Every page whose blocks are tested: the README, then the reference pages.
DOC_PAGES = (README, *sorted((ROOT / "docs").glob("*.md")))

_OPEN = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)\s*$")
_CLOSE = re.compile(r"^\s*```\s*$")
_SKIP = re.compile(r"^\s*<!--\s*readme:\s*skip\s*\((?P<reason>.+)\)\s*-->\s*$")
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
_HEX = re.compile(r"\b[0-9a-f]{8,64}\b")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a documentation page."""

    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    skip: str | None = None
    page: str = "README.md"

    @property
    def id(self) -> str:
        """``<page>-L<line>-<lang>-<first words>``: names the block in a test id."""
        first = next((ln for ln in self.text.splitlines() if ln.strip()), "")
        words = re.sub(r"[^\w.-]+", "-", first.strip()).strip("-")[:40]
        page = Path(self.page).stem
        return f"{page}-L{self.line}-{self.lang or 'plain'}-{words}"

    @property
    def where(self) -> str:
        """``docs/proxy.md:12``: the page and line, for messages."""
        return f"{self.page}:{self.line}"


def extract_blocks(text: str, page: str = "README.md") -> list[Block]:
    """Every fenced block of ``text`` in order; an unclosed fence is an error."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opened = _OPEN.match(lines[i])
        if not opened:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not _CLOSE.match(lines[end]):
            end += 1
        if end == len(lines):
            raise ValueError(f"{page} line {i + 1}: the code fence is never closed")
        body = textwrap.dedent("\n".join(lines[i + 1 : end]))
        skip = None
        above = i - 1
        while above >= 0 and not lines[above].strip():
            above -= 1
        if above >= 0 and (marker := _SKIP.match(lines[above])):
            skip = marker.group("reason")
        blocks.append(Block(i + 1, opened.group("lang"), body + "\n", skip, page))
        i = end + 1
    return blocks


def readme_blocks() -> list[Block]:
    """The fenced blocks of the project's documentation: README.md, then docs/*.md."""
    return [
        block
        for path in DOC_PAGES
        for block in extract_blocks(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]


def find_block(lang: str, contains: str) -> Block:
    """The one documentation block of ``lang`` whose text contains ``contains``."""
    found = [b for b in readme_blocks() if b.lang == lang and contains in b.text]
    if len(found) != 1:
        raise LookupError(f"{len(found)} {lang} blocks contain {contains!r}, expected 1")
    return found[0]


def console_steps(text: str) -> list[tuple[str, list[str]]]:
    """A console transcript as ``(command, expected output lines)`` pairs (``$ `` prompts)."""
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def normalise(line: str) -> str:
    """A line with timestamps and hex ids/hashes replaced, for comparing shapes."""
    return _HEX.sub("<hex>", _TIMESTAMP.sub("<ts>", line))


def line_shape(line: str) -> tuple[str, ...]:
    """What must agree between a documented and an actual output line: its first word (its
    first two when the first is a timestamp)."""
    words = normalise(line).split()
    return tuple(words[:2]) if words[:1] == ["<ts>"] else tuple(words[:1])


def assert_same_shape(expected: list[str], actual: list[str]) -> None:
    """The actual output has the documented lines' shape: the same number of lines and the
    same first words. A documented line ``…`` stands for any number of further lines."""
    open_ended = any(line.strip() == "…" for line in expected)
    shown = [line for line in expected if line.strip() != "…"]
    actual = [line for line in actual if line.strip()]
    if open_ended:
        assert len(actual) >= len(shown), (shown, actual)
        shown_shapes = [line_shape(line) for line in shown]
        actual_shapes = [line_shape(line) for line in actual]
        missing = [s for s in shown_shapes if s not in actual_shapes]
        assert not missing, f"documented lines {missing} not in the output:\n" + "\n".join(actual)
    else:
        assert [line_shape(x) for x in actual] == [line_shape(x) for x in shown], (
            "documented:\n" + "\n".join(shown) + "\nactual:\n" + "\n".join(actual)
        )
