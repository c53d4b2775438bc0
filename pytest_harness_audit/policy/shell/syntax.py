"""Shell syntax: a bounded lexer and parser that flattens a command into simple commands.

The parser is our own rather than ``bashlex`` (GPL-3, raises on much everyday syntax, recursive
PLY grammar with no work bound) or ``tree-sitter-bash`` (a C parser with good error recovery,
but it yields syntax only: quote removal, ANSI-C quoting, ``$IFS``, braces and globs would still
be ours, and its trees are walked recursively). A policy needs less than a full grammar — which
simple commands run, with which words and redirections — and it needs a hard bound on the work
for hostile input; a small parser gives both.

Compound commands (``if``/``while``/``for``/``case``/``{ }``/``( )``/``coproc``/functions) are
flattened: every simple command inside them counts, as if each branch ran. Command and process
substitutions (``$(…)``, backticks, ``<(…)``) are parsed too; their simple commands count, and
the words that hold them keep a reference to them. Heredoc bodies are attached to their
redirection. Input beyond :data:`MAX_DEPTH` nesting or :data:`MAX_TOKENS` tokens raises
:class:`Unreadable`, which the policy judges conservatively.
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.shell.arrays import element_operator
from pytest_harness_audit.policy.shell.conditionals import arithmetic_test, skip_test
from pytest_harness_audit.policy.shell.loops import (
    Functions,
    group_input,
    group_output,
    loop_header,
    piped_group,
    piped_output,
)
from pytest_harness_audit.policy.shell.nodes import (
    MAX_CHARS,
    MAX_DEPTH,
    PARSER_COST,
    SEPARATOR_WORDS,
    Budget,
    Command,
    Lit,
    Param,
    Part,
    Redirect,
    Sub,
    Unreadable,
    Word,
    ansi_c,
    plain_text,
)
from pytest_harness_audit.policy.shell.wordforms import array_word, embedded, literal, operated

_BLANK: Final = re.compile(r"(?:[ \t\r\f\v]+|\\\n)+")
_OPERATOR: Final = re.compile(r";;&|;;|;&|&&|\|\||\|&|[;&|()\n]")
_REDIRECT: Final = re.compile(r"(?:\d+|\{[A-Za-z_]\w*\})?(?:&>>|&>|<<<|<<-|<<|<>|>>|>\||>&|<&|>|<)")
_PROC_SUB: Final = re.compile(r"[<>]\(")
_OPERATOR_START: Final = frozenset(";&|()\n<>{0123456789")
_LITERAL: Final = re.compile(r"""[^\s;&|()<>'"\\$`]+""")
_DQ_LITERAL: Final = re.compile(r'[^"\\$`]+')
#: Characters that end a word after a literal (no more of it can follow: a blank, an operator).
_WORD_ENDS: Final = frozenset(" \t\n;&|()")
_NAME: Final = re.compile(r"[A-Za-z_]\w*|[0-9@*#?$!-]")
_GROUP_OPENERS: Final = frozenset({"{", "if", "while", "until"})
_GROUP_CLOSERS: Final = frozenset({"}", "fi", "done", "esac"})
_BRACED: Final = re.compile(r"\{(#?)([A-Za-z_]\w*|[0-9@*#?$!-]+)(?:(:?[-=?+])|([^}]?))")


class Parser:
    """Reads one script into a flat list of simple commands (:attr:`commands`)."""

    def __init__(self, text: str, budget: Budget, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise Unreadable("nested too deep")
        if len(text) > MAX_CHARS:
            raise Unreadable("command too long")
        if "\x00" in text:
            raise Unreadable("NUL byte in command")
        budget.tokens -= PARSER_COST
        if budget.tokens < 0:
            raise Unreadable("command too complex")
        self.text = text
        self.pos = 0
        self.budget = budget
        self.depth = depth
        self.commands: list[Command] = []
        self._heredocs: list[tuple[Redirect, str, bool, bool]] = []
        #: Where open compound commands' simple commands start, and the one just closed's.
        self._groups: list[int] = []
        self._closed: int | None = None
        self._after = False  # after `&&` or `||`: the commands may not run
        self._unsure: list[bool] = []  # each open group: whether what it sets may not last
        self.functions = Functions()

    # -- words ---------------------------------------------------------------------------------
    def _spend(self) -> None:
        self.budget.tokens -= 1
        if self.budget.tokens < 0:
            raise Unreadable("command too complex")

    def _nested(self, start: int, closer: str) -> tuple[list[Command], int]:
        """Parse from ``start`` up to the matching ``closer`` (``)``); return commands, end."""
        inner = Parser(self.text, self.budget, self.depth + 1)
        inner.pos = start
        inner.parse(closer=closer)
        self.commands.extend(inner.commands)
        return inner.commands, inner.pos

    def _sub(self, script: str, quoted: bool) -> Sub:
        inner = Parser(script, self.budget, self.depth + 1)
        inner.parse()
        for command in inner.commands:
            command.in_substitution = True
        self.commands.extend(inner.commands)
        return Sub(inner.commands, quoted)

    def _dollar(self, quoted: bool) -> Part:
        """A ``$`` expansion at :attr:`pos` (which points at the ``$``)."""
        text, pos = self.text, self.pos + 1
        nxt = text[pos : pos + 1]
        if text.startswith("((", pos):
            self.pos = end = self._matching(pos + 2, "((", "))")
            return Sub([], quoted, True, expression=embedded(self, pos + 2, end - 2, Parser))
        if nxt == "(":
            commands, end = self._nested(pos + 1, ")")
            for command in commands:
                command.in_substitution = True
            self.pos = end + 1
            return Sub(commands, quoted)
        if nxt == "{":
            return self._braced(pos, quoted)
        match = _NAME.match(text, pos)
        if match:
            self.pos = match.end()
            return Param(match.group(), quoted)
        self.pos = pos
        return Lit("$", quoted)

    def _braced(self, pos: int, quoted: bool) -> Part:
        text = self.text
        end = self._matching(pos + 1, "{", "}")
        self.pos = end
        match = _BRACED.match(text, pos)
        if match is None:
            return Param("?", quoted, opaque=True)
        length, name, operator, other = match.groups()
        subscript = element_operator(text[match.start(4) : end - 1]) if other == "[" else None
        if length or (other and other != "}" and subscript is None):
            op = None if length else text[match.start(4) : end - 1]
            if op is not None and ("$(" in op or "`" in op):  # `${a[$(cmd)]}`: it runs
                embedded(self, match.start(4), end - 1, Parser)
            return Param(name, quoted, opaque=True, op=op)
        if subscript is not None:  # `${a[0]-word}`: the element, else the word
            op, operator, at = subscript
            if "$(" in op or "`" in op:
                embedded(self, match.start(4), match.start(4) + len(op), Parser)
            return operated(self, Parser, name, quoted, (match.start(4) + at, end), operator, op)
        if operator:
            return operated(self, Parser, name, quoted, (match.end(), end), operator)
        return Param(name, quoted)

    def _matching(self, start: int, opener: str, closer: str) -> int:
        """Index after the ``closer`` balancing an ``opener`` before ``start`` (quotes skipped)."""
        text, depth, pos, size = self.text, 1, start, len(self.text)
        while pos < size:
            self._spend()
            char = text[pos]
            if char == "\\":
                pos += 2
                continue
            if char == "'" and opener != "((":
                close = text.find("'", pos + 1)
                pos = size if close < 0 else close + 1
                continue
            if text.startswith(closer, pos):
                depth -= 1
                if depth == 0:
                    return pos + len(closer)
                pos += len(closer)
                continue
            if text.startswith(opener, pos) or (opener == "{" and text.startswith("${", pos)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise Unreadable("nested too deep")
            pos += 1
        raise Unreadable(f"unbalanced {opener!r}")

    def _double_quoted(self, parts: Word) -> None:
        text = self.text
        self.pos += 1
        while True:
            self._spend()
            match = _DQ_LITERAL.match(text, self.pos)
            if match:
                parts.append(Lit(match.group(), True))
                self.pos = match.end()
            char = text[self.pos : self.pos + 1]
            if char == '"':
                self.pos += 1
                return
            if char == "":
                raise Unreadable("unterminated double quote")
            if char == "\\":
                escaped = text[self.pos + 1 : self.pos + 2]
                if escaped in ('"', "\\", "$", "`"):
                    parts.append(Lit(escaped, True))
                elif escaped != "\n":
                    parts.append(Lit("\\" + escaped, True))
                self.pos += 2
            elif char == "$":
                parts.append(self._dollar(True))
            else:  # a backtick
                parts.append(self._backtick(True))

    def _backtick(self, quoted: bool) -> Sub:
        text, pos = self.text, self.pos + 1
        chunks: list[str] = []
        while True:
            end = text.find("`", pos)
            if end < 0:
                raise Unreadable("unterminated backtick")
            slash = text.find("\\", pos, end)
            if slash < 0:
                chunks.append(text[pos:end])
                break
            chunks.append(text[pos:slash])
            escaped = text[slash + 1 : slash + 2]
            chunks.append(escaped if escaped in "`$\\" else "\\" + escaped)
            pos = slash + 2
        self.pos = end + 1
        return self._sub("".join(chunks), quoted)

    def word_parts(self, *, quoted: bool = False, stop_at_braces: bool = False) -> Word:
        """Read the word at :attr:`pos` (to the next unquoted metacharacter) into parts."""
        text = self.text
        parts: Word = []
        size = len(text)
        while self.pos < size:
            self._spend()
            match = _LITERAL.match(text, self.pos)
            if match:
                parts.append(Lit(literal(self, match), quoted))
                if self.pos < size and text[self.pos] in _WORD_ENDS:
                    self._spend()  # the step that would find the word ended, counted alike
                    break
                continue
            char = text[self.pos]
            if char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise Unreadable("unterminated single quote")
                parts.append(Lit(text[self.pos + 1 : end], True))
                self.pos = end + 1
            elif char == '"':
                self._double_quoted(parts)
            elif char == "\\":
                escaped = text[self.pos + 1 : self.pos + 2]
                if escaped != "\n":
                    parts.append(Lit(escaped, True))
                self.pos += 2
            elif char == "$":
                if text.startswith("$'", self.pos):
                    end = _ansi_end(text, self.pos + 2)
                    parts.append(Lit(ansi_c(text[self.pos + 2 : end]), True))
                    self.pos = end + 1
                elif text.startswith('$"', self.pos):
                    self.pos += 1
                    self._double_quoted(parts)
                else:
                    parts.append(self._dollar(quoted))
            elif char == "`":
                parts.append(self._backtick(quoted))
            elif _PROC_SUB.match(text, self.pos):
                direction = text[self.pos]
                commands, end = self._nested(self.pos + 2, ")")
                for command in commands:
                    command.in_substitution = True
                if direction == ">":  # `tee >(sh)`: what they read is another command's output
                    for command in commands:
                        command.stdin = command.stdin or Command()
                parts.append(Sub(commands, True, process=direction))
                self.pos = end + 1
            else:
                break
        return parts

    # -- commands ------------------------------------------------------------------------------
    def parse(self, closer: str | None = None) -> None:
        """Read commands until the end (or an unbalanced ``closer``), into :attr:`commands`."""
        text, size = self.text, len(self.text)
        current = Command()
        previous: Command | None = None  # the command piping into ``current``
        parens = 0
        case_patterns = False  # after `case WORD in` or `;;`: words up to `)` are patterns
        skip_words = 0
        pending_redirect: Redirect | None = None
        while True:
            match = _BLANK.match(text, self.pos)
            if match:
                self.pos = match.end()
            if self.pos >= size:
                break
            self._spend()
            char = text[self.pos]
            if char == "#" and (self.pos == 0 or text[self.pos - 1] in " \t\n;&|()"):
                newline = text.find("\n", self.pos)
                self.pos = size if newline < 0 else newline
                continue
            if char in _OPERATOR_START and not _PROC_SUB.match(text, self.pos):
                redirect = None if pending_redirect else _REDIRECT.match(text, self.pos)
                if redirect:
                    op = redirect.group().lstrip("0123456789")
                    fd = redirect.group()[: len(redirect.group()) - len(op)]
                    if op.startswith("{"):
                        op = op[op.index("}") + 1 :]
                        fd = "{"  # a descriptor the shell picks
                    self.pos = redirect.end()
                    pending_redirect = Redirect(op, None, fd=fd)
                    current.redirects.append(pending_redirect)
                    continue
                operator = _OPERATOR.match(text, self.pos)
                if operator and not pending_redirect:
                    op = operator.group()
                    self.pos = operator.end()
                    if op == ")":
                        if case_patterns:
                            case_patterns = False
                            continue
                        if parens == 0 and closer == ")":
                            self.pos -= 1
                            self._finish(current, previous)
                            return
                        parens -= 1
                        self._close_group(current, previous)
                        previous, current = None, Command()
                        continue
                    elif op == "(" and arithmetic_test(self, current, Parser):
                        continue  # `(( x > 3 ))`: an arithmetic command, not two subshells
                    elif op == "(":
                        parens += 1
                        if parens > MAX_DEPTH:
                            raise Unreadable("nested too deep")
                        if not current.words and not current.redirects:
                            self._groups.append(len(self.commands))  # (`((`: arithmetic)
                            self._unsure.append("((" not in text[self.pos - 2 : self.pos + 1])
                            self.functions.opened(len(self._groups))
                            continue  # `cat s.sh | (sh)`: the subshell reads the pipe
                        self.functions.parenthesis(current.words, text, self.pos)  # `f() …`
                    if op in ("|", "|&"):
                        current.piped = True
                        if not current.words and self._closed is not None:
                            piped_output(self.commands[self._closed :], current)
                        self._finish(current, previous)
                        previous, current = current, Command()
                        continue
                    current.maybe |= op == "&"  # (in the background: a subshell)
                    self._finish(current, previous)
                    previous, current = None, Command()
                    self._after = op in ("&&", "||") or (self._after and op in ("|", "|&"))
                    if op == "\n" and self._heredocs:
                        self._read_heredocs()
                    if op in (";;", ";&", ";;&"):
                        case_patterns = True
                    continue
            start = self.pos
            word = self.word_parts()
            if self.pos == start:
                raise Unreadable(f"unexpected {text[start]!r}")
            word = array_word(self, word, Parser)  # `a=(x .env)`: its elements, as one value
            if pending_redirect is not None:
                pending_redirect.target = word
                if pending_redirect.op in ("<<", "<<-"):
                    strip = pending_redirect.op == "<<-"
                    heredoc = (pending_redirect, plain_text(word), strip, _quoted(word))
                    self._heredocs.append(heredoc)
                pending_redirect = None
                continue
            if case_patterns and len(word) == 1 and word[0] == Lit("esac", False):
                case_patterns = False  # `;; esac`: the end of the case, not a pattern
            elif case_patterns or skip_words:
                skip_words = max(0, skip_words - 1)
                continue
            if not current.words:
                plain = plain_text(word) if len(word) == 1 and isinstance(word[0], Lit) else None
                if plain in SEPARATOR_WORDS:
                    if plain in _GROUP_OPENERS:
                        self._groups.append(len(self.commands))
                        self._unsure.append(True)
                        self.functions.opened(len(self._groups))
                    elif plain in _GROUP_CLOSERS:
                        self._close_group(current, previous)
                    continue
                if plain in ("case", "for", "select"):
                    self._groups.append(len(self.commands))
                    self._unsure.append(True)
                    skip_words = self._skip_header(plain)
                    case_patterns = plain == "case"
                    continue
                if plain in ("coproc", "function", "time"):
                    self.functions.keyword(plain, text, self.pos)
                    if plain != "time":
                        skip_words = _coproc_name(text, self.pos) if plain == "coproc" else 1
                    continue
                if plain in ("[[", "(("):
                    skip_test(self, plain, Parser)
                    continue
            current.words.append(word)
            self._closed = None
        if closer is not None:
            raise Unreadable(f"missing {closer!r}")
        if pending_redirect is not None:
            raise Unreadable("redirection without a target")
        self._finish(current, previous)
        if self._heredocs:
            raise Unreadable("unterminated heredoc")

    def _finish(self, command: Command, previous: Command | None) -> None:
        if command.words or command.redirects:
            command.stdin = previous
            command.maybe |= any(self._unsure) or self._after or command.piped or bool(previous)
            self.commands.append(command)
            self.functions.call(command)
            if not command.words and self._closed is not None:
                group_input(command.redirects, self.commands[self._closed : -1])
                group_output(command.redirects, self.commands[self._closed : -1])
        self._closed = None

    def _close_group(self, current: Command, previous: Command | None) -> None:
        """A compound command ends (``}``, ``)``, ``done`` …): its redirections follow."""
        self._finish(current, previous)
        self._closed = self._groups.pop() if self._groups else None
        del self._unsure[-1:]
        self.functions.closed(len(self._groups) + 1, self._closed, self.commands)
        piped_group(self.commands[self._closed :] if self._closed is not None else [])

    def _skip_header(self, keyword: str) -> int:
        """Skip ``case WORD in`` / ``for NAME in WORDS;`` (the words, not the separator)."""
        text = self.text
        if keyword == "case":
            match = re.compile(r"[ \t]*\S+[ \t\n]+in\b").match(text, self.pos)
            if match:
                self.pos = match.end()
            return 0
        blank = _BLANK.match(text, self.pos)
        start = blank.end() if blank else self.pos
        if text.startswith("((", start):
            self.pos = self._matching(start + 2, "((", "))")
            return 0
        loop_header(self, Parser)  # `for f in .e*`: `f` set to the words, before the body
        return 0

    def _read_heredocs(self) -> None:
        text = self.text
        for redirect, delimiter, strip_tabs, _ in self._heredocs:
            lines: list[str] = []
            while True:
                if self.pos >= len(text):
                    raise Unreadable("unterminated heredoc")
                end = text.find("\n", self.pos)
                end = len(text) if end < 0 else end
                line = text[self.pos : end]
                self.pos = end + 1
                check = line.lstrip("\t") if strip_tabs else line
                if check == delimiter:
                    break
                lines.append(check)
            redirect.body = "\n".join(lines) + "\n"
        self._heredocs.clear()


def _ansi_end(text: str, pos: int) -> int:
    """Where the ``$'…'`` quote whose text starts at ``pos`` ends (its closing quote)."""
    while True:
        end = text.find("'", pos)
        if end < 0:
            raise Unreadable("unterminated $'…' quote")
        slashes = 0
        while text[end - 1 - slashes] == "\\" and end - 1 - slashes >= pos:
            slashes += 1
        if slashes % 2 == 0:
            return end
        pos = end + 1


def _coproc_name(text: str, at: int) -> int:
    """``coproc NAME { …; }``: the NAME is not a command."""
    return 1 if re.compile(r"[ \t]*[A-Za-z_]\w*[ \t]+[{(]").match(text, at) else 0


def _quoted(word: Word) -> bool:
    return any(isinstance(part, Lit) and part.quoted for part in word)


def parse(text: str, budget: Budget | None = None, depth: int = 0) -> list[Command]:
    """Every simple command of ``text`` (substitutions and compound bodies included)."""
    parser = Parser(text, budget or Budget(), depth)
    parser.parse()
    parser.functions.link(parser.commands)
    return parser.commands
