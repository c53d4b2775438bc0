"""The pieces of a shell reading: words and their parts, redirections, simple commands, the
work budget and the bounds (see :mod:`.syntax`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

_ANSI: Final = re.compile(
    r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))",
    re.S,
)
_ANSI_SIMPLE: Final = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
#: Deepest nesting of substitutions, subshells and nested scripts that is read.
MAX_DEPTH: Final = 24
#: Most tokens (words, operators) read from one command, nested scripts included.
MAX_TOKENS: Final = 2000
#: Tokens a nested script (a substitution, ``bash -c``) costs on top of its own.
PARSER_COST: Final = 8
#: Longest command text read (characters).
MAX_CHARS: Final = 64_000


class Unreadable(Exception):
    """The command cannot be read within bounds or is not well-formed (the message says why)."""


@dataclass(slots=True)
class Lit:
    """Literal text; ``quoted`` text is inert (no brace, glob or field splitting)."""

    text: str
    quoted: bool

    # (an own __init__: the compiled build compiles it, not the one dataclass would generate)
    def __init__(self, text: str, quoted: bool) -> None:
        self.text = text
        self.quoted = quoted


@dataclass(slots=True)
class Param:
    """A parameter expansion ``$NAME``/``${NAME…}``; ``default`` is the word of ``${X:-word}``;
    ``opaque`` when an operator makes the value unknowable without the variable's value
    (``${X:1}``, ``${#X}``)."""

    name: str
    quoted: bool
    default: list[Part] | None = None
    opaque: bool = False
    #: The operator text of an opaque ``${NAME<op>}`` (``:1:4``, ``%.bak``, ``,,``, ``/a/b``,
    #: ``[0]``; for ``${!NAME}`` the name), evaluated when the value is known.
    op: str | None = None
    #: The word of ``${X:+word}``/``${X+word}``: given when ``X`` is set (or not known to be).
    alternate: list[Part] | None = None
    #: ``${X:=word}``/``${X=word}``: ``X`` is set to the word when it is used.
    assigns: bool = False
    #: ``${X:+word}`` (not ``${X+word}``): the word only when ``X`` is set and not empty.
    nonempty: bool = False

    # (an own __init__, as :class:`Lit`'s)
    def __init__(
        self,
        name: str,
        quoted: bool,
        default: list[Part] | None = None,
        opaque: bool = False,
        op: str | None = None,
        alternate: list[Part] | None = None,
        assigns: bool = False,
        nonempty: bool = False,
    ) -> None:
        self.name = name
        self.quoted = quoted
        self.default = default
        self.opaque = opaque
        self.op = op
        self.alternate = alternate
        self.assigns = assigns
        self.nonempty = nonempty


@dataclass(slots=True)
class Sub:
    """A command substitution (or process substitution, arithmetic): its simple commands."""

    commands: list[Command]
    quoted: bool
    arithmetic: bool = False
    #: ``<`` for a process substitution ``<(…)`` (a file holding the output), ``>`` for ``>(…)``.
    process: str = ""
    #: The expression of an arithmetic expansion ``$((…))``, as the parts of a quoted word.
    expression: list[Lit | Param | Sub] | None = None

    # (an own __init__, as :class:`Lit`'s)
    def __init__(
        self,
        commands: list[Command],
        quoted: bool,
        arithmetic: bool = False,
        process: str = "",
        expression: list[Lit | Param | Sub] | None = None,
    ) -> None:
        self.commands = commands
        self.quoted = quoted
        self.arithmetic = arithmetic
        self.process = process
        self.expression = expression


Part = Lit | Param | Sub
Word = list[Part]
#: Marks an assignment's value as a list of words (an array's elements, a loop's words): the
#: variable is split wherever it is used, quoted or not (one reading too many, never too few).
LIST_MARK: Final = Lit("", False)
#: Marks the end of an array's elements in an assignment's word: its keys follow
#: (:mod:`.arrays`).
KEY_MARK: Final = Lit("", True)


@dataclass(slots=True)
class Redirect:
    """A redirection: operator (``>``, ``>>``, ``<``, ``<<<``, ``<<``, ``&>`` …), its word and,
    for a heredoc, the body text."""

    op: str
    target: Word | None
    body: str | None = None
    #: The file descriptor written before the operator (``3<file``: ``3``), else empty (not
    #: compared: two redirections of one operator and target are one redirection's reading).
    fd: str = field(default="", compare=False)


@dataclass(slots=True)
class Command:
    """A simple command: its words (assignments first) and redirections; ``stdin`` is the command
    piping into it, ``piped`` whether its output goes into a pipe; ``pipe`` the stand-in of the
    compound command around it whose output is piped (``{ a; b; } | c``: ``c``'s ``stdin``)."""

    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    stdin: Command | None = None
    piped: bool = False
    in_substitution: bool = False
    pipe: Command | None = field(default=None, compare=False, repr=False)
    #: The body of the function this command calls (a function the script defined before).
    body: list[Command] | None = field(default=None, compare=False, repr=False)
    #: Whether the command may not run, or runs in a subshell (after ``&&``/``||``, in a
    #: compound command, a pipeline, in the background): what it sets may not last.
    maybe: bool = field(default=False, compare=False, repr=False)

    def __init__(
        self,
        words: list[Word] | None = None,
        redirects: list[Redirect] | None = None,
        stdin: Command | None = None,
        piped: bool = False,
        in_substitution: bool = False,
        pipe: Command | None = None,
        body: list[Command] | None = None,
        maybe: bool = False,
    ) -> None:
        self.words = [] if words is None else words
        self.redirects = [] if redirects is None else redirects
        self.stdin = stdin
        self.piped = piped
        self.in_substitution = in_substitution
        self.pipe = pipe
        self.body = body
        self.maybe = maybe


#: Words the shell reads as syntax in command position (a command of plain words starting with
#: one of them takes the parser, not the fast path).
RESERVED_WORDS: Final = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "select", "case",
     "esac", "in", "coproc", "function", "time", "{", "}", "!", "[[", "]]"}
)  # fmt: skip
#: Reserved words that only separate simple commands (the commands around them count).
SEPARATOR_WORDS: Final = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!", "esac"}
)


