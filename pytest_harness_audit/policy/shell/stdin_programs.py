"""Program text an interpreter reads on its standard input, read as inline code.

``echo "import shutil; shutil.rmtree('app')" | python3``, ``printf '…' | node``, ``python3 -
<<< '…'``: the interpreter runs the text it is given, as ``python3 -c TEXT`` runs its argument.
The reading already reads that text's files; it also records the command as ``NAME -c TEXT``
(``-e`` for the others), so the rules that judge inline code (a recursive deletion in it) see it
however it was handed over. A program piped in from a command whose output cannot be known
(``python3 gen.py | python3``) is not known, as a script piped into ``sh`` is not.
"""

from __future__ import annotations

from typing import Final

from pytest_harness_audit.policy.shell.context import Context

#: Interpreters (besides ``python*``) whose standard input is their program when given none.
STDIN_RUNNERS: Final = frozenset({"node", "nodejs", "bun", "deno", "perl", "ruby"})
_NOT_STDIN: Final = frozenset({"-c", "-e", "-m", "--eval", "-p", "--print", "-E", "-x"})


def stdin_program(name: str, args: list[str], ctx: Context) -> None:
    """Record ``name``'s program read from its standard input as ``name -c TEXT`` (module
    doc); nothing when it is given a program or a script, or its input is not known."""
    if any(a in _NOT_STDIN or (a[:1] != "-" and a != "-") for a in args):
        return  # a program in its words, a module, or a script file
    text = ctx.stdin_text
    if text:
        flag = "-c" if name.startswith("python") else "-e"
        ctx.reading.commands.append([name, flag, text])
    elif text is None and ctx.stdin_unknown:  # `python3 gen.py | python3`: what gen.py prints
        ctx.unknown(f"{name} runs a program piped in from another command")


__all__ = ["STDIN_RUNNERS", "stdin_program"]
