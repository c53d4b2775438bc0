"""The common shape of a command, read without the parser: plain and quoted words, ``&&``,
``||``, ``;``, ``|``, ``&`` and plain redirections (most commands an agent runs). One regex
splits such a command into tokens; anything else takes the parser (:mod:`.syntax`).
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.shell.nodes import RESERVED_WORDS, Command, Lit, Redirect, Word

# The common shape of a command, read by one regex: words of plain characters and quoted strings
# with nothing to expand, `&&`, `||`, `;`, `|`, `&` and plain redirections. Anything else (an
# expansion, a glob, a brace, a comment, a heredoc, a subshell, a newline, the pipe `|&`) takes
# the parser.
_SIMPLE_TOKEN: Final = re.compile(
    r"""((?:(?P<op>&&|\|\||[;&](?!>)|\|(?![&>]))|(?P<redirect>\d?(?:>>|>\||>&|>|<)|&>>|&>)"""
    r"""|(?P<word>(?:[^\s'"\\$`;&|<>(){}*?\[\]#!]+|'[^']*'|"[^"\\$`!]*")+))[ \t]*)"""
)
_QUOTES: Final = re.compile(r"'([^']*)'|\"([^\"]*)\"")
_SIMPLE_LIMIT: Final = 2048


def parse_simple(text: str) -> list[Command] | None:
    """The simple commands of a command of the common shape (see ``_SIMPLE_TOKEN``), read
    without the parser; ``None`` for any other command."""
    if len(text) > _SIMPLE_LIMIT or "\x00" in text:
        return None
    if "'" not in text and ("$" in text or "`" in text or "\\" in text or "!" in text):
        return None  # no token holds these outside single quotes: the regex would not cover them
    commands: list[Command] = []
    current = Command()
    words = current.words
    previous: Command | None = None
    redirect: Redirect | None = None
    after = False  # after `&&` or `||` (as :class:`~.syntax.Parser` marks ``maybe``)
    start = len(text) - len(text.lstrip(" \t"))  # a token takes the blanks after it
    # (typed: the compiled build reads each token's groups natively, not through objects)
    tokens: list[tuple[str, str, str, str]] = _SIMPLE_TOKEN.findall(text, start)
    # tokens do not overlap: they cover the text (no character left out) when their lengths
    # add up to it
    covered = start
    for whole, _, _, _ in tokens:
        covered += len(whole)
    if covered != len(text):
        return None
    for _, op, redirect_op, value in tokens:
        if value:
            single, double = "'" in value, '"' in value
            if single or double:
                if "=" in value:
                    return None  # an assignment of quoted text: the parser knows it
                if single and double:
                    unquoted = _QUOTES.sub(_unquoted, value)
                else:  # a quote inside a quoted string is of the other kind: all delimit
                    unquoted = value.replace("'" if single else '"', "")
                word: Word = [Lit(unquoted, True)]
            else:
                word = [Lit(value, False)]
            if redirect is not None:
                redirect.target, redirect = word, None
            elif not words and (value in RESERVED_WORDS or value == "exec"):
                return None  # `if`, `case`, `coproc`, `exec > f` …: the parser reads them
            else:
                words.append(word)
        elif redirect is not None:
            return None
        elif redirect_op:
            op = redirect_op.lstrip("0123456789")
            redirect = Redirect(op, None, fd=redirect_op[: len(redirect_op) - len(op)])
            current.redirects.append(redirect)
        else:
            if words or current.redirects:
                current.stdin = previous
                current.piped = op == "|"
                current.maybe = after or op in ("|", "&") or previous is not None
                commands.append(current)
            previous = current if op == "|" else None
            after = op in ("&&", "||") or (after and op == "|")
            current = Command()
            words = current.words
    if redirect is not None:
        return None
    if words or current.redirects:
        current.stdin = previous
        current.maybe = after or previous is not None
        commands.append(current)
    return commands


def _unquoted(match: re.Match[str]) -> str:
    return match.group(1) if match.group(1) is not None else match.group(2)
