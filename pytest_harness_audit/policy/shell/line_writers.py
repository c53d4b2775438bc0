"""Commands that write the lines they read to a file they are given, rather than print them:
``sort -o FILE``, ``shuf -o FILE``, ``uniq IN OUT`` and ``dd of=FILE``. Each writes ``FILE`` (a
write like ``> FILE``), and the file holds the lines of their input files, or of their standard
input when they are given none (``ls -a | sort -o l; xargs cat < l``: :mod:`.name_streams`).
``patch FILE P`` rewrites ``FILE`` (``-o OUT``: writes ``OUT``; ``-r REJ``: its rejects), with a
text the reading does not know (``patch .git/hooks/pre-commit p.diff`` writes the hook).
"""

from __future__ import annotations

import posixpath
from typing import Final, NamedTuple

#: The commands read here besides ``dd``.
LINE_WRITERS: Final = frozenset({"sort", "shuf", "uniq", "patch"})
#: Short options taking a value, by command (``-o`` among them: the output file).
_VALUED: Final = {"sort": "kotST", "shuf": "noi", "uniq": "fsw", "patch": "BDdFgiopruVYz"}
_LONG_VALUED: Final = frozenset(
    {"--key", "--field-separator", "--buffer-size", "--temporary-directory", "--parallel",
     "--batch-size", "--files0-from", "--compress-program", "--random-source", "--head-count",
     "--input-range", "--skip-fields", "--skip-chars", "--check-chars", "--sort", "--strip",
     "--input", "--directory", "--prefix", "--suffix", "--ifdef", "--fuzz", "--get",
     "--version-control", "--basename-prefix", "--quoting-style"}
)  # fmt: skip
_STDIN: Final = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


class LineWrite(NamedTuple):
    """The files a line writer writes, and those whose lines it writes (``"-"``: its standard
    input)."""

    outputs: list[str]
    inputs: list[str]


def line_write(name: str, args: list[str]) -> LineWrite:
    """What ``sort``/``shuf``/``uniq``/``dd``/``patch`` ``args`` write, and from which files
    (``patch``: none, the text it writes is not known)."""
    if name == "dd":
        outputs = [w[3:] for w in args if w.startswith("of=")]
        inputs = [w[3:] for w in args if w.startswith("if=")]
        return LineWrite(outputs[-1:], _stdin(inputs[-1:]))
    valued = _VALUED.get(name, "")
    outputs, rejects = list[str](), list[str]()
    folder = ""
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            operands.extend(args[index:])
            break
        if word.startswith("--"):
            option, equals, value = word.partition("=")
            if option in ("--output", "--reject-file"):
                if not equals and index < len(args):
                    value = args[index]
                    index += 1
                (outputs if option == "--output" else rejects).append(value)
            elif option in _LONG_VALUED and not equals:
                value = args[index] if index < len(args) else ""
                index += 1
            folder = value if option == "--directory" else folder
            continue
        if word == "-" or not word.startswith("-"):
            operands.append(word)
            continue
        if name == "shuf" and word == "-e":  # `shuf -e WORDS`: the words are text
            return LineWrite(outputs, [])
        for position in range(1, len(word)):
            letter = word[position]
            if letter in valued:
                value = word[position + 1 :]
                if not value and index < len(args):
                    value = args[index]
                    index += 1
                if letter == "o":
                    outputs.append(value)
                elif name == "patch" and letter in "dr":
                    folder = value if letter == "d" else folder
                    rejects += [value] if letter == "r" else []
                break
    if name == "uniq":  # `uniq [IN [OUT]]`
        return LineWrite(operands[1:2], _stdin(operands[:1]))
    if name == "patch":  # `patch [FILE [PATCH]]`: FILE rewritten (`-o OUT`: OUT), text not known
        written = [*(outputs or operands[:1]), *rejects]
        written = [posixpath.join(folder, path) for path in written if path != "-"]  # (`-d DIR`)
        return LineWrite([] if "--dry-run" in args else written, [])
    return LineWrite(outputs[-1:], _stdin(operands))


def _stdin(inputs: list[str]) -> list[str]:
    """The inputs, ``"-"`` for the standard input (when none is given too)."""
    return ["-" if path in _STDIN else path for path in inputs] or ["-"]


__all__ = ["LINE_WRITERS", "LineWrite", "line_write"]
