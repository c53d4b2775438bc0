"""Shell commands program text runs: ``os.system("cp .env /tmp/x")`` in a Python file is the
shell command ``cp .env /tmp/x``, and is read as one.

A call of a known shell-out function (Python ``os.system``/``os.popen``/``subprocess.*``, C,
PHP, Ruby and Perl ``system``/``popen``/``shell_exec``/``passthru``/``proc_open``, Node
``child_process`` ``exec``/``execSync``/``spawn``/``execFile``, Go ``exec.Command``, Rust
``Command::new``, Ruby ``IO.popen``/``Open3``/``%x(…)``) whose arguments are string literals on
one line: one literal is a script (``sh -c`` text); several, or a list of them, are a
command's words (a ``popen`` mode, ``"r"``, is no word). Arguments built at run time are not
known; the literals among them are read. Perl, Ruby and PHP syntax of their own (backticks,
``qx{…}``, ``system q(…)``) is read by :mod:`.quoted_shellouts` when the language is known: given,
or named by the text's ``#!`` line.
"""

from __future__ import annotations

import shlex

import re2

from pytest_harness_audit.policy.shell.quoted_shellouts import quoted_shell_outs, script_language

_CALL = re2.compile(
    r"((?:\bos\.(?:system|popen|exec\w*|spawn\w*)|\bsubprocess\.\w+|\bcommands\.getoutput"
    r"|(?:^|[^.\w$])(?:system|popen|shell_exec|passthru|proc_open|pcntl_exec)"
    r"|\b(?:execSync|execFileSync|spawnSync|spawn|execFile)|\bchild_process\.exec"
    r"|\bexec\.Command(?:Context)?|\bCommand::new|\bIO\.popen|\bOpen3\.\w+|\bKernel\.system))"
    r"\s*\(([^()\n]*)\)"
    r"|%x\(([^()\n]*)\)"
)
_MODE = re2.compile(r"[rwa]b?\+?|[rwa]\+?b|[rwa]t")
_LITERAL = re2.compile(r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)\"""")
#: Most shell-outs read from one text.
_MAX_CALLS = 64


def shell_outs(code: str, language: str | None = None) -> list[str]:
    """The shell commands ``code`` runs through shell-out calls with literal arguments (those of
    ``language``'s own syntax too: ``perl``, ``ruby`` or ``php``)."""
    language = language or script_language(code)
    commands = quoted_shell_outs(code, language) if language else []
    if "(" not in code:
        return commands
    for function, arguments, ruby in _CALL.findall(code)[:_MAX_CALLS]:
        if ruby:
            commands.append(ruby)
            continue
        words = [single or double for single, double in _LITERAL.findall(arguments)]
        words = [word.replace('\\"', '"').replace("\\'", "'") for word in words]
        if len(words) > 1 and function.endswith("popen") and _MODE.fullmatch(words[-1]):
            words.pop()  # `os.popen("cmd", "r")`: the open mode
        if len(words) == 1:
            commands.append(words[0])
        elif words:
            commands.append(" ".join(shlex.quote(word) for word in words))
    return commands


__all__ = ["shell_outs"]
