"""What a short ``awk`` program prints from a text the command holds.

``$(echo xenv | awk '{sub(/x/, ".")} 1')``, ``$(echo 'x env' | awk '{print "." $2}')``: a name
``awk`` builds from a known text is a constant, as one ``sed`` edits is (:mod:`.sed_text`). A
program of one block run for every line (``-F C`` splitting the fields), followed or not by
``1``, whose statements are ``print`` (of nothing, or of expressions joined by ``,``) and
``sub``/``gsub`` (a ``/RE/`` or a string, of ``$0``), over expressions that put together string
literals, ``$N``, ``$0``, ``$NF``, ``NR``, ``NF``, ``toupper``, ``tolower`` and ``substr``, is
worked out line by line; anything else (a pattern, a variable, another statement, ``-v``, a
file operand) gives ``None``: not worked out. Expressions are matched by RE2 (leftmost-longest).
"""

from __future__ import annotations

import re
from typing import Any, Final

import re2

_MAX_STATEMENTS: Final = 32
_ESCAPES: Final = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/"}
_NUMBER: Final = re.compile(r"\d{1,6}")
_NAME: Final = re.compile(r"[A-Za-z_]\w*")


class _Unknown(Exception):
    """The program holds something not worked out."""


def awk_output(args: list[str], stdin: str) -> str | None:
    """What ``awk args`` prints given ``stdin`` (module doc), ``None``: not worked out."""
    separator: str | None = None
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "-F" and index < len(args):
            separator = args[index]
            index += 1
        elif word.startswith("-F") and len(word) > 2:
            separator = word[2:]
        elif word == "--":
            operands.extend(args[index:])
            break
        elif word[:1] == "-" and word != "-":
            return None  # `-v`, `-f FILE` …
        else:
            operands.append(word)
    if len(operands) != 1 or (separator is not None and len(separator) != 1):
        return None
    try:
        block, always = _Parser(operands[0]).program()
    except (_Unknown, re2.error, IndexError):
        return None
    lines = stdin.split("\n")
    if lines[-1] == "":
        lines.pop()
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        record = _Record(line, number, separator)
        for statement in block:
            statement(record, out)
        if always:
            out.append(record.line + "\n")
    return "".join(out)


class _Record:
    """One line being run through the program: ``$0``, its fields and its number."""

    def __init__(self, line: str, number: int, separator: str | None) -> None:
        self.line = line
        self.number = number
        self.separator = separator

    def fields(self) -> list[str]:
        """The fields of ``$0``."""
        if self.separator is None or self.separator == " ":
            return self.line.split()
        return self.line.split(self.separator)

    def field(self, number: int) -> str:
        """``$N``."""
        if number == 0:
            return self.line
        fields = self.fields()
        return fields[number - 1] if number <= len(fields) else ""


