"""The relay of an upstream process's stderr (:mod:`~pytest_harness_audit.doors.proxy.
upstream_stderr`): line by line through the screen, bounded, fail closed."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import anyio

from pytest_harness_audit.doors.proxy.upstream_stderr import MAX_LINE, MAX_RECORDED, StderrRelay


def _relayed(tmp_path: Path, chunks: list[str], screen: object) -> str:
    """What the relay writes for ``chunks`` written to the child's end, then closed."""
    out = tmp_path / "stderr.txt"

    async def main() -> None:
        with out.open("w", encoding="utf-8") as destination:
            async with AsyncExitStack() as stack:
                relay = StderrRelay("up", destination, screen)  # type: ignore[arg-type]
                child = await relay.open(stack)
                for chunk in chunks:
                    child.write(chunk)
                    child.flush()
                child.close()

    anyio.run(main)
    return out.read_text(encoding="utf-8")


async def _same(server: str, line: str, record: bool) -> str:
    return line


def test_lines_pass_as_they_are_and_a_last_unfinished_one_too(tmp_path: Path) -> None:
    text = _relayed(tmp_path, ["one\ntw", "o\n", "thr", "ee"], _same)
    assert text == "one\ntwo\nthree"


def test_a_line_with_no_end_is_cut_at_a_space_within_the_limit(tmp_path: Path) -> None:
    seen: list[str] = []

    async def screen(server: str, line: str, record: bool) -> str:
        seen.append(line)
        return line

    words = "word " * (MAX_LINE // 5) + "x" * (MAX_LINE + 10)
    assert _relayed(tmp_path, [words], screen) == words  # nothing lost, nothing added
    assert all(len(line) <= MAX_LINE for line in seen) and len(seen) >= 3
    assert seen[0].endswith("word")  # cut before a space, not inside a word


def test_a_line_the_screen_fails_on_is_withheld(tmp_path: Path) -> None:
    async def broken(server: str, line: str, record: bool) -> str:
        if "token" in line:
            raise RuntimeError("scan failed")
        return line

    text = _relayed(tmp_path, ["fine\n", "token abc\n", "after\n"], broken)
    assert "token abc" not in text and "withheld" in text
    assert text.startswith("fine\n") and text.endswith("after\n")


def test_only_so_many_lines_are_recorded(tmp_path: Path) -> None:
    asked: list[bool] = []

    async def redacting(server: str, line: str, record: bool) -> str:
        asked.append(record)
        return "[secret:x]"

    text = _relayed(tmp_path, ["key\n"] * (MAX_RECORDED + 3), redacting)
    assert text == "[secret:x]\n" * (MAX_RECORDED + 3)
    assert asked == [True] * MAX_RECORDED + [False] * 3
