"""The ``[[ TEXT =~ RE ]]`` test, read for what it sets: ``BASH_REMATCH``
(:func:`~.builtins.builtin`).

The parser skips a ``[[ … ]]`` test; one that matches a regular expression becomes a command
``[[ TEXT =~ RE ]]`` of its words instead, so that ``[[ .env =~ .* ]]; cat
"${BASH_REMATCH[0]}"`` reads ``.env``. A test whose words cannot be parsed as a command (a
regular expression with ``|`` or parentheses unquoted) is read as its plain words when it has
no quote or expansion, else stays skipped: ``BASH_REMATCH`` is then not known.

What a test runs is read whatever it tests: the command substitutions in its words
(``[[ $(cat .env) == *K* ]]``, ``[[ "$(<.env)" =~ sk-(.*) ]]``, ``(( $(wc -c < f) > 3 ))``) are
commands of the script, as they are in any other word; so are those bash runs when it evaluates
a quoted subscript (``[[ -v 'a[$(cat .env)]' ]]``, :mod:`.subscript_code`).

``((`` at the start of a command opens an arithmetic command when its parentheses close with
``))`` (:func:`arithmetic_test`), as bash decides: ``(( $(wc -l < f) > 3 ))`` compares (its
``<``/``>`` are no redirections), ``((i++))`` sets ``i``; ``((cd app && ls) )`` is a subshell
in a subshell. The command is ``((`` and the words of its text, its values expanded (a value
not known in it leaves what it sets unknown: :func:`~.builtins.builtin`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.loops import _Parser
from pytest_harness_audit.policy.shell.nodes import (
    MAX_DEPTH,
    Budget,
    Command,
    Lit,
    Unreadable,
    Word,
)
from pytest_harness_audit.policy.shell.subscript_code import subscript_code

_TEST_END: Final = re.compile(r"(?<=[ \t\n])\]\](?=[ \t\n;&|)]|$)")
_SPECIAL: Final = re.compile(r"[$`'\"\\]")
#: What separates a test's words (its operators): no part of a word.
_BETWEEN: Final = frozenset(" \t\n<>()!&|;")
_PROCESS: Final = ("<(", ">(")
#: The end of a quoted text from just inside its opening quote.
_QUOTE_END: Final = {"'": re.compile(r"'"), '"': re.compile(r'(?:[^"\\]|\\.)*"', re.S)}


class _WordParser(_Parser, Protocol):
    def word_parts(self, *, quoted: bool = False, stop_at_braces: bool = False) -> Word:
        """Read the word at :attr:`pos` into parts (its substitutions join :attr:`commands`)."""
        ...


def skip_test(
    parser: _Parser, opener: str, make: Callable[[str, Budget, int], _WordParser]
) -> None:
    """Move the parser past a ``[[ … ]]`` or ``(( … ))`` test (a regular expression match is
    kept: :func:`regex_test`)."""
    closer = "]]" if opener == "[[" else "))"
    if opener == "[[":  # the word `]]`, not one inside a bracket (`=~ [[:alpha:]]`)
        found = _TEST_END.search(parser.text, parser.pos)
        end = found.start() if found is not None else parser.text.find(closer, parser.pos)
    else:
        end = parser.text.find(closer, parser.pos)
    if end < 0:
        raise Unreadable(f"missing {closer!r}")
    body = parser.text[parser.pos : end]
    if opener != "[[" or not regex_test(parser, body, make):
        test_substitutions(parser, body, make)
    parser.pos = end + 2


def test_substitutions(
    parser: _Parser, body: str, make: Callable[[str, Budget, int], _WordParser]
) -> None:
    """Add the commands of the substitutions in the words of a test's ``body`` to the
    parser's (module doc)."""
    if "$" not in body and "`" not in body and not any(p in body for p in _PROCESS):
        return
    inner = make(body, parser.budget, parser.depth + 1)
    while inner.pos < len(body):
        start = inner.pos
        if body[start] in _BETWEEN and not body.startswith(_PROCESS, start):
            inner.pos += 1
            continue
        inner.word_parts()
        inner.pos = max(inner.pos, start + 1)
    for code in subscript_code([body]):  # `[[ -v 'a[$(…)]' ]]`: bash runs the quoted one too
        try:
            quoted = make(code, parser.budget, parser.depth + 1)
            quoted.parse()
        except Unreadable:
            continue
        inner.commands.extend(quoted.commands)
    for command in inner.commands:
        command.in_substitution = True
    parser.commands.extend(inner.commands)


