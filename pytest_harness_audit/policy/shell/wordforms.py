"""Word forms the parser (:mod:`.syntax`) hands on: an array's elements, the text of an
arithmetic expression or a subscript, a literal with an extended glob.

* ``a=([0]=x [k]=.env)``: the elements as one value, their subscripts as its keys
  (:mod:`.arrays`).
* ``$(( $(cat .env >&2) ))``, ``${a[$(…)]}``, ``${v:$(…)}``: the shell evaluates the text, so
  the substitutions in it run.
* ``cat .@(env)``: an extended glob (:mod:`.extglob`), not a word and a subshell.
* ``${x:-word}``, ``${a[0]-word}``: the word of a parameter's operator.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.arrays import subscripted
from pytest_harness_audit.policy.shell.extglob import OPENERS, extglob
from pytest_harness_audit.policy.shell.nodes import (
    KEY_MARK,
    LIST_MARK,
    Budget,
    Command,
    Lit,
    Param,
    Word,
    plain_text,
)

_ARRAY: Final = re.compile(r"[A-Za-z_]\w*\+?=")


class Parsing(Protocol):
    """What these forms need of a parser (:class:`~.syntax.Parser`)."""

    text: str
    pos: int
    budget: Budget
    depth: int
    commands: list[Command]

    def parse(self, closer: str | None = None) -> None:
        """Read commands until the end (or an unbalanced ``closer``)."""

    def word_parts(self, *, quoted: bool = False, stop_at_braces: bool = False) -> Word:
        """Read the word at :attr:`pos` into parts."""

    def _matching(self, start: int, opener: str, closer: str) -> int: ...


#: How a parser of a nested text is made: ``make(text, budget, depth)``.
Make = Callable[[str, Budget, int], Parsing]


def array_word(parser: Parsing, word: Word, make: Make) -> Word:
    """``NAME=(…)`` at the parser's position: the assignment with the array's elements as one
    value (``a=x .env``); any other word as it is."""
    if not parser.text.startswith("(", parser.pos) or not _ARRAY.fullmatch(plain_text(word)):
        return word
    end = parser._matching(parser.pos + 1, "(", ")")
    inner = make(parser.text[parser.pos + 1 : end - 1], parser.budget, parser.depth + 1)
    inner.parse()
    parser.commands.extend(c for c in inner.commands if c.in_substitution)
    parser.pos = end
    items = [w for c in inner.commands if not c.in_substitution for w in c.words]
    values, keys = subscripted(items)  # `a=([0]=x [k]=.env)`: the values, then the keys
    word = [*word, LIST_MARK]
    for index, element in enumerate(values):
        word = [*word, *([Lit(" ", False)] if index else []), *element]
    for index, key in enumerate(keys):
        word = [*word, *([Lit(" ", False)] if index else [KEY_MARK]), *key]
    return word


def embedded(parser: Parsing, start: int, end: int, make: Make) -> Word:
    """The parts of ``text[start:end]``, which the shell evaluates (arithmetic, a subscript,
    an offset): its substitutions are the parser's commands too."""
    inner = make(parser.text[start:end], parser.budget, parser.depth + 1)
    parts: Word = []
    while inner.pos < end - start:  # word by word, the blanks and operators between kept
        at = inner.pos
        parts += inner.word_parts(quoted=True)
        if inner.pos == at:
            parts.append(Lit(inner.text[at], True))
            inner.pos += 1
    for command in inner.commands:
        command.in_substitution = True
    parser.commands.extend(inner.commands)
    return parts


def literal(parser: Parsing, match: re.Match[str]) -> str:
    """The literal text ``match`` found at the parser's position, the parser moved past it; an
    extended glob after it (``.@(env)``) joins it."""
    found, text = match.group(), parser.text
    parser.pos = match.end()
    if found[-1] in OPENERS and text.startswith("(", parser.pos):
        end = parser._matching(parser.pos + 1, "(", ")")
        found = found[:-1] + extglob(found[-1], text[parser.pos + 1 : end - 1])
        parser.pos = end
    return found


def operated(
    parser: Parsing,
    make: Make,
    name: str,
    quoted: bool,
    span: tuple[int, int],
    operator: str,
    op: str | None = None,
) -> Param:
    """``${NAME<operator>word}`` (``op``: the subscript of ``${NAME[k]<operator>word}``), its
    word from ``span[0]`` to the ``}`` before ``span[1]``."""
    inner = make(parser.text[span[0] : span[1] - 1], parser.budget, parser.depth + 1)
    word = inner.word_parts(quoted=quoted)
    parser.commands.extend(inner.commands)
    if operator.endswith(("-", "=")):
        return Param(name, quoted, word, op is not None, op, assigns=operator.endswith("="))
    if operator.endswith("+"):
        nonempty = operator.startswith(":")
        return Param(name, quoted, opaque=op is not None, op=op, alternate=word, nonempty=nonempty)
    return Param(name, quoted, opaque=True, op=op)


__all__ = ["Make", "Parsing", "array_word", "embedded", "literal", "operated"]
