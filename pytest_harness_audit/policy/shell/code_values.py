"""The values program text gives its variables, for the commands it runs through them.

``my $c = q(rm -rf app); system $c``, ``c = "rm" + " -rf app"; system(c)``, ``const c = "…";
execSync(c)``: a shell-out whose argument is no literal is read with the values its variables
were given from literals, literals joined (Perl ``.``, ``+`` elsewhere), lists of literals
(``qw(…)``, ``%w(…)``, ``[…]``), ``join``, and interpolation (``"$c app"``, ``"#{c} app"``,
``${c}``, ``f"{c}"``). A value built any other way is not known: :func:`guesses` gives the
literals of the text that could be the command, read as commands in its place.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

#: A variable given a value: ``$c = …``, ``my @c = …``, ``c = …``, ``const c = …``.
_ASSIGN: Final = re.compile(
    r"(?:\b(?:my|our|local|const|let|var)\s+)?(?<![\w$@.])([$@]?)([A-Za-z_]\w*)\s*=(?![=~>])\s*"
)
_PERL_LITERAL: Final = re.compile(r"(qq|qw|q)\s*(?=[^\w\s=,;)])")
_RUBY_LITERAL: Final = re.compile(r"%([qQwWi]?)(?=[^\w\s=])")
_INTERPOLATION: Final = {
    "perl": re.compile(r"[$@]\{?([A-Za-z_]\w*)\}?"),
    "ruby": re.compile(r"#\{\s*([A-Za-z_]\w*)\s*\}"),
    "js": re.compile(r"\$\{\s*([A-Za-z_]\w*)\s*\}"),
    "python": re.compile(r"\{([A-Za-z_]\w*)\}"),
}
_PAIRS: Final = {"(": ")", "[": "]", "{": "}", "<": ">"}
_QUOTED: Final = re.compile(
    r"""'((?:[^'\\\n]|\\.){0,512})'|"((?:[^"\\\n]|\\.){0,512})"|`([^`]{0,512})`"""
)
#: What may follow a whole expression.
_ENDS: Final = ("", ";", "\n", ")", "}", ",")
_ESCAPE: Final = re.compile(
    r"\\(?:x\{([0-9A-Fa-f]{1,6})\}|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{4})|([0-7]{1,3})|(.))"
)
_NAME: Final = re.compile(r"([$@*]|\.\.\.)?([A-Za-z_]\w*)\b")
_JOIN: Final = re.compile(r"""\.join\(\s*(?:'([^'\n]*)'|"([^"\n]*)")?\s*\)""")
#: Most variables read from one text, and most literals guessed from it.
_MAX_VALUES: Final = 256
_MAX_GUESSES: Final = 16
#: Most characters of one literal or call's arguments read, and of the literals joined.
_MAX_LITERAL: Final = 8192
_MAX_JOINED: Final = 2048


class Value(NamedTuple):
    """What an expression gives: its words (a list's items, or one string), whether it is a
    list, and whether every part of it was known."""

    words: list[str]
    many: bool
    known: bool


Values = dict[str, Value]


def assigned(code: str, language: str) -> Values:
    """The variables of ``code`` given a value from literals (the last such value of each)."""
    values: Values = {}
    for match in _ASSIGN.finditer(code):
        if len(values) >= _MAX_VALUES:
            break
        found = expression(code, match.end(), language, values)
        end = found[1] if found is not None else 0
        while end < len(code) and code[end] in " \t":
            end += 1
        if found is not None and found[0].known and code[end : end + 1] in _ENDS:
            values[match.group(2)] = found[0]
        else:  # `c = "ppa fr- mr".reverse`: a value built at run time
            values[match.group(2)] = Value([f"${match.group(2)}"], False, False)
    return values


def expression(code: str, index: int, language: str, values: Values) -> tuple[Value, int] | None:
    """The value of the expression at ``index`` and where it ends (``None``: not one of
    literals, known variables, lists, ``join`` and concatenation)."""
    operator = "." if language == "perl" else "+"
    words: list[str] = []
    many = False
    known = True
    while True:
        item = _item(code, skip_space(code, index), language, values)
        if item is None:
            return None
        value = item[0]
        end = item[1]
        many = many or value.many
        known = known and value.known
        if words and not value.many and not many:
            words[-1] += value.words[0] if value.words else ""
        else:
            words.extend(value.words)
        if language == "python" and not many and code.startswith(".join(", end):
            inner = expression(code, end + 6, language, values)  # `" ".join(["rm", …])`
            close = skip_space(code, inner[1]) if inner is not None else len(code)
            if inner is None or code[close : close + 1] != ")":
                return None
            words = [words[-1].join(inner[0].words)] if words else []
            known = known and inner[0].known
            end = close + 1
        suffix = _join_suffix(code, end, language)
        if suffix is not None:  # `[…].join(" ")`
            words = [suffix[0].join(words)]
            many = False
            end = suffix[1]
        index = skip_space(code, end)
        if code.startswith(operator, index) and not code.startswith(operator * 2, index):
            index += 1
            continue
        return Value(words, many, known), end


