"""Shell commands run by Perl, Ruby and PHP syntax of their own: quote-like operators and calls
without parentheses, which :mod:`.shellouts` (calls with parenthesised literals) does not see.

* **Perl**: backticks, ``qx`` with any delimiter (``qx(…)``, ``qx{…}``, ``qx'…'``), ``system``,
  ``exec`` and ``readpipe`` with or without parentheses and with ``q``/``qq``/``qw`` literals
  (``system q(rm -rf app)``, ``system {"rm"} "rm", "-rf", "app"``), and piped ``open``
  (``open(F, "cmd|")``, ``open(F, "|cmd")``, ``open(F, "-|", "cmd")``), ``open2``/``open3``.
* **Ruby**: backticks, ``%x`` with any delimiter, ``system``/``exec``/``spawn``,
  ``Process.spawn``, ``IO.popen``, ``Open3.*``, ``PTY.spawn`` with ``%q``/``%w`` literals or
  without parentheses, and ``open("|cmd")`` (``Kernel.open``, ``IO.read`` …).
* **PHP**: backticks and ``exec("cmd")``.

The language is the interpreter's (``perl -e``, ``ruby x.rb``) or a script's ``#!`` line; text
of another language is not read this way (a JavaScript template literal is no command).
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.code_values import (
    Value,
    Values,
    assigned,
    delimited,
    expression,
    interpolate,
    skip_space,
    unescape,
)

#: The languages read here, by interpreter name (``perl5.36``, ``ruby3.2``, ``php8.1``).
_LANGUAGE: Final = re.compile(r"(perl|ruby|php)[0-9.]*")
_SHEBANG: Final = re.compile(r"#!\S*?(?:/env\s+(?:-\S+\s+)*)?\S*?\b(perl|ruby|php)[0-9.]*\b")
_NAMES: Final = {
    "perl": r"system|exec|readpipe|open[23]?",
    "ruby": r"system|exec|spawn|open|popen\w*|(?:Kernel|Process|PTY)\.(?:system|exec|spawn|open)"
    r"|IO\.(?:popen|read|readlines|foreach|binread|write)|Open3\.\w+",
    "php": r"exec|system|passthru|shell_exec|popen|proc_open",
}
_QUOTE: Final = {"perl": r"\bqx\s*(?=[^\w\s=,;)])", "ruby": r"%x(?=[^\w\s])", "php": r"(?!)"}
_TRIGGERS: Final = {
    language: re.compile(
        r"(?P<tick>`)|(?<![\w$@%&])(?P<qx>" + _QUOTE[language] + r")"
        r"|(?<![\w$@%&.:>])(?:CORE::(?:GLOBAL::)?)?(?P<name>" + names + r")\b"
    )
    for language, names in _NAMES.items()
}
_PERL_LITERAL: Final = re.compile(r"(qq|qw|q)\s*(?=[^\w\s=,;)])")
_RUBY_LITERAL: Final = re.compile(r"%([qQwWi]?)(?=[^\w\s])")
_MODE: Final = re.compile(r"[rwa]b?\+?|[rwa]\+?b|[rwa]t")
_VARIABLE: Final = re.compile(r"\$\w+")
_PIPED: Final = re.compile(r"^\s*(?:-\||\|-|\|)|\|\s*$")
_PIPE_MODES: Final = frozenset({"-|", "|-"})
#: Most commands read from one text.
_MAX_COMMANDS: Final = 64


def language_of(name: str) -> str | None:
    """The language an interpreter named ``name`` runs, when it is one read here."""
    match = _LANGUAGE.fullmatch(name)
    return match.group(1) if match else None


def script_language(code: str) -> str | None:
    """The language a script's ``#!`` line names, when it is one read here."""
    if not code.startswith("#!"):
        return None
    match = _SHEBANG.match(code.split("\n", 1)[0])
    return match.group(1) if match else None


def quoted_shell_outs(code: str, language: str, unresolved: list[bool] | None = None) -> list[str]:
    """The shell commands ``code`` of ``language`` runs through its own syntax (module doc).
    A command given by a value not known (:mod:`.code_values`) adds to ``unresolved``: ``True``
    when its name is not known (``system $ARGV[0]``), else ``False`` (``system "rm -rf $d"``)."""
    trigger = _TRIGGERS[language]
    commands: list[str] = []
    missing: list[bool] = [] if unresolved is None else unresolved
    values: Values | None = None
    position = 0
    while len(commands) < _MAX_COMMANDS:
        match = trigger.search(code, position)
        if match is None:
            break
        position = match.end()
        if values is None:
            values = assigned(code, language) if "=" in code else {}
        if match.group("tick") or match.group("qx"):
            start = match.end() - 1 if match.group("tick") else match.end()
            found = delimited(code, start, limit=len(code))
            if found is not None:
                text = interpolate(found[0], language, values)
                if not text[1]:
                    missing.append(text[0].lstrip()[:1] in "$@#")
                commands.append(text[0])
                position = found[1]
            continue
        name = match.group("name")
        items = _arguments(code, match.end(), language, values)
        called = _called(code, match.start("name"), match.end(), language)
        if name.endswith("open") and "popen" not in name:
            commands.extend(_piped_open(items))
            # `open(F, "-|", $c)`, `open(F, "$c |")`: a pipe to a command not known (a file
            # opened by a name not known, `open(F, $path)`, runs nothing)
            piped = [i for i, item in enumerate(items) if item and _PIPED.search(item[0])]
            if called and piped and None in items[piped[0] :]:
                mode = items[piped[0]]
                modal = mode is not None and mode[0].strip() in _PIPE_MODES
                run = items[piped[0] + 1] if modal and piped[0] + 1 < len(items) else mode
                missing.append(run is None or run[0].lstrip()[:1] in "$@#")
        elif called and (None in items or not items):
            first = items[0] if items else None
            missing.append(first is None or first[0].lstrip()[:1] in "$@#")
            commands.extend(_command(items, popen="popen" in name))
        else:
            commands.extend(_command(items, popen="popen" in name))
    return [command for command in commands if command.strip()]


