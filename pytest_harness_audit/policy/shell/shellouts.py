"""Shell commands program text runs: ``os.system("cp .env /tmp/x")`` in a Python file is the
shell command ``cp .env /tmp/x``, and is read as one.

A call of a known shell-out function (Python ``os.system``/``os.popen``/``subprocess.*``, C,
PHP, Ruby and Perl ``system``/``popen``/``shell_exec``/``passthru``/``proc_open``, Node
``child_process`` ``exec``/``execSync``/``spawn``/``execFile``, Go ``exec.Command``, Rust
``Command::new``, Ruby ``IO.popen``/``Open3``/``%x(…)``) whose arguments are string literals on
one line: one literal is a script (``sh -c`` text); several, or a list of them, are a
command's words (a ``popen`` mode, ``"r"``, is no word). Perl, Ruby and PHP syntax of their own
(backticks, ``qx{…}``, ``system q(…)``) is read by :mod:`.quoted_shellouts` when the language is
known: given, or named by the text's ``#!`` line; Node's and Python's functions under other
names (``const {execSync: x} = require("child_process")``) by :mod:`.aliased_calls`.

An argument that is a variable, or literals joined, is read as the value the text gives it
(:mod:`.code_values`: ``c = "rm -rf app"; os.system(c)``). One the text does not give (built at
run time, from the program's arguments or input) leaves the command not known: every literal of
the text that could be it is read as a command in its place (:func:`guessed_runs`), and when its
name is not known at all, inline code is unreadable (a warning), as a shell fed a script not in
the text is.
"""

from __future__ import annotations

import re
import shlex
from typing import Final, Protocol

import re2

from pytest_harness_audit.policy.shell.aliased_calls import node_calls, python_calls
from pytest_harness_audit.policy.shell.code_values import (
    Value,
    Values,
    assigned,
    expression,
    guesses,
)
from pytest_harness_audit.policy.shell.nodes import Unreadable
from pytest_harness_audit.policy.shell.quoted_shellouts import quoted_shell_outs, script_language

_CALL: Final = re2.compile(
    r"((?:\bos\.(?:system|popen|exec\w*|spawn\w*)|\bsubprocess\.\w+|\bcommands\.getoutput"
    r"|(?:^|[^.\w$])(?:system|popen|shell_exec|passthru|proc_open|pcntl_exec)"
    r"|\b(?:execSync|execFileSync|spawnSync|spawn|execFile)|\bchild_process\.exec"
    r"|\bexec\.Command(?:Context)?|\bCommand::new|\bIO\.popen|\bOpen3\.\w+|\bKernel\.system"
    r"|\bDeno\.(?:Command|run)|\bBun\.spawn(?:Sync)?|\bSystem\.(?:cmd|shell)|\bio\.popen"
    r"|\bRuntime\.getRuntime\(\)\.exec|\bnew\s+ProcessBuilder))"
    r"\s*\(([^()\n]*)\)"
    r"|%x\(([^()\n]*)\)"
)
#: Shell-outs in the syntax of languages without a call of the shapes above: Lisp's ``(system
#: "…")``, Emacs Lisp's ``(shell-command "…")``/``(call-process "rm" nil nil nil "-rf" "app")``,
#: Julia's command literal run (``run(`rm -rf app`)``), Groovy's ``"…".execute()`` and Scala's
#: ``"…".!`` (a list of words too: ``["rm", "app"].execute()``, ``Seq("rm", "app").!``).
_FORM_CALLS: Final = re2.compile(
    r"\((?:system|shell-command(?:-to-string)?|async-shell-command|call-process-shell-command"
    r"|call-process|process-file|process-lines|start-process|(?:uiop:|sb-ext:)?run-program)"
    r"\s+([^()\n]*)\)"
    r"|\b(?:run|read|readchomp|readlines|success|pipeline)\s*\(\s*`([^`\n]*)`"
    r"|(\"[^\"\n]*\"|'[^'\n]*'|\[[^\[\]\n]*\]|\b(?:Seq|List)\([^()\n]*\))"
    r"\s*(?:\.\s*execute\s*\(\s*\)|\.?\s*!!?(?:[^=\w]|$))"
)
_MODE: Final = re2.compile(r"[rwa]b?\+?|[rwa]\+?b|[rwa]t")
_LITERAL: Final = re2.compile(r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)\"""")
#: Most shell-outs read from one text.
_MAX_CALLS: Final = 64
#: What is left of arguments that are literals only (``"rm", ["-rf", "app"]``).
_PLAIN: Final = re.compile(r"[\s,\[\]]*")
_ARGS: Final = re.compile(r"\b(?:args|cmd)\s*:")
_KEYWORD: Final = re.compile(r"[A-Za-z_]\w*\s*[=:](?!=)")


class Runner(Protocol):
    """What reading guessed commands needs."""

    def script(self, text: str, args: list[str] | None = None) -> None:
        """Read ``text`` as a script run by a shell."""
        ...

    def unknown(self, why: str) -> None:
        """What the command runs cannot be known."""
        ...


def shell_outs(
    code: str, language: str | None = None, unresolved: list[bool] | None = None
) -> list[str]:
    """The shell commands ``code`` runs through shell-out calls with literal arguments, or
    arguments its variables give (:mod:`.code_values`; those of ``language``'s own syntax too:
    ``perl``, ``ruby`` or ``php``; Node's ``child_process`` under other names,
    :mod:`.aliased_calls`). A call whose command is not wholly known adds to ``unresolved``:
    ``True`` when the command's name is not known."""
    language = language or script_language(code)
    missing: list[bool] = [] if unresolved is None else unresolved
    quoted = language in ("perl", "ruby", "php")
    commands = quoted_shell_outs(code, language, missing) if language and quoted else []
    commands.extend(_form_calls(code))
    if "(" not in code:
        return commands
    kind = language or "generic"
    values: Values | None = None
    found = _CALL.findall(code)[:_MAX_CALLS]
    calls = [(f, a) for f, a, ruby in found if not ruby]
    commands.extend(ruby for _f, _a, ruby in found if ruby)
    aliased = node_calls(code)
    if aliased is None:
        missing.append(True)  # `child_process` loaded, its calls not found
    calls.extend(("execSync", arguments) for arguments in aliased or [])
    calls.extend(("run", arguments) for arguments in python_calls(code))
    for function, arguments in calls:
        words = [single or double for single, double in _LITERAL.findall(arguments)]
        words = [word.replace('\\"', '"').replace("\\'", "'") for word in words]
        if not _PLAIN.fullmatch(_LITERAL.sub("", arguments)):
            if values is None:
                values = assigned(code, kind) if "=" in code else {}
            resolved = _resolved(arguments, kind, values)
            if resolved is None or not resolved.known:
                first = resolved.words[0] if resolved is not None and resolved.words else ""
                missing.append(not quoted and (not first or first[:1] == "$"))
            if resolved is not None and resolved.words and resolved.words[0][:1] != "$":
                words = resolved.words
        if len(words) > 1 and function.endswith("popen") and _MODE.fullmatch(words[-1]):
            words.pop()  # `os.popen("cmd", "r")`: the open mode
        if len(words) == 1:
            commands.append(words[0])
        elif words:
            commands.append(" ".join(shlex.quote(word) for word in words))
    return commands


