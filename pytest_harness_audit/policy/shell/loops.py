"""The words a ``for``/``select`` loop gives its variable, as an assignment before its body.

``for f in .e*; do cat "$f"; done``, ``for f in $(ls -a); do cat $f; done``: the loop sets
``f`` to each word in turn, so the reading sets it to all of them at once (a list, split
wherever it is used, quoted or not: :attr:`~.expand.Expander.lists`), as it sets an array
(``a=(x .env)``, whose words ``${a[N]}`` names one by one). The commands of a substitution in
the words run too (``for x in $(cat .env)``). A ``for NAME`` with no ``in`` iterates the
positional parameters (``"$@"``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.braces import MAX_FIELDS, Chars, brace_expand
from pytest_harness_audit.policy.shell.nodes import (
    LIST_MARK,
    Budget,
    Command,
    Lit,
    Param,
    Redirect,
    Sub,
    Word,
    plain_text,
)

_HEADER: Final = re.compile(
    r"[ \t]*([A-Za-z_]\w*)(?:[ \t\n]+in\b([^;\n]*?))?[ \t]*(?=[;\n]|\bdo\b|$)"
)
_END: Final = re.compile(r"[;\n]|\bdo\b")


class _Parser(Protocol):
    text: str
    pos: int
    budget: Budget
    depth: int
    commands: list[Command]

    def parse(self) -> None:
        """Read the text into :attr:`commands`."""
        ...


def loop_header(parser: _Parser, make: Callable[[str, Budget, int], _Parser]) -> None:
    """Read ``NAME [in WORDS]`` from the parser's position up to the ``;``, newline or ``do``
    that ends it: an assignment of the words to ``NAME`` joins the parser's commands (``make``
    builds a parser for the words)."""
    text = parser.text
    match = _HEADER.match(text, parser.pos)
    end = _END.search(text, parser.pos)
    parser.pos = len(text) if end is None else end.start()
    if match is None:
        return
    name, words = match.group(1), match.group(2)
    value: Word = []
    if words is None:
        value = [Param("@", False)]
    elif words.strip():
        inner = make(words, parser.budget, parser.depth + 1)
        inner.parse()
        parser.commands.extend(c for c in inner.commands if c.in_substitution)
        elements = [w for c in inner.commands if not c.in_substitution for w in c.words]
        for index, element in enumerate(elements):
            value = [*value, *([Lit(" ", False)] if index else []), *element]
    parser.commands.append(Command(words=[[Lit(f"{name}=", False), LIST_MARK, *value]]))


#: ``()`` after a function's name; the name after ``function``.
_DEFINED: Final = re.compile(r"[ \t]*\)")
_NAMED: Final = re.compile(r"[ \t]+([^\s(){};&|<>]+)")
#: The redirections that give a command its standard input.
INPUT_OPS: Final = frozenset({"<", "<<", "<<-", "<<<", "<>", "<&"})


def group_input(redirects: list[Redirect], inner: list[Command]) -> None:
    """``{ sh; } < s.sh``, ``while read l; do …; done < f``: the input redirections of a
    compound command are those of each command inside it with no input of its own (not those
    of the redirection's own substitution: ``done < <(ls -a)``)."""
    given = [r for r in redirects if r.fd in ("", "0") and r.op in INPUT_OPS]
    if not given:
        return
    own = {id(c) for r in given for p in r.target or [] if type(p) is Sub for c in p.commands}
    for command in inner:
        if command.stdin is None and id(command) not in own and not _has_input(command):
            command.redirects.extend(given)


def piped_group(inner: list[Command]) -> None:
    """``ls -a | { read a; read b; cat $b; }``, ``… | while read f; do …; done``: a pipe into
    a compound command is the standard input of every command inside it with none of its own
    (its first command has it already)."""
    first = next((command for command in inner if not command.in_substitution), None)
    source = None if first is None else first.stdin
    if source is None or any(command is source for command in inner):
        return
    for command in inner:
        if command.stdin is None and not command.in_substitution and not _has_input(command):
            command.stdin = source


#: The redirections that send a command's standard output to a file.
OUTPUT_OPS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})


def group_output(redirects: list[Redirect], inner: list[Command]) -> None:
    """``{ grep -r KEY .; } > f``: the output redirections of a compound command are those of
    each command inside it whose output goes nowhere else (a pipe, a file of its own, a
    substitution)."""
    given = [r for r in redirects if r.fd in ("", "1") and r.op in OUTPUT_OPS]
    for command in inner if given else ():
        if not (command.piped or command.in_substitution or _has_output(command)):
            command.redirects.extend(given)


def piped_output(inner: list[Command], pipe: Command) -> None:
    """``{ grep -r KEY .; } | base64``: a compound command's output piped on is the output of
    each command inside it whose output goes nowhere else, into the pipe whose stand-in is
    ``pipe`` (the ``stdin`` of the command after it)."""
    for command in inner:
        if not (command.piped or command.in_substitution or _has_output(command)):
            command.piped = True
            command.pipe = pipe.pipe or pipe  # a stand-in inside another pipe: the outer one


