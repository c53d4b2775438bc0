"""What a short pipeline of text filters prints, when its text is all in the command.

``$(echo LmVudg== | base64 -d)``, ``$(echo vne. | rev)``, ``$(echo .ENV | tr A-Z a-z)``,
``$(printf 2e656e76 | xxd -r -p)``: a name decoded, reversed or translated inside the command is
still a constant, and the reading follows it. The filters are ``echo``/``printf`` (the source),
``cat``, ``base64 -d``, ``base32 -d``, ``xxd -r -p``, ``rev``, ``tr`` (ranges, escapes and
``-d``: :mod:`.tr_sets`), and the line filter a listing goes through (``ls -a | grep env``):
``grep [-ivEF] PATTERN``; anything else (or a value the reading cannot know) gives ``None``.
Programs (``sed``, ``perl -p``, ``awk``) are worked out only over a text known exactly
(:mod:`.cut_filters`): a listing's text is a model of names, not what ``ls -l`` prints.

Where a filter cannot be worked out (``awk '/env/'``, ``sed -n 3p``, ``grep -E 'e.+v'``, a
program), what it gives a command that takes names (``xargs cat``, ``while read f``, ``cat
$(…)``) is read as :func:`loose_filter` says: every name it was given, and every credential-like
word of its own text (``sed 's/x/.env/'``). The names a listing prints that a filter keeps are
among those the listing printed: one name too many, never too few.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Final

from pytest_harness_audit.policy.sensitive import glob_candidates, is_credential_path
from pytest_harness_audit.policy.shell.nodes import Lit, Param, Sub
from pytest_harness_audit.policy.shell.tr_sets import tr_set

#: Most commands of a pipeline worked out, and most characters passed between them.
MAX_FILTERS: Final = 6
MAX_TEXT: Final = 4096

_REPEATS: Final = re.compile(r"[*+?{}()|\\\[\]]")


def run_filter(name: str, args: list[str], stdin: str | None, loose: bool = False) -> str | None:
    """What ``name args`` prints given ``stdin`` (``None``: not worked out); ``loose``: for a
    command that takes names, a filter not worked out gives :func:`loose_filter`'s names."""
    exact = _exact(name, args, stdin)
    return loose_filter(args, stdin) if exact is None and loose and stdin is not None else exact


def _exact(name: str, args: list[str], stdin: str | None) -> str | None:
    if stdin is not None and len(stdin) > (_MAX_LINES if name in _LINE_FILTERS else MAX_TEXT):
        return None
    if name == "cat" and not args:
        return stdin
    if stdin is None:
        return None
    handler = _FILTERS.get(name)
    return None if handler is None else handler(args, stdin)


def _decode(args: list[str], stdin: str, decoder: Callable[[bytes], bytes]) -> str | None:
    if not any(a in ("-d", "--decode", "-D") for a in args):
        return None
    try:
        return decoder("".join(stdin.split()).encode("ascii")).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        return None


def _openssl(args: list[str], stdin: str) -> str | None:
    """``openssl base64 -d``, ``openssl enc -base64 -d`` (``-a``)."""
    coded = args[:1] == ["base64"] or (args[:1] == ["enc"] and ("-a" in args or "-base64" in args))
    return _decode(args, stdin, base64.b64decode) if coded else None


def _xxd(args: list[str], stdin: str) -> str | None:
    if "-r" not in args or not ({"-p", "-ps", "-plain"} & set(args)):
        return None
    try:
        return bytes.fromhex("".join(stdin.split())).decode("utf-8")
    except (UnicodeError, ValueError):
        return None


def _rev(args: list[str], stdin: str) -> str | None:
    if args:
        return None
    return "\n".join(line[::-1] for line in stdin.split("\n"))


def _tr(args: list[str], stdin: str) -> str | None:
    if "--" in args[:2]:  # `tr -d -- -`: the sets follow
        args = [a for i, a in enumerate(args) if a != "--" or i != args.index("--")]
    if args[:1] == ["-d"] and len(args) == 2:
        deleted = tr_set(args[1])
        return None if deleted is None else stdin.translate({ord(c): None for c in deleted})
    if len(args) != 2 or args[0].startswith("-"):
        return None
    source, target = tr_set(args[0]), tr_set(args[1])
    if not source or not target:
        return None
    target = target + target[-1] * max(0, len(source) - len(target))
    return stdin.translate(str.maketrans(source, target[: len(source)]))