def _form_calls(code: str) -> list[str]:
    """The commands of :data:`_FORM_CALLS` given as literals (a value is not followed)."""
    if "(" not in code and "!" not in code:
        return []
    commands = []
    for lisp, julia, groovy in _FORM_CALLS.findall(code)[:_MAX_CALLS]:
        if julia:
            commands.append(julia)
            continue
        words = [single or double for single, double in _LITERAL.findall(lisp or groovy)]
        if len(words) == 1:
            commands.append(words[0])
        elif words:
            commands.append(" ".join(shlex.quote(word) for word in words))
    return commands


def _resolved(arguments: str, kind: str, values: Values) -> Value | None:
    """The words a call's arguments give (keyword arguments and option objects left out), the
    first one alone a script; ``None`` when the command is no value read here."""
    pieces = _pieces(arguments)
    words: list[str] = []
    known = True
    for position, piece in enumerate(pieces[:_MAX_CALLS]):
        if position and piece[:1] == "{" and _ARGS.search(piece):  # `{args: ["-rf", "app"]}`
            words.extend(single or double for single, double in _LITERAL.findall(piece))
            continue
        if position and (_KEYWORD.match(piece) or piece[:1] == "{"):
            continue  # `shell=True`, `{stdio: "inherit"}`
        found = expression(piece, 0, kind, values)
        if found is None or found[1] < len(piece.rstrip()):
            if not position:
                return None
            known = False
            continue
        words.extend(found[0].words)
        known = known and found[0].known
    return Value(words, len(words) > 1, known)


def _pieces(arguments: str) -> list[str]:
    """A call's arguments split at its top-level commas."""
    pieces: list[str] = []
    depth = 0
    start = 0
    quote = ""
    for index, char in enumerate(arguments):
        if quote:
            quote = "" if char == quote and arguments[index - 1 : index] != "\\" else quote
        elif char in "'\"`":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append(arguments[start:index].strip())
            start = index + 1
    pieces.append(arguments[start:].strip())
    return [piece for piece in pieces if piece]


def guessed_runs(code: str, name_unknown: bool, runner: Runner) -> None:
    """A command run through a value not known: the literals of ``code`` that could be it are
    read as commands (:func:`~.code_values.guesses`; one that is no shell text is no command),
    and a command whose name is not known at all makes the reading unreadable."""
    for guess in guesses(code):
        try:
            runner.script(guess)
        except Unreadable:
            continue
    if name_unknown:
        runner.unknown("program text runs a command built at run time")


__all__ = ["guessed_runs", "shell_outs"]