def plain_text(word: Word) -> str:
    """The text of a word of literals only (quotes removed); expansions left as ``$``."""
    return "".join(part.text if isinstance(part, Lit) else "$" for part in word)


def ansi_c(body: str) -> str:
    """The text of an ANSI-C quoted string ``$'…'`` (``\\x72\\x6d`` → ``rm``)."""

    def one(match: re.Match[str]) -> str:
        hexa, short, long, octal, control, other = match.groups()
        try:
            if hexa or short or long:
                return chr(int(hexa or short or long, 16))
            if octal:
                return chr(int(octal, 8) & 0xFF)
        except (ValueError, OverflowError):
            return ""
        if control:
            return chr(ord(control) & 0x1F)
        return _ANSI_SIMPLE.get(other, "\\" + other)

    return _ANSI.sub(one, body)


#: A prompt's escapes (``\\NNN``: exactly three octal digits); the others keep their backslash.
_PROMPT_ESCAPE: Final = re.compile(r"\\(?:([0-7]{3})|(.))", re.S)
_PROMPT_SIMPLE: Final = {"a": "\a", "e": "\x1b", "n": "\n", "r": "\r", "\\": "\\", "[": "", "]": ""}
#: Escapes whose text is known only at run time (the user, the folder, the time …); ``\\$`` is
#: ``$`` or ``#`` by the user.
_PROMPT_RUNTIME: Final = frozenset("dDhHjlstT@AuvVwW!#$")


def prompt_text(value: str) -> tuple[str, bool]:
    """The text bash makes of ``value`` expanded as a prompt (``${v@P}``, ``PS4``) before it
    expands it again: its escapes decoded (``\\044`` is ``$``, modulo 256 as bash counts,
    ``\\[``/``\\]`` dropped), a run-time escape's text unknown (``\\$`` taken as ``$``); and
    whether that text is exact (it holds no run-time escape)."""
    exact = True

    def one(match: re.Match[str]) -> str:
        nonlocal exact
        octal, other = match.groups()
        if octal:
            return chr(int(octal, 8) & 0xFF)
        if other in _PROMPT_RUNTIME:
            exact = False
            return "$" if other == "$" else match.group()
        return _PROMPT_SIMPLE.get(other, match.group())

    return _PROMPT_ESCAPE.sub(one, value), exact


@dataclass(slots=True)
class Budget:
    """Work left for one reading: tokens, shared by every nested script."""

    tokens: int = MAX_TOKENS

    def __init__(self, tokens: int = MAX_TOKENS) -> None:
        self.tokens = tokens