def _grep(args: list[str], stdin: str) -> str | None:
    """``grep [-i] [-v] [-E|-F] PATTERN`` of the lines (no file operand, no other option)."""
    options = [a for a in args if a.startswith("-") and len(a) > 1]
    operands = [a for a in args if a not in options]
    letters = "".join(o[1:] for o in options)
    if len(operands) != 1 or any(o.startswith("--") for o in options) or set(letters) - set("ivEF"):
        return None
    pattern = re.escape(operands[0]) if "F" in letters else operands[0]
    if "F" not in letters and _REPEATS.search(pattern):
        return None  # only patterns matched in linear time (`.`, `^`, `$`): no backtracking
    found = re.compile(pattern, re.I if "i" in letters else 0)
    keep = "v" not in letters
    return "".join(f"{line}\n" for line in stdin.splitlines() if bool(found.search(line)) == keep)


def _paste(args: list[str], stdin: str) -> str | None:
    """``paste -s [-d LIST]``: the lines joined by the delimiters in turn (a tab by default)."""
    serial, delimiters, index = False, "\t", 0
    while index < len(args):
        word = args[index]
        if word[:1] != "-" or word == "-" or set(word[1:].partition("d")[0]) - {"s"}:
            return None
        serial = serial or "s" in word.partition("d")[0]
        if "d" in word:
            value = word.partition("d")[2]
            if not value and index + 1 < len(args):
                index += 1
                value = args[index]
            delimiters = value.replace("\\t", "\t").replace("\\n", "\n").replace("\\0", "")
        index += 1
    if not serial:
        return None
    lines = stdin.rstrip("\n").split("\n")
    joined = lines[0] if lines else ""
    for position, line in enumerate(lines[1:]):
        joined += (delimiters[position % len(delimiters)] if delimiters else "") + line
    return joined + "\n"


def _xargs(args: list[str], stdin: str) -> str | None:
    """``xargs`` [``echo``] (the words on one line) and ``xargs -n1``/``-L1`` (one a line)."""
    words = stdin.split()
    one = [a for a in args if a in ("-n1", "-L1", "-n", "-L", "1")]
    rest = [a for a in args if a not in one]
    if rest not in ([], ["echo"]) or one not in ([], ["-n1"], ["-L1"], ["-n", "1"], ["-L", "1"]):
        return None
    return "".join(f"{word}\n" for word in words) if one else " ".join(words) + "\n"


def loose_filter(args: list[str], stdin: str) -> str:
    """The names a filter not worked out may print, for a command that takes names: those of
    ``stdin`` and the credential-like words of its arguments (a name of its own text)."""
    words = [w for a in args for w in _WORDS.findall(a) if is_credential_path(w)]
    text = stdin[:_MAX_LINES]
    return text + "".join(f"{word}\n" for word in words[:64])


def named_files(sub: Sub, variables: dict[str, str]) -> str | None:
    """The credential files a command substitution whose output is not known names in its own
    text, a line each (``$(realpath .env)``, ``$(sed 's/R.*/.env/' <<< README.md)``, ``$(awk
    'BEGIN{print ".env"}')``): the names it may print, as :func:`loose_filter` reads a filter's
    own words; ``None`` when it names none."""
    text = _sub_text(sub, variables, 0)
    words = [w for w in _WORDS.findall(text) if is_credential_path(w)]
    for glob in _GLOB_WORDS.findall(text)[:64]:  # `$(compgen -G '.e?v')`, `$(stat -c %n .e*)`
        words.extend(glob_candidates(glob))
    return "\n".join(dict.fromkeys(words[:64])) or None


def _sub_text(sub: Sub, variables: dict[str, str], depth: int) -> str:
    """The literal text of ``sub``'s words and redirection targets (variables by the values
    known, substitutions inside it likewise), a space between words."""
    if depth > MAX_FILTERS:
        return ""
    words = [w for c in sub.commands for w in [*c.words, *(r.target or [] for r in c.redirects)]]
    out: list[str] = []
    for word in words[:256]:
        for part in word:
            if isinstance(part, Lit):
                out.append(part.text)
            elif isinstance(part, Param):
                out.append(variables.get(part.name, ""))
            else:
                out.append(_sub_text(part, variables, depth + 1))
        out.append(" ")
    return "".join(out)


