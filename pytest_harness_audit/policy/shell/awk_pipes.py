"""The commands an awk program runs, and the text it hands them.

An awk program runs ``sh -c CMD`` for ``system(CMD)``, ``CMD | getline [VAR]`` (``|&`` too) and
``print … | CMD`` (``printf`` too); ``print`` writes its text into that command's standard
input. ``CMD`` is worked out from string literals and variables given a literal in the program
(``cmd = "rm -rf app"``), by ``-v`` or an operand ``NAME=VALUE``; anything else is made at run
time (``None``); ``system($0)`` and ``$0 | getline`` in a rule run for every line run each
line of the input. What a ``print`` pipes in is worked out the same way; a record printed
unchanged (``print``, ``print $0``) in a rule run for every line is the text of the input files
(or of awk's own input), unless the program changes records or their separators (``sub``,
``$1 = …``, ``RS``); a ``printf`` of a format of ``%s`` only is its values put in; anything else
is a text not known.

:func:`awk_runs` gives, for each such place, the command (``None``: not known) and what it is
handed: a text, :data:`RECORDS` (the input's lines), :data:`UNKNOWN` (a text made at run time)
or ``None`` (nothing: ``system`` and ``getline`` hand their command awk's own input).
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

#: What a ``print`` pipes in, when it is the input's records unchanged.
RECORDS: Final = "\0records"
#: What a ``print`` pipes in, when its text is made at run time.
UNKNOWN: Final = "\0unknown"
_MAX_RUNS: Final = 32
#: Most tokens of an expression worked out (a longer one is not: made at run time), so that the
#: reading stays linear in the program's length.
_MAX_EXPRESSION: Final = 256
#: Most tokens of a value given a variable worked out.
_MAX_VALUE: Final = 32
_TOKEN: Final = re.compile(
    r'(?P<str>"(?:[^"\\\n]|\\.)*"?)|(?P<name>[A-Za-z_]\w*)|(?P<num>\d[\d.]*)'
    r"|(?P<comment>#[^\n]*)|(?P<cont>\\\n)|(?P<blank>[ \t\r]+)"
    r"|(?P<op>\|\||\|&|&&|>>|==|!=|<=|>=|\+\+|--|[-+*/%^]=|\n|.)",
    re.DOTALL,
)
_ESCAPES: Final = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r"}
_OPERANDS: Final = frozenset({"str", "name", "num", "re"})
_ENDS: Final = frozenset({";", "\n", "}"})
_KEYWORDS: Final = frozenset(
    {"print", "printf", "getline", "if", "else", "while", "for", "do", "return", "in",
     "BEGIN", "END", "function", "func", "delete", "next", "exit", "close"}
)  # fmt: skip
#: Statements that change a record before it is printed, and the separators that make the
#: records printed other than the input's lines.
_CHANGES: Final = frozenset({"sub", "gsub", "getline", "split", "RS", "ORS", "FS", "OFS"})
_SEPARATORS: Final = frozenset({"RS", "ORS"})


class Token(NamedTuple):
    """One token of the program: its kind (``str``, ``re``, ``name``, ``num``, ``op``) and
    text (a string's without its quotes, unescaped)."""

    kind: str
    text: str


class AwkRun(NamedTuple):
    """A command the program runs (``None``: made at run time) and what it is handed."""

    command: str | None
    given: str | None
    printf: bool = False
    #: The string literals of a command not worked out, joined (read for what they show).
    literals: str = ""


def awk_runs(program: str, assignments: dict[str, str]) -> list[AwkRun]:
    """The commands ``program`` runs (module doc), ``assignments`` its ``-v`` values."""
    if "system" not in program and "|" not in program:
        return []
    tokens, rules = _tokens(program)
    variables = _variables(tokens, assignments)
    changes = (
        any(t.kind == "name" and t.text in _CHANGES for t in tokens)
        or _sets_fields(tokens)
        or bool(_SEPARATORS & set(assignments))  # `-v RS=X`: records split otherwise
    )
    runs: list[AwkRun] = []
    for index, token in enumerate(tokens):
        if len(runs) >= _MAX_RUNS:
            break
        if token == Token("name", "system") and tokens[index + 1 : index + 2] == [("op", "(")]:
            end = _closing(tokens, index + 1)
            argument = tokens[index + 2 : end]
            literals = "".join(t.text for t in argument if t.kind == "str")
            if _record(argument) and rules[index] == "main" and not changes:
                runs.append(AwkRun("sh", RECORDS))  # `{system($0)}`: each line is a command
                continue
            runs.append(AwkRun(_value(argument, variables), None, literals=literals))
        elif token.kind == "op" and token.text in ("|", "|&"):
            if tokens[index + 1 : index + 2] == [("name", "getline")]:
                start = index
                while start > max(index - _MAX_EXPRESSION, 0) and tokens[start - 1].kind in (
                    "str",
                    "name",
                ):
                    if tokens[start - 1].text in _KEYWORDS and tokens[start - 1].kind == "name":
                        break
                    start -= 1
                if _record(tokens[start - 2 : index]) and rules[index] == "main" and not changes:
                    runs.append(AwkRun("sh", RECORDS))
                    continue
                runs.append(AwkRun(_value(tokens[start:index], variables), None))
                continue
            end = _statement_end(tokens, index + 1)
            command = _value(tokens[index + 1 : end], variables)
            runs.append(_print_run(tokens, index, command, variables, rules[index], changes))
    return runs


def _print_run(
    tokens: list[Token],
    pipe: int,
    command: str | None,
    variables: dict[str, str | None],
    rule: str,
    changes: bool,
) -> AwkRun:
    start = pipe
    while start > 0 and tokens[start - 1] not in (("name", "print"), ("name", "printf")):
        if pipe - start > _MAX_EXPRESSION or (
            tokens[start - 1].kind == "op" and tokens[start - 1].text in _ENDS | {"{"}
        ):
            return AwkRun(command, UNKNOWN)
        start -= 1
    if start == 0:
        return AwkRun(command, UNKNOWN)
    printf = tokens[start - 1].text == "printf"
    data = tokens[start:pipe]
    if len(data) >= 2 and data[0] == ("op", "(") and _closing(data, 0) == len(data) - 1:
        data = data[1:-1]
    if not data or _record(data):
        plain = rule == "main" and not changes and not printf
        return AwkRun(command, RECORDS if plain else UNKNOWN)
    parts: list[list[Token]] = [[]]
    for token in data:
        if token == ("op", ","):
            parts.append([])
        else:
            parts[-1].append(token)
    values = [_value(part, variables) for part in parts]
    if any(value is None for value in values):
        return AwkRun(command, UNKNOWN)
    if printf:  # a format of `%s` only: its values put in
        pieces = (values[0] or "").replace("%%", "\0").split("%s")
        if len(pieces) != len(values) or any("%" in piece for piece in pieces):
            return AwkRun(command, UNKNOWN)
        text = pieces[0] + "".join(
            (v or "") + p for v, p in zip(values[1:], pieces[1:], strict=True)
        )
        return AwkRun(command, text.replace("\0", "%"), printf=True)
    return AwkRun(command, " ".join(value or "" for value in values))


def _record(tokens: list[Token]) -> bool:
    """Whether ``tokens`` are ``$0`` (in parentheses or not)."""
    return [t for t in tokens if t not in (("op", "("), ("op", ")"))] == [
        Token("op", "$"),
        Token("num", "0"),
    ]


def _tokens(program: str) -> tuple[list[Token], list[str]]:
    """The program's tokens, and for each the kind of rule it stands in (``BEGIN``, ``END``,
    ``main``: run for every record, ``function``)."""
    tokens: list[Token] = []
    rules: list[str] = []
    depth, rule, pattern = 0, "main", list[str]()
    at = 0
    while at < len(program):
        if program[at] == "/" and (not tokens or _regex_may_start(tokens[-1])):
            end = at + 1
            while end < len(program) and program[end] not in "/\n":
                end += 2 if program[end] == "\\" else 1
            tokens.append(Token("re", program[at + 1 : end]))
            rules.append(rule)
            at = end + 1
            continue
        match = _TOKEN.match(program, at)
        if match is None:  # pragma: no cover - the last alternative takes any character
            break
        at = match.end()
        kind = match.lastgroup or "op"
        if kind in ("comment", "cont", "blank"):
            continue
        text = match.group(0)
        if kind == "str":
            text = _unescape(text[1:-1] if text.endswith('"') and len(text) > 1 else text[1:])
        elif kind == "op" and text == "{":
            if depth == 0:
                first = pattern[0] if pattern else ""
                rule = {"BEGIN": "BEGIN", "END": "END", "function": "function"}.get(first, "main")
                rule = "function" if first == "func" else rule
            depth += 1
        elif kind == "op" and text == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                pattern = []
        elif depth == 0 and kind == "name":
            pattern.append(text)
        tokens.append(Token(kind, text))
        rules.append(rule)
    return tokens, rules


def _regex_may_start(previous: Token) -> bool:
    if previous.kind in ("str", "num", "re"):
        return False
    if previous.kind == "name":
        return previous.text in _KEYWORDS
    return previous.text not in (")", "]", "$")


def _variables(tokens: list[Token], given: dict[str, str]) -> dict[str, str | None]:
    """The variables given a literal (and known), those set otherwise are ``None``."""
    variables: dict[str, str | None] = dict(given)
    assigned: dict[str, str | None] = {}
    for index, token in enumerate(tokens):
        if token.kind != "name":
            continue
        following = tokens[index + 1 : index + 2]
        if following and following[0].kind == "op" and following[0].text == "=":
            end = _statement_end(tokens, index + 2, _MAX_VALUE)
            value = _value(tokens[index + 2 : end], {}, _MAX_VALUE)
            previous = assigned.get(token.text, value)
            assigned[token.text] = value if previous == value else None
        elif following and following[0].kind == "op" and following[0].text.endswith("="):
            if following[0].text not in ("==", "!=", "<=", ">="):
                assigned[token.text] = None
        elif following == [Token("op", "[")] or (
            index and tokens[index - 1] in (("name", "getline"), ("name", "in"))
        ):
            assigned[token.text] = None  # an array, or a value read at run time
    for name, value in assigned.items():
        variables[name] = value if name not in given or given[name] == value else None
    return variables


def _sets_fields(tokens: list[Token]) -> bool:
    """Whether the program assigns a field (``$1 = …``) or ``NF``/``$0``: a record printed is
    then not the one read."""
    for index, token in enumerate(tokens):
        if token == ("op", "$") or token == ("name", "NF"):
            rest = tokens[index + 1 : index + 4]
            if any(t.kind == "op" and t.text.endswith("=") and t.text not in ("==", "!=",
                   "<=", ">=") for t in rest):  # fmt: skip
                return True
    return False


def _value(
    tokens: list[Token], variables: dict[str, str | None], most: int = _MAX_EXPRESSION
) -> str | None:
    """The text of an expression of string literals and known variables joined."""
    if len(tokens) > most:
        return None
    out: list[str] = []
    for token in tokens:
        if token.kind == "str":
            out.append(token.text)
        elif token.kind == "name" and variables.get(token.text) is not None:
            out.append(variables[token.text] or "")
        elif token.kind != "op" or token.text not in ("(", ")"):
            return None
    return "".join(out) if out or tokens else None


def _closing(tokens: list[Token], opening: int) -> int:
    depth = 0
    for index in range(opening, min(len(tokens), opening + _MAX_EXPRESSION + 2)):
        if tokens[index].kind == "op" and tokens[index].text in "([":
            depth += 1
        elif tokens[index].kind == "op" and tokens[index].text in ")]":
            depth -= 1
            if depth == 0:
                return index
    return min(len(tokens), opening + _MAX_EXPRESSION + 2)


def _statement_end(tokens: list[Token], start: int, most: int = _MAX_EXPRESSION) -> int:
    depth = 0
    for index in range(start, min(len(tokens), start + most + 1)):
        kind, text = tokens[index]
        if kind != "op":
            continue
        if text in "([":
            depth += 1
        elif text in ")]":
            if depth == 0:
                return index
            depth -= 1
        elif depth == 0 and (text in _ENDS or text in (">", ">>", "|", "|&", ",")):
            return index
    return min(len(tokens), start + most + 1)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), text)


__all__ = ["RECORDS", "UNKNOWN", "AwkRun", "Token", "awk_runs"]