class Functions:
    """The shell functions a script defines (``f() { …; }``, ``function f { …; }``): each
    name's body, the simple commands of the compound command after it. A call's output piped on
    or redirected is its body's (``f | base64``), as a compound command's is. A coprocess's
    output (``coproc grep -r KEY .``, ``coproc { …; }``) goes to a pipe another command reads
    through ``${COPROC[0]}``: it is written to a descriptor, out of the output scan's sight."""

    def __init__(self) -> None:
        self.bodies: dict[str, list[Command]] = {}
        self._naming: str | None = None  # a name whose body has not opened yet
        self._open: list[tuple[str, int]] = []  # a body being read: its name and depth
        self._coproc = False  # `coproc` read, its command not yet
        self._headers: set[int] = set()  # the words of `f` in `f() …`: no call

    def parenthesis(self, words: list[Word], text: str, at: int) -> None:
        """``(`` after ``words`` at ``at`` of ``text``: ``f()`` starts a definition of ``f``."""
        if len(words) == 1 and _DEFINED.match(text, at):
            self._naming = plain_text(words[0])
            self._headers.add(id(words))

    def keyword(self, keyword: str, text: str, at: int) -> None:
        """``function NAME`` (``keyword`` read, ``NAME`` at ``at`` of ``text``)."""
        named = _NAMED.match(text, at) if keyword == "function" else None
        if named is not None:
            self._naming = named.group(1)
        self._coproc = keyword == "coproc"

    def opened(self, depth: int) -> None:
        """A compound command opened, ``depth`` of them open now."""
        if self._coproc:
            self._naming, self._coproc = _COPROC, False
        if self._naming is not None:
            self._open.append((self._naming, depth))
            self._naming = None

    def closed(self, depth: int, start: int | None, commands: list[Command]) -> None:
        """The compound command of ``commands[start:]`` closed at ``depth`` (as
        :meth:`opened` counted; ``start`` ``None``: none was open)."""
        if start is not None and self._open and self._open[-1][1] == depth:
            name = self._open.pop()[0]
            if name == _COPROC:
                group_output([_coproc_output()], commands[start:])
            elif start < len(commands):
                self.bodies[name] = commands[start:]
            else:  # `function f() { …; }`: the empty `()` before the body
                self._naming = name

    def call(self, command: Command) -> None:
        """``command`` is complete: a call's pipe and output are its function's body's."""
        if self._coproc:
            self._coproc = False
            group_output([_coproc_output()], [command])
        if self.bodies and command.words:  # a call of a function defined before
            command.body = self.bodies.get(plain_text(command.words[0]))
        self._carry(command, frozenset())

    def link(self, commands: list[Command]) -> None:
        """Give the calls among ``commands`` not given their function's body yet theirs (a
        call in a substitution, ``cat "$(f)"``; in a body, of a function defined after it)."""
        if not self.bodies:
            return
        headers = self._headers
        for command in commands:
            if command.body is None and command.words and id(command.words) not in headers:
                command.body = self.bodies.get(plain_text(command.words[0]))

    def _carry(self, command: Command, calling: frozenset[str]) -> None:
        """``command``'s pipe and output go to its function's body, and on through the calls
        of other functions in it (``g() { grep …; }; h() { g; }; h | base64``); a function
        already ``calling`` (recursion) is not entered again."""
        name = plain_text(command.words[0]) if command.words else ""
        body = self.bodies.get(name)
        if not body or name in calling:
            return
        if command.piped:
            piped_output(body, command)
        group_output(command.redirects, body)
        for inner in body:
            self._carry(inner, calling | {name})


def carry_output(commands: list[Command], carrier: Command | None) -> None:
    """The commands of a script: the output of the command that runs it (``carrier``: ``bash
    -c TEXT | base64``, ``eval TEXT > f``) is theirs, and ``exec > FILE`` sends the output of
    every command after it to ``FILE``."""
    if carrier is not None and carrier.piped:
        piped_output(commands, carrier)
    if carrier is not None:
        group_output(carrier.redirects, commands)
    for index, command in enumerate(commands):
        if len(command.words) == 1 and plain_text(command.words[0]) == "exec":
            group_output(command.redirects, commands[index + 1 :])


#: A coprocess's body (no function has this name).
_COPROC: Final = "coproc()"


def _coproc_output() -> Redirect:
    """Where a coprocess writes: a pipe's descriptor."""
    return Redirect(">", [Lit("/dev/fd/63", False)], fd="1")


def _has_output(command: Command) -> bool:
    return any(r.fd in ("", "1") and r.op in OUTPUT_OPS for r in command.redirects)


def _has_input(command: Command) -> bool:
    return any(r.fd in ("", "0") and r.op in INPUT_OPS for r in command.redirects)


def elements(chars: Chars) -> list[str]:
    """The words of a list's value, split at its unquoted blanks, braces expanded (``a=(.e nv)``
    → ``.e``, ``nv``; ``for f in {.e,x}nv`` → ``.env``, ``xnv``)."""
    words: list[Chars] = [[]]
    for char, flags in chars:
        if flags and char in " \t\n":
            words.append([])
        else:
            words[-1].append((char, flags))
    found = [variant for word in words if word for variant in brace_expand(word)]
    return ["".join(char for char, _ in variant) for variant in found[:MAX_FIELDS]]


def element(items: list[str] | None, op: str, ifs: str) -> str | None:
    """``${a[N]}`` of a list known word by word: its ``N``-th word; ``${a[*]}``: its words
    joined by the first character of ``ifs`` (``None``: not known)."""
    if items is not None and op == "[*]":
        return ifs[:1].join(items)
    index = op[1:-1].strip()
    if items is None or op[:1] != "[" or not index.isdigit() or int(index) >= len(items):
        return None
    return items[int(index)]


__all__ = [
    "INPUT_OPS",
    "OUTPUT_OPS",
    "Functions",
    "carry_output",
    "element",
    "elements",
    "group_input",
    "group_output",
    "loop_header",
    "piped_group",
    "piped_output",
]
