"""The common shape of a command, read without the parser: plain and quoted words, ``&&``,
``||``, ``;``, ``|``, ``&`` and plain redirections (most commands an agent runs). One regex
splits such a command into tokens; anything else takes the parser (:mod:`.syntax`).
"""

from __future__ import annotations

import re

from pytest_harness_audit.policy.shell.nodes import RESERVED_WORDS, Command, Lit, Redirect, Word

# The common shape of a command, read by one regex: words of plain characters and quoted strings
# with nothing to expand, `&&`, `||`, `;`, `|`, `&` and plain redirections. Anything else (an
# expansion, a glob, a brace, a comment, a heredoc, a subshell, a newline, the pipe `|&`) takes
# the parser.
_SIMPLE_TOKEN = re.compile(
    r"""[ \t]+|(?P<op>&&|\|\||[;&](?!>)|\|(?![&>]))|(?P<redirect>\d?(?:>>|>\||>&|>|<)|&>>|&>)"""
    r"""|(?P<word>(?:[^\s'"\\$`;&|<>(){}*?\[\]#!]+|'[^']*'|"[^"\\$`!]*")+)"""
)
_QUOTES = re.compile(r"'([^']*)'|\"([^\"]*)\"")
_SIMPLE_LIMIT = 2048


def parse_simple(text: str) -> list[Command] | None:
    """The simple commands of a command of the common shape (see ``_SIMPLE_TOKEN``), read
    without the parser; ``None`` for any other command."""
    if len(text) > _SIMPLE_LIMIT or "\x00" in text:
        return None
    commands: list[Command] = []
    current = Command()
    previous: Command | None = None
    redirect: Redirect | None = None
    end = 0
    for match in _SIMPLE_TOKEN.finditer(text):
        if match.start() != end:
            return None
        end = match.end()
        kind = match.lastgroup
        if kind is None:
            continue
        value = match.group()
        if kind == "word":
            if "'" in value or '"' in value:
                if "=" in value:
                    return None  # an assignment of quoted text: the parser knows it
                word: Word = [Lit(_QUOTES.sub(_unquoted, value), True)]
            else:
                word = [Lit(value, False)]
            if redirect is not None:
                redirect.target, redirect = word, None
            elif not current.words and value in RESERVED_WORDS:
                return None  # `if`, `case`, `coproc` …: syntax, which the parser reads
            else:
                current.words.append(word)
        elif redirect is not None:
            return None
        elif kind == "redirect":
            redirect = Redirect(value.lstrip("0123456789"), None)
            current.redirects.append(redirect)
        else:
            if current.words or current.redirects:
                current.stdin = previous
                current.piped = value == "|"
                commands.append(current)
            previous = current if value == "|" else None
            current = Command()
    if end != len(text) or redirect is not None:
        return None
    if current.words or current.redirects:
        current.stdin = previous
        commands.append(current)
    return commands


def _unquoted(match: re.Match[str]) -> str:
    return match.group(1) if match.group(1) is not None else match.group(2)