#: Filters that read their standard input when given no file: the options taking a value
#: (short letters, long names), and whether the first operand is their program or pattern.
_STDIN_FILTERS: Final[dict[str, tuple[str, bool]]] = {
    "head": ("nc", False), "tail": ("nc", False), "sort": ("kotST", False), "uniq": ("fsw", False),
    "shuf": ("noi", False), "tac": ("s", False), "rev": ("", False), "cut": ("bcdf", False),
    "grep": ("efmABCD", True), "egrep": ("efmABCD", True), "fgrep": ("efmABCD", True),
    "sed": ("ef", True), "awk": ("fvF", True), "gawk": ("fvF", True), "mawk": ("fvF", True),
    "base64": ("w", False), "base32": ("w", False), "xxd": ("cglso", False),
    "paste": ("d", False), "nl": ("bdfhilnsvw", False), "fold": ("w", False),
    "xargs": ("adEILnPs", False), "line": ("", False),
}  # fmt: skip
_STDIN_PATHS: Final = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def stdin_filter(name: str, args: list[str]) -> list[str] | None:
    """``args`` without a ``-``/``/dev/stdin`` operand when filter ``name`` reads only its
    standard input (``head -n1``, ``grep env``, ``sed -n 3p``); ``None`` when it reads a file
    (``head -1 README.md``) or is no such filter. ``tr`` reads nothing else."""
    if name == "tr" or (name == "dd" and not any(a.startswith("if=") for a in args)):
        return args
    if name in ("perl", "ruby") and any(a[:1] == "-" and a[1:2] in "np" for a in args):
        return args  # `perl -ne 'print if 4..4'`: a program over the lines of its input
    known = _STDIN_FILTERS.get(name)
    if known is None:
        return None
    valued = known[0]
    program = known[1] and not any(a[:2] in ("-e", "-f") for a in args)
    operands = 0
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word[:1] == "-" and word not in _STDIN_PATHS:
            letters = word[1:] if word[1:2] != "-" else ""
            for position, letter in enumerate(letters):
                if letter in valued:
                    index += position == len(letters) - 1  # its value is the next word
                    break
        elif word not in _STDIN_PATHS and not (word[:1] == "+" and word[1:].isdigit()):
            operands += 1
    if operands > int(program):
        return None
    return [a for a in args if a not in _STDIN_PATHS]


#: The words of a program's text that could be paths (``print ".env"`` → ``.env``).
_WORDS: Final = re.compile(r"/?[\w.~+@-]+(?:/[\w.~+@-]+)*")
#: A word holding a glob character (``.e?v``, ``~/.ssh/id_*``).
_GLOB_WORDS: Final = re.compile(r"[\w.~+@/*?\[\]-]*[*?\[][\w.~+@/*?\[\]-]*")
_LINE_FILTERS: Final = frozenset(
    {"grep", "egrep", "fgrep", "head", "tail", "sort", "uniq", "shuf", "tac"}
)
_MAX_LINES: Final = 64 * 1024
_FILTERS: Final[dict[str, Callable[[list[str], str], str | None]]] = {
    "grep": _grep,
    "egrep": lambda args, text: _grep(["-E", *args], text),
    "fgrep": lambda args, text: _grep(["-F", *args], text),
    "base64": lambda args, text: _decode(args, text, base64.b64decode),
    "base32": lambda args, text: _decode(args, text, base64.b32decode),
    "openssl": _openssl,
    "xxd": _xxd,
    "rev": _rev,
    "paste": _paste,
    "xargs": _xargs,
    "tr": _tr,
}

#: Filters that keep some of the lines they are given in an order the reading does not know (a
#: listing's order is the locale's): their output is :func:`loose_filter`'s, one line too many.
LINE_PICKERS: Final = frozenset({"head", "tail", "sort", "uniq", "shuf", "tac"})
#: Every filter :func:`run_filter` works out (``cat`` aside).
FILTER_NAMES: Final = frozenset(_FILTERS) | LINE_PICKERS

__all__ = [
    "FILTER_NAMES",
    "LINE_PICKERS",
    "MAX_FILTERS",
    "loose_filter",
    "run_filter",
    "stdin_filter",
]