def arithmetic_end(text: str, start: int) -> int | None:
    """Where the ``))`` closing an arithmetic command whose text starts at ``start`` (after
    its ``((``) is; ``None`` when a ``)`` alone closes it first (a subshell in a subshell)."""
    depth, pos, size = 0, start, len(text)
    while pos < size:
        char = text[pos]
        if char == "\\":
            pos += 2
            continue
        if char in "'\"":  # a quoted `)` closes nothing
            close = _QUOTE_END[char].search(text, pos + 1)
            if close is None:
                return None
            pos = close.end()
            continue
        if char == "(":
            depth += 1
            if depth > MAX_DEPTH:  # as deep as no command the reading follows
                raise Unreadable("nested too deep")
        elif char == ")":
            if depth == 0:
                return pos if text.startswith("))", pos) else None
            depth -= 1
        pos += 1
    return None


def arithmetic_test(
    parser: _Parser, current: Command, make: Callable[[str, Budget, int], _WordParser]
) -> bool:
    """Read an arithmetic command ``(( … ))`` into ``current`` when the parser, just past a
    ``(`` at the start of a command, is at a second ``(`` that opens one (module doc);
    whether it did."""
    text, pos = parser.text, parser.pos
    if current.words or current.redirects or not text.startswith("(", pos):
        return False
    end = arithmetic_end(text, pos + 1)
    if end is None:
        return False
    body = text[pos + 1 : end]
    test_substitutions(parser, body, make)
    current.words = [[Lit("((", True)], *(_arithmetic_word(parser, w, make) for w in body.split())]
    parser.pos = end + 2
    return True


def _arithmetic_word(
    parser: _Parser, word: str, make: Callable[[str, Budget, int], _WordParser]
) -> Word:
    """A word of an arithmetic command: its ``$``-values as in double quotes (no splitting, no
    glob: ``$n*2``), the rest as written (:func:`test_substitutions` reads what it runs)."""
    if "$" not in word and "`" not in word:
        return [Lit(word, True)]
    try:
        inner = make(word, parser.budget, parser.depth + 1)
        parts = inner.word_parts(quoted=True)
    except Unreadable:
        return [Lit("$", True)]  # (a value not known)
    return parts if inner.pos == len(word) else [Lit("$", True)]


def regex_test(parser: _Parser, body: str, make: Callable[[str, Budget, int], _Parser]) -> bool:
    """Add the command of the test ``[[ body ]]`` to the parser's when it matches a regular
    expression (``make`` builds a parser for its words); whether its substitutions were read
    with it."""
    if "=~" not in body:
        return False
    try:
        inner = make(body, parser.budget, parser.depth + 1)
        inner.parse()
    except Unreadable:
        words = body.split()
        if len(words) == 3 and words[1] == "=~" and not _SPECIAL.search(body):
            test: list[Word] = [[Lit(word, True)] for word in ["[[", *words, "]]"]]
            parser.commands.append(Command(words=test))  # `[[ x =~ ^(a|b)$ ]]`: plain words
        return False
    tests = [c for c in inner.commands if not c.in_substitution]
    if len(tests) != 1 or tests[0].redirects:
        return False
    parser.commands.extend(c for c in inner.commands if c.in_substitution)
    tests[0].words = [[Lit("[[", False)], *tests[0].words, [Lit("]]", False)]]
    parser.commands.append(tests[0])
    return True


__all__ = ["arithmetic_end", "arithmetic_test", "regex_test", "skip_test", "test_substitutions"]