def _item(code: str, index: int, language: str, values: Values) -> tuple[Value, int] | None:
    """One operand: a literal, a variable, a list or a ``join``."""
    if index >= len(code):
        return None
    char = code[index]
    if char in "'\"`" or (char in "fF" and code[index + 1 : index + 2] in ("'", '"')):
        start = index + 1 if char in "fF" else index
        found = delimited(code, start)
        if found is None:
            return None
        quote = code[start]
        interpolates = quote != "'" and (language not in ("python", "js") or start > index)
        interpolates = interpolates or (language == "js" and quote == "`")
        kind = "js" if quote == "`" and language == "js" else language
        text = interpolate(found[0], kind, values) if interpolates else (found[0], True)
        decoded = _decode(text[0]) if quote != "'" else unescape(text[0])
        return Value([decoded], False, text[1]), found[1]
    if char in "[(":  # a list of literals
        found = delimited(code, index)
        if found is None:
            return None
        items = [a or b or c for a, b, c in _QUOTED.findall(found[0])]
        rest = _QUOTED.sub("", found[0]).replace(",", "").strip()
        return Value(items, True, not rest), found[1]
    literal = (_PERL_LITERAL if language == "perl" else _RUBY_LITERAL).match(code, index)
    if literal is not None and language in ("perl", "ruby"):
        found = delimited(code, skip_space(code, literal.end()))
        if found is None:
            return None
        kind = literal.group(1).lower()
        if kind in ("qw", "w", "i"):
            return Value(found[0].split(), True, True), found[1]
        text = interpolate(found[0], language, values) if kind in ("qq", "") else (found[0], True)
        return Value([text[0]], False, text[1]), found[1]
    if code.startswith("join", index) and language == "perl":
        return _perl_join(code, index + 4, values)
    match = _NAME.match(code, index)
    if match is None:
        return None
    end = match.end()
    if (end < len(code) and code[end] in "([{") or (language == "perl" and not match.group(1)):
        return None  # a call, an element: not known
    known = values.get(match.group(2))
    if known is None:
        return Value([f"${match.group(2)}"], False, False), end
    return known, end


def _perl_join(code: str, index: int, values: Values) -> tuple[Value, int] | None:
    """``join(SEP, LIST)`` / ``join SEP, LIST``."""
    index = skip_space(code, index)
    parenthesised = code[index : index + 1] == "("
    items: list[Value] = []
    index = index + 1 if parenthesised else index
    while len(items) < 64:
        found = expression(code, index, "perl", values)
        if found is None:
            return None
        items.append(found[0])
        index = skip_space(code, found[1])
        if code[index : index + 1] != ",":
            break
        index += 1
    if parenthesised:
        if code[index : index + 1] != ")":
            return None
        index += 1
    if len(items) < 2 or items[0].many or not items[0].words:
        return None
    words = [word for item in items[1:] for word in item.words]
    known = all(item.known for item in items)
    return Value([items[0].words[0].join(words)], False, known), index


def _join_suffix(code: str, index: int, language: str) -> tuple[str, int] | None:
    """A ``.join("SEP")`` after a list (Ruby, JavaScript): its separator and end."""
    if language in ("perl", "python") or not code.startswith(".join", index):
        return None
    match = _JOIN.match(code, index)
    if match is None:
        return None
    return (match.group(1) or match.group(2) or (" " if language == "ruby" else ",")), match.end()


def interpolate(text: str, language: str, values: Values) -> tuple[str, bool]:
    """``text`` with the variables it interpolates put in; whether all were known."""
    pattern = _INTERPOLATION.get(language)
    if pattern is None or not any(c in text for c in "$@#{"):
        return text, True
    parts: list[str] = []
    known = True
    position = 0
    for match in pattern.finditer(text):
        found = values.get(match.group(1))
        parts.append(text[position : match.start()])
        if found is None or not found.known:
            known = False
            parts.append(match.group())
        else:
            parts.append(" ".join(found.words))
        position = match.end()
    parts.append(text[position:])
    return "".join(parts), known


def guesses(code: str) -> list[str]:
    """The literals of ``code`` that could be a command run through a value not known: each
    holding a blank, and all of them joined (``("rm", "-rf", "app")`` held apart)."""
    literals = [a or b or c for a, b, c in _QUOTED.findall(code)][:64]
    perl = [m for m in re.findall(r"\bqq?\s*\(([^()\n]{1,512})\)", code)][:64]
    every = [unescape(text) for text in literals + perl if text.strip()]
    spaced = [text for text in every if " " in text.strip()]
    joined = " ".join(text.strip() for text in every)[:_MAX_JOINED]
    return list(dict.fromkeys([*spaced[:_MAX_GUESSES], joined] if joined else spaced))


def delimited(code: str, index: int, limit: int = _MAX_LITERAL) -> tuple[str, int] | None:
    """The text between the delimiter at ``index`` and its closing one (brackets nest), and the
    index after it (within :data:`_MAX_LITERAL` characters: a longer one is not read)."""
    if index >= len(code):
        return None
    opener = code[index]
    closer = _PAIRS.get(opener, opener)
    depth = 1
    position = index + 1
    stop = min(len(code), index + limit)
    while position < stop:
        char = code[position]
        if char == "\\":
            position += 2
            continue
        if char == closer:
            depth -= 1
            if depth == 0:
                return code[index + 1 : position], position + 1
        elif char == opener and closer != opener:
            depth += 1
        position += 1
    return None


def skip_space(code: str, index: int) -> int:
    """The index of the first character at or after ``index`` that is no blank."""
    while index < len(code) and code[index] in " \t\r\n":
        index += 1
    return index


def _decode(text: str) -> str:
    """A double-quoted literal's escapes (``\\x72``, ``\\x{72}``, ``\\u0072``, ``\\162``,
    ``\\n``)."""
    if "\\" not in text:
        return text

    def character(match: re.Match[str]) -> str:
        code = match.group(1) or match.group(2) or match.group(3)
        if code:
            return chr(int(code, 16))
        if match.group(4):
            return chr(int(match.group(4), 8))
        return {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(match.group(5), match.group(5))

    return _ESCAPE.sub(character, text)


def unescape(text: str) -> str:
    """``text`` with its escaped quotes and backslashes read."""
    return text.replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\")


__all__ = [
    "Value",
    "Values",
    "assigned",
    "delimited",
    "expression",
    "guesses",
    "interpolate",
    "skip_space",
    "unescape",
]
