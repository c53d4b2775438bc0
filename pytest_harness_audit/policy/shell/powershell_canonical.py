"""Each PowerShell command, as PowerShell splits it, written as one POSIX statement.

The rewriting of a PowerShell text keeps the text and leaves its quoting to the POSIX reading,
which splits some texts otherwise than PowerShell does: a here-string holding a quote
(``@'`` … ``'`` … ``'@``) ends early for the POSIX reading, and the commands after it became
the text of one string. :func:`canonical` writes each command from PowerShell's own split
(:mod:`.powershell_words`): its program (a cmdlet as its POSIX program), its parameters as the
POSIX options they amount to, each value POSIX-quoted (PowerShell's wildcards left globs), the
values the text gives put in (a variable set to a literal, a splatted hashtable, literals
folded, each path of a comma list, the environment), and its redirections (``> FILE``) as a
write. A value built at run time is left out (the command's reading says so).
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.powershell_dotnet import Found, posix_path, split_commas
from pytest_harness_audit.policy.shell.powershell_names import CMDLETS, posix_option
from pytest_harness_audit.policy.shell.powershell_pipes import Context
from pytest_harness_audit.policy.shell.powershell_words import Word, literal, value

#: A redirection: ``>``, ``>>``, ``2>``, ``*>``, ``2>&1``.
REDIRECT: Final = re.compile(r"[1-6*]?>>?|[1-6*]>&[12]")
#: Words PowerShell reads as keywords, not commands, at a statement's start.
_KEYWORDS: Final = frozenset(
    {"function", "filter", "if", "elseif", "else", "foreach", "for", "while", "do", "until",
     "switch", "try", "catch", "finally", "param", "return", "throw", "exit", "break",
     "continue", "trap", "class", "enum", "using", "begin", "process", "end", "data",
     "dynamicparam", "workflow", "configuration", "in"}
)  # fmt: skip
#: Characters a POSIX word holds unquoted with the same meaning (PowerShell's wildcards kept).
_PLAIN: Final = re.compile(r"[\w.*?\[\]/~@%+=:,-]+")
_VARIABLE: Final = re.compile(r"\$(?:\{([^}]*)\}|([\w:]+))")


def _word(text: str) -> str:
    """A value as a POSIX word: wildcards stay globs, ``\\`` is ``/``."""
    text = text.replace("\\", "/")
    return text if _PLAIN.fullmatch(text) else shlex.quote(text)


def _program(text: str) -> str:
    """A program's name as POSIX: ``curl.exe`` (or ``C:\\…\\curl.exe``) is ``curl``, as the
    Windows search finds it in any case; a script's path stays."""
    if text.lower().endswith(".exe"):
        return _word(re.split(r"[\\/]", text)[-1][:-4].lower())
    return _word(text)


def _substituted(text: str, ctx: Context) -> str | None:
    """A double-quoted string's value when every variable in it is set to a literal."""
    if not (text.startswith('"') and text.endswith('"') and "$" in text) or "$(" in text:
        return None
    names = [match.group(1) or match.group(2) for match in _VARIABLE.finditer(text)]
    if not all(name.lower() in ctx.values for name in names):
        return None
    return _VARIABLE.sub(lambda m: ctx.values[(m.group(1) or m.group(2)).lower()], text[1:-1])


def _values(word: Word, ctx: Context) -> list[str] | None:
    """The POSIX words a value word gives, or ``None`` when it is built at run time."""
    variable = re.fullmatch(r"([$@])([\w:]+)", word.text)
    name = variable.group(2).lower() if variable else ""
    if variable and name in ctx.values:  # an array's items each (`$f = '.env','x'`)
        return [_word(part.strip()) for part in ctx.values[name].split(",")]
    if variable and variable.group(1) == "@" and name in ctx.splats:
        return [
            _argument(Word(entry, literal(entry)), ctx, True) or "" for entry in ctx.splats[name]
        ]
    inside = _substituted(word.text, ctx)
    if inside is not None:
        return [_word(inside)]
    if word.value is None:
        path = posix_path(word)
        return None if path is None else [path]
    parts = split_commas(word.text) if "," in word.text and word.text[:1] != "(" else []
    if len(parts) > 1:
        found = [value(part.strip()) for part in parts]
        return [_word(part) for part in found if part is not None]
    return [_word(word.value)]


def _argument(word: Word, ctx: Context, mapped: bool) -> str | None:
    """One argument as POSIX text (``None``: left out); ``mapped``: a cmdlet's parameters read
    as the options they amount to."""
    if mapped and re.fullmatch(r"-[A-Za-z][\w-]*(?::.*)?", word.text, re.DOTALL):
        head, colon, tail = word.text.partition(":")
        option = posix_option(head)
        if colon and not option:  # `-Path:x`: the value
            given = _values(Word(tail, value(tail)), ctx)
            return " ".join(given) if given else None
        return option or None
    given = _values(word, ctx)
    return None if given is None else " ".join(given)


def redirections(words: list[Word], ctx: Context, found: Found) -> list[Word]:
    """Note each ``> FILE`` of a statement as a write; the words that are no redirection."""
    kept: list[Word] = []
    index = 0
    while index < len(words):
        word = words[index]
        if not REDIRECT.fullmatch(word.text):
            kept.append(word)
            index += 1
            continue
        index += 1
        if "&" in word.text or index >= len(words):
            continue
        target = words[index]
        index += 1
        if target.text.lower() == "$null":
            continue
        given = _values(target, ctx)
        if given is None:
            found.unknown.append("PowerShell writes to a path built at run time")
        else:
            found.posix.append(f": {'>>' if '>>' in word.text else '>'} {given[0]}")
    return kept


def canonical(name: str, words: list[Word], ctx: Context, found: Found, mapped: bool) -> None:
    """Append the POSIX statement for the command ``words`` (``name``: its command, lower
    case; ``mapped``: its parameters are a cmdlet's)."""
    first = words[0]
    if (
        first.value is None
        or first.text[:1] in "'\"@$([&.{"
        or name in _KEYWORDS
        or re.fullmatch(r"-?\d[\w.]*", first.text)
    ):
        return
    program = CMDLETS.get(name) or _program(first.value)
    argv = [program]
    for word in words[1:]:
        if word.text.startswith("{"):
            continue
        argument = _argument(word, ctx, mapped)
        if argument:
            argv.append(argument)
    found.posix.append(" ".join(argv))


__all__ = ["REDIRECT", "canonical", "redirections"]