_Expression = Any  # a callable of a record giving a text
_Statement = Any  # a callable of a record and the output, giving whether it printed


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def program(self) -> tuple[list[_Statement], bool]:
        self._blank()
        if not self._take("{"):
            raise _Unknown
        statements: list[_Statement] = []
        while True:
            self._blank(newlines=True)
            if self._take("}"):
                break
            if self._take(";"):
                continue
            if len(statements) >= _MAX_STATEMENTS:
                raise _Unknown
            statements.append(self._statement())
        self._blank(newlines=True)
        always = self._take("1")
        self._blank(newlines=True)
        if self.at != len(self.text):
            raise _Unknown
        return statements, always

    def _statement(self) -> _Statement:
        name = self._name()
        if name == "print":
            self._blank()
            if self._peek() in (";", "}", "\n"):
                return lambda record, out: out.append(record.line + "\n") is None
            parts = [self._expression()]
            while self._take(","):
                parts.append(self._expression())
            return lambda record, out: (
                out.append(" ".join(part(record) for part in parts) + "\n") is None
            )
        if name in ("sub", "gsub"):
            self._expect("(")
            pattern = self._regex()
            self._expect(",")
            replacement = self._expression()
            if self._take(","):
                self._blank()
                if not self._take("$0"):
                    raise _Unknown
            self._expect(")")
            every = name == "gsub"

            def substitute(record: _Record, out: list[str]) -> bool:
                record.line = _substituted(record.line, pattern, replacement(record), every)
                return False

            return substitute
        raise _Unknown

    def _regex(self) -> Any:
        self._blank()
        options = re2.Options()
        options.longest_match = True
        if self._take("/"):
            end = self.at
            while self.text[end] != "/":
                end += 2 if self.text[end] == "\\" else 1
            source, self.at = self.text[self.at : end], end + 1
            return re2.compile(source.replace("\\/", "/"), options)
        return re2.compile(self._string(), options)

    def _expression(self) -> _Expression:
        terms = [self._term()]
        while True:
            self._blank()
            if self._peek() in (",", ")", ";", "}", "\n", ""):
                break
            terms.append(self._term())
        return lambda record: "".join(term(record) for term in terms)

    def _term(self) -> _Expression:
        self._blank()
        char = self._peek()
        if char == '"':
            text = self._string()
            return lambda record: text
        if char == "$":
            self.at += 1
            number = _NUMBER.match(self.text, self.at)
            if number is not None:
                self.at = number.end()
                value = int(number[0])
                return lambda record: record.field(value)
            if self._name() != "NF":
                raise _Unknown
            return lambda record: record.field(len(record.fields()))
        if char == "(":
            self.at += 1
            inner = self._expression()
            self._expect(")")
            return inner
        name = self._name()
        if name == "NR":
            return lambda record: str(record.number)
        if name == "NF":
            return lambda record: str(len(record.fields()))
        if name in ("toupper", "tolower"):
            self._expect("(")
            inner = self._expression()
            self._expect(")")
            upper = name == "toupper"
            return lambda record: inner(record).upper() if upper else inner(record).lower()
        if name == "substr":
            return self._substr()
        raise _Unknown

    def _substr(self) -> _Expression:
        self._expect("(")
        inner = self._expression()
        self._expect(",")
        self._blank()
        start = self._number()
        length = None
        if self._take(","):
            self._blank()
            length = self._number()
        self._expect(")")

        def part(record: _Record) -> str:
            text = str(inner(record))
            first = max(start, 1) - 1
            return text[first:] if length is None else text[first : max(start + length - 1, 0)]

        return part

    def _number(self) -> int:
        match = _NUMBER.match(self.text, self.at)
        if match is None:
            raise _Unknown
        self.at = match.end()
        return int(match[0])

    def _string(self) -> str:
        self._expect('"')
        out: list[str] = []
        while self.text[self.at] != '"':
            char = self.text[self.at]
            if char == "\\":
                following = self.text[self.at + 1]
                if following not in _ESCAPES:
                    raise _Unknown
                out.append(_ESCAPES[following])
                self.at += 2
            else:
                out.append(char)
                self.at += 1
        self.at += 1
        return "".join(out)

    def _name(self) -> str:
        self._blank()
        match = _NAME.match(self.text, self.at)
        if match is None:
            raise _Unknown
        self.at = match.end()
        return match[0]

    def _peek(self) -> str:
        return self.text[self.at : self.at + 1]

    def _take(self, token: str) -> bool:
        self._blank()
        if self.text.startswith(token, self.at):
            self.at += len(token)
            return True
        return False

    def _expect(self, token: str) -> None:
        if not self._take(token):
            raise _Unknown

    def _blank(self, newlines: bool = False) -> None:
        blanks = " \t\n" if newlines else " \t"
        while self.at < len(self.text) and self.text[self.at] in blanks:
            self.at += 1


def _substituted(line: str, pattern: Any, replacement: str, every: bool) -> str:
    text = replacement.replace("\\\\&", "\0")  # `\\&`: a literal `&`

    def replaced(match: Any) -> str:
        return text.replace("&", str(match.group(0))).replace("\0", "&")

    out: list[str] = []
    last, previous = 0, -1
    for match in pattern.finditer(line):
        if match.start() == match.end() == previous:
            continue
        previous = match.end()
        out.append(line[last : match.start()])
        out.append(replaced(match))
        last = match.end()
        if not every:
            break
    out.append(line[last:])
    return "".join(out)


__all__ = ["awk_output"]