def _command(items: list[tuple[str, bool] | None], popen: bool) -> list[str]:
    """One command from a call's arguments: a single literal is a script; words a command."""
    literals = [item for item in items if item is not None]
    if popen and len(literals) > 1 and _MODE.fullmatch(literals[-1][0]):
        literals.pop()  # `IO.popen("cmd", "r")`: the open mode
    if len(literals) == 1 and not literals[0][1]:
        return [literals[0][0]]
    words = [word for text, many in literals for word in (text.split() if many else [text])]
    return [shlex.join(words)] if words else []


def _piped_open(items: list[tuple[str, bool] | None]) -> list[str]:
    """What an ``open`` runs: after a ``-|``/``|-`` mode its command, else a ``|cmd``/``cmd|``
    name."""
    literals = [item for item in items if item is not None]
    for index, (text, _many) in enumerate(literals):
        if text.strip() in _PIPE_MODES:
            return _command([*literals[index + 1 :]], popen=False)
    commands: list[str] = []
    for text, many in literals:
        stripped = text.strip()
        if not many and stripped.startswith("|"):
            commands.append(stripped[1:])
        elif not many and stripped.endswith("|"):
            commands.append(stripped[:-1])
    return commands


def _arguments(
    code: str, start: int, language: str, values: Values
) -> list[tuple[str, bool] | None]:
    """A call's arguments from ``start`` (after its name), with or without parentheses: each a
    literal ``(text, is_word_list)`` (a value its variables give, :mod:`.code_values`) or
    ``None`` for an expression not known."""
    index = skip_space(code, start)
    if index < len(code) and code[index] == "(":
        index += 1
    index = skip_space(code, index)
    if language == "perl" and index < len(code) and code[index] == "{":
        block = delimited(code, index, limit=len(code))  # `system {"rm"} LIST`: the program's name
        index = skip_space(code, block[1]) if block else index
    items: list[tuple[str, bool] | None] = []
    while index < len(code) and len(items) < _MAX_COMMANDS:
        value = expression(code, index, language, values) if language != "php" else None
        literal = _literal(code, index, language)
        if value is not None and _usable(code, value[0], value[1], literal):
            found = value[0]
            items.append((" ".join(found.words), True) if found.many else (found.words[0], False))
            if not found.known:
                items.append(None)  # (a part not known: the call is not wholly read)
            index = value[1]
        elif literal is not None:
            items.append((literal[0], literal[1]))
            index = literal[2]
        else:
            items.append(None)
            index = _expression_end(code, index)
        index = skip_space(code, index)
        if index >= len(code) or code[index] != ",":
            break
        index = skip_space(code, index + 1)
    return items


def _called(code: str, start: int, end: int, language: str) -> bool:
    """Whether the name at ``start``…``end`` is called: followed by its arguments (PHP's in
    parentheses), not a word of a string or a pattern (``"exec"``, ``/system/``)."""
    before = code[start - 1 : start]
    index = skip_space(code, end)
    after = code[index : index + 1]
    if before in ("'", '"') and code[end : end + 1] == before:
        return False
    if language == "php":
        return after == "("
    return bool(after) and (after in "($@\"'`{*%" or after.isalpha() or after == "_")


def _usable(code: str, value: Value, end: int, literal: tuple[str, bool, int] | None) -> bool:
    """Whether an argument's value stands for it: it ends the argument, is no word list read as
    it is (``qw(…)``), and is not one variable not known alone (``$i``: an expression)."""
    after = skip_space(code, end)
    if code[after : after + 1] not in ("", ",", ")", ";", "}", "\n") or not value.words:
        return False
    if literal is not None and literal[1]:
        return False
    return value.known or not _VARIABLE.fullmatch(value.words[0])


def _literal(code: str, index: int, language: str) -> tuple[str, bool, int] | None:
    """The string literal at ``index``: ``(text, is_word_list, end)``."""
    char = code[index]
    if char in "'\"":
        found = delimited(code, index, limit=len(code))
        if found is not None:
            return unescape(found[0]), False, found[1]
        return None
    if char == "[" and language == "ruby":  # `IO.popen(["rm", "-rf", "app"])`
        found = delimited(code, index, limit=len(code))
        if found is None:
            return None
        words = re.findall(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""", found[0])
        return " ".join(single or double for single, double in words), True, found[1]
    pattern = _PERL_LITERAL if language == "perl" else _RUBY_LITERAL
    match = pattern.match(code, index)
    if match is None or language == "php":
        return None
    opener = skip_space(code, match.end())
    found = delimited(code, opener, limit=len(code))
    if found is None:
        return None
    return found[0], match.group(1).lower() in ("qw", "w", "i"), found[1]


def _expression_end(code: str, index: int) -> int:
    """The end of an argument that is no literal: its next ``,`` outside brackets, or the end of
    the call."""
    depth = 0
    while index < len(code):
        char = code[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return index
            depth -= 1
        elif char in "'\"":
            found = delimited(code, index, limit=len(code))
            index = found[1] - 1 if found else len(code)
        elif depth == 0 and char in ",;\n":
            return index
        index += 1
    return index


__all__ = ["language_of", "quoted_shell_outs", "script_language"]
