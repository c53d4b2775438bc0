"""Files a command reads through an option's value while its operands are names or nothing.

``date``, ``du``, ``find`` and ``tree`` act on names (their operands are no reads), yet an
option of theirs reads a file and prints what it holds: ``date -f .env`` shows each line of
``.env`` as an invalid date, ``du --files0-from=.env`` and ``find -files0-from .env`` show its
text as a file not found, ``du -X .env`` takes its lines as patterns, ``tree --fromfile .env``
prints its lines as a listing. The file such an option names is read, as ``cat`` reads it;
so is ``grep -f F``'s (its patterns) and ``sed -f F``'s (its script).
(``xargs -a``/``parallel -a``: :mod:`.xargs`.)
"""

from __future__ import annotations

from typing import Final, NamedTuple

from pytest_harness_audit.policy.shell.context import Record


class _Options(NamedTuple):
    """A command's options that read the file they name, and its other options with a value
    (a short one's value may be attached: ``-f.env``, ``-uf.env``)."""

    reading: frozenset[str]
    valued: frozenset[str]


_DU_VALUED: Final = frozenset(
    {"-B", "--block-size", "-d", "--max-depth", "-t", "--threshold", "--time", "--time-style",
     "--exclude"}
)  # fmt: skip
_COMMANDS: Final = {
    "date": _Options(
        frozenset({"-f", "--file"}), frozenset({"-d", "--date", "-r", "--reference", "-s", "--set"})
    ),
    "du": _Options(frozenset({"--files0-from", "-X", "--exclude-from"}), _DU_VALUED),
    "find": _Options(frozenset({"-files0-from"}), frozenset()),
    "gfind": _Options(frozenset({"-files0-from"}), frozenset()),
}
#: ``grep -f F`` reads its patterns from ``F``, ``sed -f F`` its script: reads besides the
#: operands :func:`~.tools.search` reads.
_PATTERNS: Final = _Options(
    frozenset({"-f", "--file"}),
    frozenset({"-e", "--regexp", "--expression", "-m", "--max-count", "-A", "-B", "-C", "-d", "-D",
               "-l", "--line-length", "-g", "--glob", "-t", "--type", "-T", "--type-not"}),
)  # fmt: skip
for _name in ("grep", "egrep", "fgrep", "rg", "sed", "gsed"):
    _COMMANDS[_name] = _PATTERNS
#: Every name read here (the cheap test before any parsing).
NAMES: Final = frozenset(_COMMANDS) | {"tree"}


def option_reads(name: str, args: list[str], record: Record) -> None:
    """Record the files ``name args`` reads through its options (module doc)."""
    if name == "tree":
        if any(word == "--fromfile" for word in args):  # its operands are listings to print
            record.reads.extend(word for word in args if word[:1] != "-")
        return
    options = _COMMANDS.get(name)
    if options is not None:
        record.reads.extend(option_files(args, options.reading, options.valued))


def option_files(args: list[str], reading: frozenset[str], valued: frozenset[str]) -> list[str]:
    """The values of the ``reading`` options in ``args`` (``-f F``, ``-fF``, ``--file=F``,
    ``--file F``; a short one after other flags: ``-uf F``); ``valued``: the other options
    taking a value, whose value is no option."""
    found: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            break
        if word[:1] != "-" or word == "-":
            continue
        option, equals, value = word.partition("=")
        if option in reading or option in valued:
            if equals and word.startswith("--"):
                if option in reading:
                    found.append(value)
                continue
            if word in reading or word in valued:
                if index < len(args) and word in reading:
                    found.append(args[index])
                index += 1
                continue
        if word.startswith("--") or len(word) < 3:
            continue
        for at, letter in enumerate(word[1:], start=2):  # a cluster: `-uf F`, `-f.env`
            short = "-" + letter
            if short in reading or short in valued:
                attached = word[at:]
                if short in reading:
                    found.append(attached or (args[index] if index < len(args) else ""))
                if not attached:
                    index += 1
                break
    return [path for path in found if path]


__all__ = ["NAMES", "option_files", "option_reads"]
