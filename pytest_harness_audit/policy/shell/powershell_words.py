"""PowerShell text split into statements and words, and the literal value of a word.

The rewriting of :mod:`.powershell` keeps the text; this reading says what it cannot: which
words of a command are literal (``'.env'``, ``app``, ``"x"``) and which are computed when it
runs (``('.e'+'nv')``, ``"$($x)"``, ``$p``, ``@args``). A statement is a list of pipelines, each
a list of commands, each a list of :class:`Word`. Quotes follow PowerShell: ``'…'`` (``''`` a
quote), ``"…"`` (the backtick escapes, ``$`` expands), here-strings ``@'…'@``/``@"…"@``;
``(…)``, ``$(…)``, ``@(…)``, ``{…}`` and ``[…]`` are one word with what is inside them.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

#: Characters that end a bare word.
_WORD_END: Final = frozenset(" \t\r\n;|&)}>")
#: A redirection at a word's start: ``>``, ``>>``, ``2>``, ``*>``, ``2>&1``.
_REDIRECTION: Final = re.compile(r"[1-6*]>&[12]|[1-6*]?>>?")
#: Most nested openings followed before the text counts as one word.
_MAX_DEPTH: Final = 64


class Word(NamedTuple):
    """One word of a command: its text as written and its value when it is a literal."""

    text: str
    value: str | None


def _quoted_end(text: str, start: int) -> int:
    """The index past the string starting at ``start`` (a quote or a here-string's ``@``)."""
    quote = text[start]
    if quote == "@":
        close = "\n" + text[start + 1] + "@"
        end = text.find(close, start + 2)
        return len(text) if end < 0 else end + len(close)
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "`" and quote == '"':
            index += 2
            continue
        if char == quote:
            if text[index + 1 : index + 2] == quote:  # a doubled quote is one quote
                index += 2
                continue
            return index + 1
        index += 1
    return len(text)


def _closing(text: str, start: int) -> int:
    """The index past the bracket opened at ``start``, quotes and nested brackets skipped."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = [pairs[text[start]]]
    index = start + 1
    while index < len(text) and stack:
        char = text[index]
        if char in "'\"" or (char == "@" and text[index + 1 : index + 2] in ("'", '"')):
            index = _quoted_end(text, index)
            continue
        if char == "`":
            index += 2
            continue
        if char in pairs:
            if len(stack) >= _MAX_DEPTH:
                return len(text)
            stack.append(pairs[char])
        elif char == stack[-1]:
            stack.pop()
        index += 1
    return index


def _word_end(text: str, start: int) -> int:
    """The index past the word starting at ``start``."""
    index = start
    while index < len(text):
        char = text[index]
        if char in _WORD_END:
            return index
        if char in "'\"" or (char == "@" and text[index + 1 : index + 2] in ("'", '"')):
            index = _quoted_end(text, index)
        elif char in "({[":
            index = _closing(text, index)
        elif char == "`":
            index += 2
        else:
            index += 1
    return len(text)


def literal(text: str) -> str | None:
    """The value of a word PowerShell gives without running anything, else ``None``: bare text
    and quoted strings without an expansion (``'a'b"c"`` is ``abc``)."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "'":
            end = _quoted_end(text, index)
            if end > len(text) or text[end - 1] != "'" or end == index + 1:
                return None
            out.append(text[index + 1 : end - 1].replace("''", "'"))
            index = end
        elif char == '"':
            end = _quoted_end(text, index)
            inner = text[index + 1 : end - 1]
            if end > len(text) or text[end - 1] != '"' or "$" in inner:
                return None
            out.append(_unescape(inner.replace('""', '"')))
            index = end
        elif char == "@" and text[index + 1 : index + 2] in ("'", '"'):
            body = text[index + 2 :]
            close = "\n" + text[index + 1] + "@"
            if not body.endswith(close) or (text[index + 1] == '"' and "$" in body):
                return None
            return "".join(out) + body[: -len(close)].lstrip(" \t").lstrip("\r\n")
        elif char in "$@({[":
            return None
        elif char == "`":
            out.append(text[index + 1 : index + 2])
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _unescape(text: str) -> str:
    """A double-quoted string's text with its backtick escapes taken."""
    escapes = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\a", "e": "\x1b"}
    out: list[str] = []
    index = 0
    while index < len(text):
        if text[index] == "`" and index + 1 < len(text):
            out.append(escapes.get(text[index + 1], text[index + 1]))
            index += 2
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def statements(text: str) -> list[list[list[Word]]]:
    """``text`` as statements (split on ``;``, new lines, ``&&``, ``||``), each a pipeline of
    commands (split on ``|``), each a list of words; comments dropped."""
    result: list[list[list[Word]]] = []
    pipeline: list[list[Word]] = []
    command: list[Word] = []

    def end_command() -> None:
        nonlocal command
        if command:
            pipeline.append(command)
        command = []

    def end_statement() -> None:
        nonlocal pipeline
        end_command()
        if pipeline:
            result.append(pipeline)
        pipeline = []

    index = 0
    while index < len(text):
        char = text[index]
        if char in " \t\r":
            index += 1
        elif text.startswith("<#", index):
            end = text.find("#>", index + 2)
            index = len(text) if end < 0 else end + 2
        elif char == "#" and (index == 0 or text[index - 1] in " \t\r\n;"):
            end = text.find("\n", index)
            index = len(text) if end < 0 else end
        elif char in ";\n" or text.startswith(("&&", "||"), index):
            end_statement()
            index += 1 if char in ";\n" else 2
        elif char == "|":
            end_command()
            index += 1
        elif char in ")}":
            index += 1  # an unbalanced closing bracket: PowerShell's parse error, skipped
        elif char == "&" and not command:
            command.append(Word("&", None))  # the call operator
            index += 1
        elif char == "&":
            end_statement()  # `cmd &`: a background job
            index += 1
        elif _REDIRECTION.match(text, index):
            match = _REDIRECTION.match(text, index)
            end = match.end() if match else index + 1
            command.append(Word(text[index:end], None))
            index = end
        else:
            end = _word_end(text, index)
            continued = bool(command) and command[-1].text != "&"
            if continued and (command[-1].text.endswith(",") or text.startswith(",", index)):
                joined = command.pop().text + text[index:end]  # `a, b`: one array
                command.append(Word(joined, value(joined)))
                index = end
                continue
            word = text[index:end]
            if word == "--%":  # stop-parsing: the rest of the line passes as it is written
                line_end = min(
                    p for p in (text.find("\n", end), text.find("|", end), len(text)) if p >= 0
                )
                command.extend(Word(raw, raw) for raw in text[end:line_end].split())
                index = line_end
                continue
            command.append(Word(word, value(word)))
            index = end
    end_statement()
    return result


_STRING: Final = r"'(?:[^']|'')*'|\"[^\"`$]*\""
_CONCAT: Final = re.compile(rf"\s*(?:{_STRING})(?:\s*\+\s*(?:{_STRING}))*\s*")
_FORMAT: Final = re.compile(
    rf"\s*({_STRING})\s*-f\s*((?:{_STRING})(?:\s*,\s*(?:{_STRING}))*)\s*", re.I
)
_JOIN: Final = re.compile(
    rf"\s*\(?\s*((?:{_STRING})(?:\s*,\s*(?:{_STRING}))*)\s*\)?\s*-join\s*({_STRING})?\s*", re.I
)


def _strings(text: str) -> list[str]:
    return [literal(part) or "" for part in re.findall(_STRING, text)]


def folded(text: str) -> str | None:
    """The value of a parenthesized expression of string literals PowerShell computes the
    same way every time: ``('.e'+'nv')``, ``("{0}env" -f '.')``, ``(('.','env') -join '')``;
    else ``None``."""
    if not (text.startswith("(") and text.endswith(")")) or len(text) > 4096:
        return None
    inner = text[1:-1]
    if _CONCAT.fullmatch(inner):
        return "".join(_strings(inner))
    formatted = _FORMAT.fullmatch(inner)
    if formatted:
        template, args = _strings(formatted.group(1))[0], _strings(formatted.group(2))
        try:
            return re.sub(r"\{(\d+)\}", lambda m: args[int(m.group(1))], template)
        except IndexError:
            return None
    unary = re.fullmatch(
        rf"\s*-join\s*\(\s*((?:{_STRING})(?:\s*,\s*(?:{_STRING}))*)\s*\)\s*", inner, re.I
    )
    if unary:
        return "".join(_strings(unary.group(1)))
    joined = _JOIN.fullmatch(inner)
    if joined:
        return (_strings(joined.group(2) or "''") or [""])[0].join(_strings(joined.group(1)))
    return None


def value(text: str) -> str | None:
    """A word's value when PowerShell gives it without running anything: :func:`literal`, or
    a comma list of literals (``a,'b'``: ``a,b``), or :func:`folded`."""
    found = literal(text)
    if found is not None:
        return found
    if text.startswith("("):
        return folded(text)
    return None


def expression_value(text: str) -> str | None:
    """The value of an expression (a method's argument, a hashtable's value) PowerShell gives
    without running anything: one string, literals joined (:func:`folded`), ``$true``, a
    number; else ``None`` (``'a'+'b'`` is ``ab`` here, not the word ``'a'+'b'``)."""
    text = text.strip()
    if re.fullmatch(_STRING, text) or (text[:2] in ("@'", '@"') and literal(text) is not None):
        return literal(text)
    found = folded("(" + text + ")")
    if found is not None:
        return found
    if re.fullmatch(r"\$(?:true|false|null)|-?\d+", text, re.IGNORECASE):
        return text
    return None


def parenthesized(text: str) -> list[str]:
    """The text inside every ``(…)``, ``$(…)``, ``@(…)`` and ``{…}`` of ``text`` (not in a
    string, but a ``$(…)`` in a double-quoted one; not in a comment), outermost first: the
    commands there run too."""
    found: list[str] = []
    pending = [text]
    while pending and len(found) < _MAX_DEPTH * 4:
        current = pending.pop()
        index = 0
        while index < len(current):
            char = current[index]
            if char == "'" or (char == "@" and current[index + 1 : index + 2] == "'"):
                index = _quoted_end(current, index)
            elif char == '"' or (char == "@" and current[index + 1 : index + 2] == '"'):
                end = _quoted_end(current, index)
                body = current[index:end]  # text, but for its `$(…)` subexpressions
                start = body.find("$(")
                while start >= 0:
                    close = _closing(body, start + 1)
                    found.append(body[start + 2 : close - 1])
                    pending.append(body[start + 2 : close - 1])
                    start = body.find("$(", close)
                index = end
            elif char == "#" and (index == 0 or current[index - 1] in " \t\r\n;"):
                end = current.find("\n", index)
                index = len(current) if end < 0 else end
            elif char == "`":
                index += 2
            elif char in "({":
                end = _closing(current, index)
                inner = current[index + 1 : end - 1]
                found.append(inner)
                pending.append(inner)
                index = end
            else:
                index += 1
    return found


def operands(words: list[Word]) -> list[Word]:
    """The words that are no parameter name (``-Recurse``, ``-Path``)."""
    return [word for word in words if not re.fullmatch(r"-[A-Za-z][\w-]*:?", word.text)]


def named(words: list[Word], *names: str) -> Word | None:
    """The value of the first parameter among ``names`` (lower case, abbreviations allowed)."""
    for index, word in enumerate(words):
        name, colon, value = word.text.partition(":")
        lowered = name.lower()
        if len(lowered) > 2 and any(full.startswith(lowered) for full in names):
            if colon:
                return Word(value, None if value.startswith(("$", "(")) else value)
            if index + 1 < len(words):
                return words[index + 1]
    return None


__all__ = [
    "Word",
    "expression_value",
    "folded",
    "literal",
    "named",
    "operands",
    "parenthesized",
    "statements",
    "value",
]
